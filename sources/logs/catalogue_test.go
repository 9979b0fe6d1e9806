package logs

import (
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Example lines are the format strings of LOG-PATTERNS.md with their
// placeholders filled in, behind the prefixes each engine really prints.
var catalogueExamples = []struct {
	id     string
	line   string
	fields map[string]string // a subset that must be extracted
}{
	// ---- runtime and start-up failures (issue 27): the real lines of
	// testdata/real-lines.txt, where each was printed is cited there ----
	{"cuda_device_assert", "ERROR 01-10 21:49:05 engine.py:366] Error in model execution: CUDA error: device-side assert triggered", nil},
	{"vllm_worker_died", "ERROR 07-04 17:35:16 [multiproc_executor.py:140] Worker proc VllmWorker-1 died unexpectedly, shutting down executor.", map[string]string{"worker": "VllmWorker-1"}},
	{"hf_model_not_found", "OSError: mistral/garrulus is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'", map[string]string{"model": "mistral/garrulus"}},
	{"hf_offline", "huggingface_hub.utils._http.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/bigcode/starcoder: offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.", map[string]string{"url": "https://huggingface.co/api/models/bigcode/starcoder"}},
	{"hf_trust_remote_code", "ValueError: The repository for 'internlm-chat-7b-v1_1' contains custom code which must be executed to correctly load the model. You can inspect the repository content at https://hf.co/..../internlm-chat-7b-v1_1.", nil},
	{"cuda_no_kernel_image", "ERROR 07-28 15:07:22 [core.py:632] RuntimeError: CUDA error: no kernel image is available for execution on the device", nil},
	{"vllm_bf16_capability", "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.", map[string]string{"gpu": "Tesla T4", "cc": "7.5"}},
	{"vllm_lora_not_found", `(EngineCore_DP0 pid=1511501) ERROR 12-15 18:57:10 [core.py:918] ValueError: Loading lora ["table_qc failed: No adapter found for /data/home/zhizhehui/dev/train/table_ocr/Reward_model_train/output/qwen_lora_output/checkpoint-57"]`,
		map[string]string{"lora": "table_qc", "path": "/data/home/zhizhehui/dev/train/table_ocr/Reward_model_train/output/qwen_lora_output/checkpoint-57"}},
	{"vllm_lora_not_found", "ValueError: Loading lora 1748373774 failed: No adapter found for simon_lora_path", map[string]string{"lora": "1748373774", "path": "simon_lora_path"}},
	{"vllm_mm_limit", "ERROR 03-13 11:21:33 serving_chat.py:197] ValueError: At most 1 image(s) may be provided in one request.", map[string]string{"limit": "1", "modality": "image"}},
	{"vllm_mm_limit", "error: You set image=2 (or defaulted to 1) in `--limit-mm-per-prompt`, but passed 3 image items in the same prompt.", map[string]string{"limit2": "2", "modality2": "image", "passed": "3"}},
	{"vllm_fp8_marlin", "[marlin_utils_fp8.py:80] Your GPU does not have native support for FP8 computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. This may degrade performance for compute-heavy workloads.", nil},
	{"guided_decoding_error", "ValueError: Grammar error: Unknown format: uri", map[string]string{"reason": "Grammar error: Unknown format: uri"}},
	{"vllm_model_loading", "(EngineCore_DP0 pid=497) INFO 10-03 07:29:02 [gpu_model_runner.py:2392] Model loading took 27.5185 GiB and 305.873276 seconds", map[string]string{"gib": "27.5185"}},
	// vLLM since format_gib ("Model loading took %s GiB memory and %.6f seconds", vllm/v1/worker/gpu_model_runner.py).
	{"vllm_model_loading", "(EngineCore_DP0 pid=3790) INFO 11-22 04:50:10 [gpu_model_runner.py:2653] Model loading took 15.26 GiB memory and 4.012345 seconds", map[string]string{"gib": "15.26", "seconds": "4.012345"}},
	{"sglang_weights_loaded", "[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=3.64 GB, mem usage=18.82 GB.", map[string]string{"gib": "18.82", "avail_gb": "3.64"}},
	// SGLang since the elapsed= field (python/sglang/srt/model_executor/model_runner.py): the order is the same.
	{"sglang_weights_loaded", "[2026-01-10 10:00:01 TP0] Load weight end. elapsed=12.31 s, type=Qwen3ForCausalLM, avail mem=61.20 GB, mem usage=15.45 GB.", map[string]string{"gib": "15.45"}},
	{"llamacpp_model_buffer", "llm_load_tensors:      CUDA1 buffer size = 13989.53 MiB", map[string]string{"device": "CUDA1", "mib": "13989.53"}},
	// llama.cpp since "model buffer" (src/llama-model.cpp: "%s: %12s model buffer size = %8.2f MiB").
	{"llamacpp_model_buffer", "load_tensors:        CUDA0 model buffer size =  6378.40 MiB", map[string]string{"device": "CUDA0", "mib": "6378.40"}},
	{"llamacpp_draft_acceptance", "0.06.896.015 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)",
		map[string]string{"accepted": "167", "drafted": "259", "per_pos": "0.805, 0.632, 0.483"}},
	// Before ggml-org/llama.cpp#24536 (tools/server/server-context.cpp: "draft acceptance rate = %0.5f (%5d accepted / %5d generated)").
	{"llamacpp_draft_acceptance", "slot print_timing: id  0 | task 12 | draft acceptance rate = 0.57143 (   40 accepted /    70 generated)", map[string]string{"accepted": "40", "drafted": "70"}},
	// ---- lifecycle (vLLM lines as vllm/entrypoints/openai/api_server.py,
	// utils.py, default_loader.py and gpu_model_runner.py print them; uvicorn's
	// own; llama.cpp tools/server/server.cpp and server-context.cpp at
	// de3ff81; Ollama's slog server config line) ----
	{"vllm_start", "(APIServer pid=3712) INFO 11-22 04:50:01 [api_server.py:1885] vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}},
	// vLLM 0.6.0's V0 line as posted in vllm-project/vllm#8242 (2024-09-07), cut after max_num_seqs.
	{"vllm_args_v0", "INFO 09-07 13:36:33 api_server.py:460] args: Namespace(allow_credentials=False, allowed_headers=['*'], api_key=None, block_size=16, enable_chunked_prefill=None, enable_prefix_caching=True, gpu_memory_utilization=0.9, host=None, kv_cache_dtype='auto', max_model_len=None, max_num_batched_tokens=None, max_num_seqs=512)", map[string]string{"args": "allow_credentials=False, allowed_headers=['*'], api_key=None, block_size=16, enable_chunked_prefill=None, enable_prefix_caching=True, gpu_memory_utilization=0.9, host=None, kv_cache_dtype='auto', max_model_len=None, max_num_batched_tokens=None, max_num_seqs=512"}},
	{"vllm_args", "(APIServer pid=3712) INFO 11-22 04:50:01 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 32, 'enable_prefix_caching': False}", map[string]string{"args": "{'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 32, 'enable_prefix_caching': False}"}},
	{"vllm_weights_loaded", "(EngineCore_DP0 pid=3790) INFO 11-22 04:50:09 [default_loader.py:267] Loading weights took 3.21 seconds", map[string]string{"seconds": "3.21"}},
	{"vllm_graphs_captured", "(EngineCore_DP0 pid=3790) INFO 11-22 04:50:31 [gpu_model_runner.py:3480] Graph capturing finished in 6 secs, took 0.52 GiB", map[string]string{"seconds": "6"}},
	{"uvicorn_startup_complete", "(APIServer pid=3712) INFO:     Application startup complete.", nil},
	{"uvicorn_shutting_down", "(APIServer pid=3712) INFO:     Shutting down", nil},
	{"uvicorn_shutting_down", "INFO:     Shutting down", nil},
	{"uvicorn_shutdown_complete", "(APIServer pid=3712) INFO:     Application shutdown complete.", nil},
	{"llamacpp_loading_model", "srv    load_model: loading model '/models/tiny.gguf'", map[string]string{"model": "/models/tiny.gguf"}},
	{"llamacpp_exit", "srv    operator(): cleaning up before exit...", nil},
	// As b1-de3ff81 prints it on SIGTERM (SRV_INF's function name, then the message's own).
	{"llamacpp_exit", "0.02.309.633 I srv    operator(): operator(): cleaning up before exit...", nil},
	{"ollama_server_config", `time=2026-11-24T10:00:00.000Z level=INFO source=routes.go:1331 msg="server config" env="map[CUDA_VISIBLE_DEVICES: OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_NUM_PARALLEL:4 OLLAMA_ORIGINS:[http://localhost https://localhost]]"`, map[string]string{"args": "map[CUDA_VISIBLE_DEVICES: OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_NUM_PARALLEL:4 OLLAMA_ORIGINS:[http://localhost https://localhost]]"}},
	{"vllm_stats", "INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 456.7 tokens/s, Running: 12 reqs, Waiting: 3 reqs, Deferred: 1 reqs, Preemptions: 2, GPU KV cache usage: 87.5%, Prefix cache hit rate: 41.2%, Corrupted: 0 reqs, External prefix cache hit rate: 10.0%, MM cache hit rate: 0.0%",
		map[string]string{"engine": "000", "prompt_tps": "1234.5", "gen_tps": "456.7", "running": "12", "waiting": "3"}},
	{"vllm_stats", "(APIServer pid=123) INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 30.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%",
		map[string]string{"running": "1", "waiting": "0"}},
	{"vllm_stats", "INFO 08-14 12:00:01 [loggers.py:259] 4 Engines Aggregated: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 40 reqs, Waiting: 8 reqs, GPU KV cache usage: 50.0%, Prefix cache hit rate: 5.0%",
		map[string]string{"engines": "4", "running": "40"}},
	{"vllm_stats_v0", "INFO 01-10 12:00:01 metrics.py:455] Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: 64.3 tokens/s, Running: 7 reqs, Swapped: 1 reqs, Pending: 5 reqs, GPU KV cache usage: 91.2%, CPU KV cache usage: 0.0%.",
		map[string]string{"running": "7", "swapped": "1", "waiting": "5"}},
	{"vllm_stats_v0", "INFO 02-01 09:00:00 [loggers.py:80] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs ",
		map[string]string{"waiting2": "0"}},
	{"vllm_spec_decode", "INFO 08-14 12:00:01 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.31, Accepted throughput: 40.12 tokens/s, Drafted throughput: 90.00 tokens/s, Accepted: 401 tokens, Drafted: 900 tokens, Per-position acceptance rate: 0.700, 0.450, 0.300, Avg Draft acceptance rate: 44.6%",
		map[string]string{"mean_accept_len": "2.31", "accepted": "401", "drafted": "900"}},
	{"sglang_prefill", "[2026-08-22 10:00:00 TP0] Prefill batch, #new-seq: 2, #new-token: 1024, #cached-token: 512, token usage: 0.35, #running-req: 6, #queue-req: 3, #pending-token: 2048, cuda graph: False, input throughput (token/s): 8421.33",
		map[string]string{"new_seq": "2", "new_token": "1024", "cached_token": "512"}},
	{"sglang_decode", "[2026-08-22 10:00:01 DP0 TP0 EP0 PP0] Decode batch, #running-req: 32, #token: 45000, token usage: 0.62, cuda graph: True, gen throughput (token/s): 1843.21, #queue-req: 4",
		map[string]string{"running": "32", "gen_tps": "1843.21", "waiting": "4"}},
	{"sglang_decode", "[2026-08-22 10:00:01] Decode batch [1234], #running-req: 8, #full token: 9000, full token usage: 0.40, #swa token: 800, swa token usage: 0.10, accept len: 2.10, accept rate: 0.55, cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0, est. decode TFLOPS/s (per GPU): 12.00",
		map[string]string{"running": "8", "waiting": "0"}},
	{"llamacpp_timing", "slot print_timing: id  0 | task 12 | prompt eval time =     123.45 ms /    57 tokens (    2.17 ms per token,   461.74 tokens per second)",
		map[string]string{"what": "prompt eval", "ms": "123.45", "tokens": "57", "task": "12"}},
	{"llamacpp_timing", "slot print_timing: id  0 | task 12 |        eval time =    2100.00 ms /   128 tokens (   16.41 ms per token,    60.95 tokens per second)",
		map[string]string{"what": "eval", "tokens": "128"}},
	{"llamacpp_timing", "slot print_timing: id  0 | task 12 |       total time =    2223.45 ms /   185 tokens",
		map[string]string{"what": "total", "tokens": "185"}},
	// testdata/loglat/SOURCE.md: Ollama 0.1.x's embedded llama.cpp server, 2024-04-30, and ik_llama.cpp, 2025-09-02.
	{"llamacpp_timing_json", `{"function":"print_timings","level":"INFO","line":269,"msg":"prompt eval time     =    1442.30 ms /    18 tokens (   80.13 ms per token,    12.48 tokens per second)","n_prompt_tokens_processed":18,"n_tokens_second":12.480092519085876,"slot_id":0,"t_prompt_processing":1442.297,"t_token":80.12761111111111,"task_id":6,"tid":"140147531671424","timestamp":1714489668}`,
		map[string]string{"what": "prompt eval", "ms": "1442.30", "tokens": "18"}},
	{"llamacpp_timing_json", `{"tid":"125380885884928","timestamp":1756831192,"level":"INFO","function":"print_timings","line":835,"msg":"generation eval time =    1575.14 ms /    44 runs   (   35.80 ms per token,    27.93 tokens per second)","id_slot":0,"id_task":0,"t_token_generation":1575.143,"n_decoded":44,"t_token":35.79870454545455,"n_tokens_second":27.933971709235287}`,
		map[string]string{"what": "generation eval", "ms": "1575.14", "tokens": "44"}},
	{"llamacpp_timing_json", `{"tid":"125380885884928","timestamp":1756831192,"level":"INFO","function":"print_timings","line":846,"msg":"          total time =    9503.19 ms","id_slot":0,"id_task":0,"t_prompt_processing":7928.044,"t_token_generation":1575.143,"t_total":9503.187}`,
		map[string]string{"what": "total", "ms": "9503.19"}},
	// testdata/loglat/SOURCE.md: a real TGI line (2024-02-14).
	{"tgi_request", `2024-02-14T06:49:51.437631Z  INFO generate{parameters=GenerateParameters { best_of: None, do_sample: false, max_new_tokens: Some(14), seed: None, top_n_tokens: None } total_time="611.286748ms" validation_time="754.5µs" queue_time="127.337µs" inference_time="610.405028ms" time_per_token="43.600359ms" seed="None"}: text_generation_router::server: router/src/server.rs:299: Success`,
		map[string]string{"total": "611.286748ms"}},
	// --json-output, built from router/src/logging.rs (no real line found).
	{"tgi_request", `{"timestamp":"2026-01-08T10:00:00.000000Z","level":"INFO","message":"Success","target":"text_generation_router::server","filename":"router/src/server.rs","line_number":432,"span":{"inference_time":"1.2s","queue_time":"3.5ms","seed":"None","time_per_token":"12ms","total_time":"1.25s","validation_time":"1ms","name":"generate"}}`,
		map[string]string{"total": "1.25s"}},
	{"ollama_request", `[GIN] 2026/08/21 - 10:00:00 | 200 |  1.234567s |       127.0.0.1 | POST     "/api/chat"`,
		map[string]string{"status": "200", "latency": "1.234567s", "client": "127.0.0.1", "method": "POST", "path": "/api/chat"}},
	{"ollama_request", `[GIN] 2026/08/21 - 10:00:01 | 500 |      2m3.5s |      10.0.0.7 | POST     "/v1/chat/completions"`,
		map[string]string{"status": "500", "latency": "2m3.5s", "path": "/v1/chat/completions"}},
	{"torch_cuda_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
		map[string]string{"tried": "2.00 GiB", "gpu": "0", "total": "79.15 GiB", "free": "1.02 GiB"}},
	{"torch_cuda_oom", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; 22.80 GiB already allocated; 9.06 MiB free; 23.02 GiB reserved in total by PyTorch)",
		map[string]string{"tried": "20.00 MiB", "gpu_old": "0", "total_old": "23.65 GiB"}},
	// PyTorch writes sizes up to 1 KiB in bytes; a full GPU is "0 bytes".
	{"torch_cuda_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 0 bytes is free. Process 2172 has 23.63 GiB memory in use.",
		map[string]string{"tried": "20.00 MiB", "gpu": "0", "total": "23.64 GiB", "free": "0 bytes"}},
	{"cuda_error_oom", "RuntimeError: CUDA error: out of memory", nil},
	{"cuda_error_oom", "CUDA error: out of memory", nil},
	{"vllm_sampler_warmup_oom", "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
		map[string]string{"num_reqs": "1024"}},
	{"vllm_load_oom", "ValueError: Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory)", nil},
	// As vLLM really logs it: the original error is PyTorch's whole OOM message,
	// which torch_cuda_oom (earlier in the table) must leave to this row.
	{"vllm_load_oom", "(EngineCore pid=36704) ERROR 04-07 15:58:28 [gpu_model_runner.py:4818] Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 31.36 GiB of which 53.06 MiB is free. Including non-PyTorch memory, this process has 31.30 GiB memory in use.)", nil},
	{"vllm_no_kv_memory", "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.", nil},
	{"vllm_no_kv_memory", "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.", nil},
	{"vllm_max_len_kv", "ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.53 GiB). Based on the available memory, the estimated maximum model length is 78000. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
		map[string]string{"max_model_len": "131072", "needed_gib": "16.00", "available_gib": "9.53", "estimated_max_len": "78000"}},
	{"vllm_max_len_kv", "ValueError: To serve at least one request with the models's max seq len (262144), (11.75 GiB KV cache is needed, which is larger than the available KV cache memory (8.03 GiB).  Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
		map[string]string{"max_model_len": "262144", "available_gib": "8.03"}},
	{"vllm_max_len_kv_old", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
		map[string]string{"max_model_len": "32768", "kv_tokens": "20000"}},
	{"vllm_free_mem_startup", "ValueError: Free memory on device cuda:0 (10.5/79.2 GiB) on startup is less than desired GPU memory utilization (0.9, 71.3 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
		map[string]string{"device": "cuda:0", "free_gib": "10.5", "total_gib": "79.2", "util": "0.9", "wanted_gib": "71.3"}},
	// vLLM ≤ 0.11 names no device.
	{"vllm_free_mem_startup", "ValueError: Free memory on device (61.05/119.7 GiB) on startup is less than desired GPU memory utilization (0.52, 62.24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
		map[string]string{"free_gib": "61.05", "total_gib": "119.7", "util": "0.52", "wanted_gib": "62.24"}},
	{"vllm_v0_preemption", "WARNING 01-10 12:00:01 scheduler.py:1560] Sequence group 42 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51",
		map[string]string{"mode": "PreemptionMode.RECOMPUTE", "total": "51"}},
	{"sglang_kv_retract", "[2026-08-22 10:00:02 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_tokens_gained: 2048, #new_token_ratio: 0.4000 -> 0.5000",
		map[string]string{"retracted": "3", "tokens_gained": "2048"}},
	// Without #new_tokens_gained, as most SGLang releases print it.
	{"sglang_kv_retract", "[2026-07-22 01:22:40] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.1427 -> 0.3414",
		map[string]string{"retracted": "1"}},
	{"sglang_batch_oom", "RuntimeError: Prefill out of memory. Try to lower your batch size.", map[string]string{"phase": "Prefill"}},
	{"sglang_batch_oom", "RuntimeError: Decode out of memory. Try to lower your batch size.", map[string]string{"phase": "Decode"}},
	{"sglang_req_slots_oom", "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. req_to_token_pool.available_size()=0", nil},
	{"sglang_mem_fraction", "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: mem_fraction_static=0.5",
		map[string]string{"mem_fraction_static": "0.5"}},
	{"tgi_max_total_tokens", "Error: Warmup(Generation(\"Not enough memory to handle `max_total_tokens=16000`\"))",
		map[string]string{"max_total_tokens": "16000"}},
	{"tgi_prefill_tokens", "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
		map[string]string{"tokens": "4096"}},
	{"ollama_system_memory", "Error: model requires more system memory (12.3 GiB) than is available (8.0 GiB)",
		map[string]string{"needed": "12.3 GiB", "available": "8.0 GiB"}},
	{"ollama_system_memory", "Error: model requires more system memory than is currently available", nil},
	// The scheduler's summary quotes the runner's CUDA error: this row's, not
	// cuda_error_oom's (which comes first in the table).
	{"ollama_runner_oom", `time=2026-08-21T10:00:00.000Z level=INFO source=sched.go:511 msg="Load failed" model=/root/.ollama/models/blobs/sha256-6a0746a1ec1a error="llama-server reported out-of-memory during startup: CUDA error: out of memory"`, nil},
	{"ollama_runner_oom", `time=2026-08-21T10:00:00.000Z level=ERROR source=llama_server.go:321 msg="llama-server reported out-of-memory during startup: cudaMalloc failed: out of memory"`,
		map[string]string{"detail": `cudaMalloc failed: out of memory"`}},
	{"llamacpp_kv_alloc", "llama_init_from_model: failed to allocate buffer for kv cache", nil},
	{"ggml_buffer_alloc", "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4294967296",
		map[string]string{"func": "ggml_gallocr_reserve_n", "buffer": "CUDA0", "bytes": "4294967296"}},
	{"ggml_cuda_malloc", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory",
		map[string]string{"mib": "4096.00", "device": "0", "error": "out of memory"}},
	{"llamacpp_no_memory_slot", "decode: failed to find a memory slot for batch of size 512", map[string]string{"batch": "512"}},
	{"llamacpp_kv_retry", "srv  update_slots: failed to find free space in the KV cache, retrying with smaller batch size, off = 0, n_batch = 256, ret = 1",
		map[string]string{"n_batch": "256", "ret": "1"}},
	{"errno98_address_in_use", "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use",
		map[string]string{"host": "0.0.0.0", "port": "8000"}},
	{"errno98_address_in_use", "OSError: [Errno 98] Address already in use", nil},
	{"go_address_in_use", "Error: listen tcp 127.0.0.1:11434: bind: address already in use",
		map[string]string{"host": "127.0.0.1", "port": "11434"}},
	// trtllm-serve raises RuntimeError(f"Failed to bind socket to {host}:{port}: {e}")
	// around the OSError; errno98_address_in_use (earlier) leaves it to this row.
	{"trtllm_bind", "RuntimeError: Failed to bind socket to 0.0.0.0:8000: [Errno 98] Address already in use",
		map[string]string{"host": "0.0.0.0", "port": "8000", "error": "[Errno 98] Address already in use"}},
	{"llamacpp_bind", "srv    start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080",
		map[string]string{"host": "127.0.0.1", "port": "8080"}},
	{"cuda_illegal_access", "RuntimeError: CUDA error: an illegal memory access was encountered", map[string]string{"what": "memory access"}},
	{"cuda_illegal_access", "torch.AcceleratorError: CUDA error: an illegal instruction was encountered", map[string]string{"what": "instruction"}},
	{"vllm_engine_start_failed", "(EngineCore_DP0 pid=456) ERROR 08-14 12:00:01 [core.py:708] EngineCore failed to start.", nil},
	{"vllm_engine_start_failed", "(APIServer pid=123) ERROR 08-14 12:00:01 [api_server.py:1921] RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}", nil},
	{"vllm_engine_dead", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.", nil},
	{"sigill", "Illegal instruction (core dumped)", nil},
	{"sigill", "SIGILL: illegal instruction", nil},
	{"llamacpp_decode_failed", "srv  update_slots: Context size has been exceeded. off = 0, n_batch = 512, ret = 1",
		map[string]string{"n_batch": "512"}},
	{"llamacpp_invalid_batch", "srv  update_slots: Invalid input batch. off = 0, n_batch = 512, ret = -1", nil},
	{"llamacpp_compute_error", "srv        decode: Compute error. off = 0, n_batch = 512, ret = -3", map[string]string{"ret": "-3"}},
	// Older builds: "i = " for "off = ".
	{"llamacpp_compute_error", "srv  update_slots: Compute error. i = 0, n_batch = 512, ret = -3", map[string]string{"off": "0", "ret": "-3"}},
	{"sglang_health_failed", "[2026-08-22 10:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 10:00:00. last_heartbeat time: 09:59:40",
		map[string]string{"seconds": "20"}},
	{"trtllm_health_failed", "Health generate check failed with status code: 500", map[string]string{"code": "500"}},
	{"nccl_watchdog", "[rank1]:[E822 10:00:00.000000000 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered", nil},
	{"nccl_watchdog", "[rank0]:[E822 10:00:00 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.", nil},
	{"nccl_error", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error", nil},
	{"nccl_error", "RuntimeError: ncclUnhandledCudaError: Call to CUDA function failed.", nil},
	{"vllm_port_retry", "WARNING 08-14 12:00:01 [parallel.py:400] Address already in use. Retrying with a new port.", nil},
	{"vllm_port_retry", "INFO 08-14 12:00:01 [network_utils.py:88] Port 29500 is already in use, trying port 29501",
		map[string]string{"port": "29500", "next_port": "29501"}},
	{"sglang_port_in_use", "Port is already in use. dist_init_port=30005 port_base=30000", nil},
	{"hf_gated_unauthenticated", "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted. You must have access to it and be authenticated to access it. Please log in.",
		map[string]string{"repo": "meta-llama/Llama-3.1-8B-Instruct"}},
	{"hf_gated_forbidden", "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted and you are not in the authorized list. Visit https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct to ask for access.",
		map[string]string{"repo": "meta-llama/Llama-3.1-8B-Instruct"}},
	{"hf_gated", "huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-abc)", nil},
	{"hf_gated", "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/resolve/main/config.json.",
		map[string]string{"repo": "meta-llama/Llama-3.1-8B-Instruct"}},
	{"hf_gated", "OSError: You are trying to access a gated repo.", nil},
	{"vllm_stats_disabled", "WARNING 08-14 12:00:01 [async_llm.py:120] AsyncLLM created with api_server_count more than 1; disabling stats logging to avoid incomplete stats.", nil},
	{"vllm_kv_capacity", "INFO 08-14 12:00:01 [kv_cache_utils.py:1000] GPU KV cache size: 470,080 tokens", map[string]string{"kv_tokens": "470,080"}},
	{"vllm_kv_capacity", "(EngineCore_DP0 pid=456) INFO 08-14 12:00:01 [kv_cache_utils.py:1087] GPU KV cache size: 470,080 tokens, Maximum concurrency for 32,768 tokens per request: 14.35x",
		map[string]string{"kv_tokens": "470,080", "tokens": "32,768", "concurrency": "14.35"}},
	{"vllm_max_concurrency", "INFO 08-14 12:00:01 [kv_cache_utils.py:1004] Maximum concurrency for 32,768 tokens per request: 14.35x",
		map[string]string{"tokens": "32,768", "concurrency": "14.35"}},
	// Verbatim from vLLM's start-up (vllm/config/scheduler.py), V1 with and without the process prefix.
	{"vllm_chunked_prefill", "(APIServer pid=1795) INFO 10-20 06:48:01 [scheduler.py:205] Chunked prefill is enabled with max_num_batched_tokens=2048.",
		map[string]string{"max_num_batched_tokens": "2048"}},
	{"vllm_chunked_prefill", "INFO 03-03 19:26:05 [scheduler.py:205] Chunked prefill is enabled with max_num_batched_tokens=16384.",
		map[string]string{"max_num_batched_tokens": "16384"}},
	{"vllm_kv_memory", "INFO 08-14 12:00:01 [gpu_worker.py:300] Available KV cache memory: 57.38 GiB", map[string]string{"gib": "57.38"}},
	{"sglang_ready", "[2026-08-22 10:00:00] The server is fired up and ready to roll!", nil},
	{"sglang_deprecated_endpoint", "[2026-08-22 10:00:00] WARNING: Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please use '/model_info' instead.",
		map[string]string{"endpoint": "/get_model_info"}},
	{"llamacpp_prompt_too_long", "srv  send_error: task id = 7, error: request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it",
		map[string]string{"n_prompt": "9000", "n_ctx": "4096"}},
	{"llamacpp_context_shift_disabled", "slot update_slots: id  0 | task 5 | context shift is disabled", nil},
	{"llamacpp_context_shift", "slot update_slots: id  0 | task 5 | slot context shift, n_keep = 0, n_left = 4095, n_discard = 2047",
		map[string]string{"n_discard": "2047"}},
	{"llamacpp_ctx_capped", "srv  load_model: the slot context (131072) exceeds the training context of the model (32768) - capping",
		map[string]string{"n_ctx_slot": "131072", "n_ctx_train": "32768"}},
	{"llamacpp_slots", "srv          init: initializing, n_slots = 4, n_ctx_slot = 8192, kv_unified = 'true'",
		map[string]string{"n_slots": "4", "n_ctx_slot": "8192", "kv_unified": "true"}},
	// Real lines of llama-server b1-de3ff81, 2026-11-24: -c 2048 without -np (auto: 4 unified
	// slots), then -c 2048 -np 2 (split).
	{"llamacpp_slots", "0.00.017.785 I srv    load_model: initializing, n_slots = 4, n_ctx_slot = 2048, kv_unified = 'true'",
		map[string]string{"n_slots": "4", "n_ctx_slot": "2048", "kv_unified": "true"}},
	{"llamacpp_slots", "0.00.019.021 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 1024, kv_unified = 'false'",
		map[string]string{"n_slots": "2", "n_ctx_slot": "1024", "kv_unified": "false"}},
	// Builds before the unified cache print no kv_unified: the layout stays unknown.
	{"llamacpp_slots", "srv          init: initializing, n_slots = 4, n_ctx_slot = 2048",
		map[string]string{"n_slots": "4", "n_ctx_slot": "2048", "kv_unified": ""}},
	{"llamacpp_port_notice", "srv         main: NOTICE: server default port will be changed to :9931 in a future release", map[string]string{"port": "9931"}},
	{"llamacpp_model_loaded", "srv         main: model loaded", nil},
	{"llamacpp_listening", "srv         main: listening on http://127.0.0.1:8080", map[string]string{"address": "http://127.0.0.1:8080"}},
	{"llamacpp_loading", `{"error":{"message":"Loading model","type":"unavailable_error","code":503}}`, nil},
	{"tgi_warmup", "2026-01-08T10:00:00.000000Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:125: Warming up model", nil},
	{"tgi_batch_tokens", "2026-01-08T10:00:01.000000Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:137: Setting max batch total tokens to 187456", map[string]string{"tokens": "187456"}},
	{"tgi_batch_tokens", "2026-01-08T10:00:01.000000Z  WARN text_generation_router_v3: backends/v3/src/lib.rs:140: Inferred max batch total tokens: 187456", map[string]string{"tokens": "187456"}},
	{"tgi_connected", "2026-01-08T10:00:02.000000Z  INFO text_generation_router::server: router/src/server.rs:2400: Connected", nil},
	{"ollama_listening", `time=2026-08-21T10:00:00.000Z level=INFO source=routes.go:1500 msg="Listening on 127.0.0.1:11434 (version 0.33.0)"`,
		map[string]string{"address": "127.0.0.1:11434", "version": "0.33.0"}},
	{"ollama_default_context", `time=2026-08-21T10:00:00.000Z level=INFO source=routes.go:1600 msg="vram-based default context" total_vram="24.0 GiB" default_num_ctx=8192`,
		map[string]string{"total_vram": "24.0 GiB", "default_num_ctx": "8192"}},
	{"ollama_runner_started", `time=2026-08-21T10:00:05.000Z level=INFO source=llama_server.go:600 msg="llama-server started in 4.21 seconds"`, map[string]string{"seconds": "4.21"}},
	{"ollama_runner_started", `time=2025-05-01T10:00:05.000Z level=INFO source=server.go:619 msg="llama runner started in 2.01 seconds"`, map[string]string{"seconds": "2.01"}},
	{"python_traceback", "Traceback (most recent call last):", nil},
}

// Near misses: lines that look related but must not raise that id. Where
// one can, a row's near miss contains its needle, so that it gets past the
// prefilter and the regex (or Unless) is what keeps it out: see
// TestCatalogueNearMissesReachTheRegex. The others are real neighbouring
// lines (a sibling row's message, the line before or after the event) that
// the needle alone keeps out.
var catalogueNearMisses = []struct{ id, line string }{
	// ---- runtime and start-up failures (issue 27) ----
	{"cuda_device_assert", "no device-side assert triggered in this run"},
	{"vllm_worker_died", "Worker proc  died unexpectedly, shutting down executor."},
	{"hf_model_not_found", "OSError:  is not a local folder and is not a valid model identifier"},
	{"hf_offline", "We couldn't connect to 'https://huggingface.co' (retrying)"},
	{"hf_trust_remote_code", "the repository contains custom code which must be executed manually"},
	{"vllm_fp8_marlin", "this GPU does not have native support for FP8 computation (checked)"},
	{"guided_decoding_error", "regex lookaround is not supported by xgrammar"},
	{"vllm_model_loading", "Model loading took 3.2 seconds"},
	{"sglang_weights_loaded", "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16"},
	{"llamacpp_model_buffer", "llama_context:  CUDA_Host  output buffer size =     0.58 MiB"},
	{"llamacpp_draft_acceptance", "draft acceptance rate not printed for this request"},
	{"cuda_no_kernel_image", "a kernel image is available for execution on the device"},
	{"vllm_bf16_capability", "Float16 is only supported on GPUs with compute capability of at least 7.0"},
	{"vllm_lora_not_found", "No adapter found for the request, using the base model"},
	{"vllm_mm_limit", "Up to 4 image(s) may be provided in one request"},
	// ---- lifecycle ----
	{"vllm_start", "vLLM API server version unknown was not printed because --version was passed"},
	{"vllm_args", "non-default args: {} (none given)"},
	{"vllm_args_v0", "parsed args: Namespace(model='x') and more"},
	{"vllm_weights_loaded", "Loading weights took too long; retrying"},
	{"vllm_graphs_captured", "Graph capturing finished in error"},
	{"uvicorn_startup_complete", "Waiting for application startup."},
	{"uvicorn_shutting_down", "2026-11-24 TGI router: Shutting down shards"},
	{"uvicorn_shutdown_complete", "Waiting for application shutdown."},
	{"llamacpp_loading_model", "common_download: loading model 'x' from cache"},
	{"llamacpp_exit", "main: cleaning up before exit... (from another tool)"},
	{"ollama_server_config", `level=INFO msg="server config" env=none`},
	// ---- periodic stats ----
	{"vllm_stats", "INFO 01-10 12:00:01 metrics.py:455] Avg prompt throughput: 512.0 tokens/s, Avg generation throughput: 64.3 tokens/s, Running: 7 reqs, Swapped: 1 reqs, Pending: 5 reqs, GPU KV cache usage: 91.2%, CPU KV cache usage: 0.0%."},
	{"vllm_stats_v0", "Avg prompt throughput: 1.0 tokens/s"},
	{"vllm_spec_decode", "SpecDecoding metrics: disabled"},
	{"sglang_prefill", "Prefill batch is empty"},
	{"sglang_decode", "Decode batch, #running-req: 32, #token: 45000"},
	{"llamacpp_timing", "slot print_timing: id  0 | task 12 |    graphs reused =         10"},
	// llama.cpp's library-wide summary (llama_perf_context_print): the same
	// "prompt eval time = … ms / … tokens" shape, but no slot and no task.
	{"llamacpp_timing", "llama_perf_context_print: prompt eval time =     123.45 ms /    57 tokens (    2.17 ms per token,   461.74 tokens per second)"},
	{"llamacpp_timing_json", `{"function":"print_timings","level":"INFO","msg":"draft acceptance rate = 0.57"}`},
	// the metric's name in a line, not a request's timings
	{"tgi_request", `INFO text_generation_router: registered histogram tgi_request_mean_time_per_token_duration`},
	{"ollama_request", "[GIN-debug] POST   /api/chat                 --> github.com/ollama/ollama/server.(*Server).ChatHandler-fm (5 handlers)"},
	// A gateway in front of Ollama (one-api / new-api) logs gin lines of its
	// own: a request id after the time and an unquoted path.
	{"ollama_request", "[GIN] 2026/08/21 - 10:00:00 | 2026082110000057161938 |  200 |    1.234567s |       127.0.0.1 |    POST /v1/chat/completions"},

	// ---- memory ----
	{"torch_cuda_oom", "CUDA out of memory occurred when warming up sampler with 256 dummy requests."},
	// vLLM's weight-loading failure quotes PyTorch's message: vllm_load_oom's line.
	{"torch_cuda_oom", "(EngineCore pid=36704) ERROR 04-07 15:58:28 [gpu_model_runner.py:4818] Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. (original error: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 31.36 GiB of which 53.06 MiB is free. Including non-PyTorch memory, this process has 31.30 GiB memory in use.)"},
	{"cuda_error_oom", "CUDA error: an illegal memory access was encountered"},
	// Ollama's scheduler quoting its runner's error: ollama_runner_oom's line.
	{"cuda_error_oom", `time=2026-08-21T10:00:00.000Z level=INFO source=sched.go:511 msg="Load failed" model=/root/.ollama/models/blobs/sha256-6a0746a1ec1a error="llama-server reported out-of-memory during startup: CUDA error: out of memory"`},
	{"vllm_sampler_warmup_oom", "CUDA out of memory. Tried to allocate 2.00 GiB."},
	// The exception vLLM re-raises after logging the load failure.
	{"vllm_load_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 31.36 GiB of which 53.06 MiB is free."},
	// The profiling result that comes just before the error.
	{"vllm_no_kv_memory", "INFO 08-14 12:00:01 [gpu_worker.py:300] Available KV cache memory: -0.3 GiB"},
	{"vllm_max_len_kv", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."},
	{"vllm_max_len_kv_old", "ValueError: To serve at least one request with the model's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.53 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."},
	// vLLM's memory profile: what the utilisation allows, not a failed check.
	{"vllm_free_mem_startup", "INFO 01-10 12:00:01 worker.py:241] the current vLLM instance can use total_gpu_memory (79.15GiB) x gpu_memory_utilization (0.90) = 71.24GiB"},
	// V1 reports preemptions in its stats line, not with this warning.
	{"vllm_v0_preemption", "INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 812.4 tokens/s, Running: 64 reqs, Waiting: 12 reqs, Preemptions: 3, GPU KV cache usage: 99.1%, Prefix cache hit rate: 12.0%"},
	// A nearly full pool that still fits: no retraction.
	{"sglang_kv_retract", "[2026-08-22 10:00:01 TP0] Decode batch, #running-req: 32, #token: 99000, token usage: 0.99, cuda graph: True, gen throughput (token/s): 1843.21, #queue-req: 4"},
	{"sglang_batch_oom", "RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. req_to_token_pool.available_size()=0"},
	{"sglang_req_slots_oom", "RuntimeError: Decode out of memory. Try to lower your batch size."},
	{"sglang_mem_fraction", "Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"},
	{"tgi_max_total_tokens", "Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`"},
	{"tgi_prefill_tokens", "Not enough memory to handle `max_total_tokens=16000`"},
	// Ollama's warning just before the error.
	{"ollama_system_memory", `time=2026-03-25T09:45:06.861Z level=WARN source=server.go:1044 msg="model request too large for system" requested="5.3 GiB" available="4.8 GiB" total="10.0 GiB" free="4.8 GiB" swap="0 B"`},
	{"ollama_runner_oom", "llama-server started in 4.21 seconds"},
	{"llamacpp_kv_alloc", "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 4294967296"},
	{"ggml_buffer_alloc", "llama_init_from_model: failed to allocate buffer for kv cache"},
	// Ollama's summary names cudaMalloc but not the allocation: ollama_runner_oom's line.
	{"ggml_cuda_malloc", `time=2026-08-21T10:00:00.000Z level=INFO source=sched.go:511 msg="Load failed" model=/root/.ollama/models/blobs/sha256-6a0746a1ec1a error="llama-server reported out-of-memory during startup: cudaMalloc failed: out of memory"`},
	{"llamacpp_no_memory_slot", "srv  update_slots: failed to find free space in the KV cache, retrying with smaller batch size, off = 0, n_batch = 256, ret = 1"},
	{"llamacpp_kv_retry", "decode: failed to find a memory slot for batch of size 512"},

	// ---- distributed ----
	{"nccl_watchdog", "watchdog started"},
	{"nccl_error", "NCCL version 2.21.5+cuda12.4"},
	// vLLM reporting which NCCL it loaded.
	{"nccl_error", "(EngineCore_DP0 pid=456) INFO 08-14 12:00:01 [pynccl.py:113] vLLM is using nccl==2.27.3"},
	{"vllm_port_retry", "Error: listen tcp 127.0.0.1:11434: bind: address already in use"},
	{"sglang_port_in_use", "INFO 08-14 12:00:01 [network_utils.py:88] Port 29500 is already in use, trying port 29501"},

	// ---- availability ----
	{"errno98_address_in_use", "WARNING 08-14 12:00:01 [parallel.py:400] Address already in use. Retrying with a new port."},
	// trtllm-serve's wrapper, with host and port: trtllm_bind's line.
	{"errno98_address_in_use", "RuntimeError: Failed to bind socket to 0.0.0.0:8000: [Errno 98] Address already in use"},
	{"go_address_in_use", "OSError: [Errno 98] Address already in use"},
	{"trtllm_bind", "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use"},
	{"llamacpp_bind", "Error: listen tcp 127.0.0.1:11434: bind: address already in use"},
	{"cuda_illegal_access", "CUDA error: out of memory"},
	{"vllm_engine_dead", "(APIServer pid=123) ERROR 08-14 12:00:01 [async_llm.py:480] AsyncLLM output_handler failed."},
	{"vllm_engine_start_failed", "(EngineCore_DP0 pid=456) INFO 08-14 12:00:01 [core.py:75] Initializing a V1 LLM engine (v0.11.0) with config: model='Qwen/Qwen3-8B', speculative_config=None"},
	{"sigill", "torch.AcceleratorError: CUDA error: an illegal instruction was encountered"},
	// After the decode line, llama-server sends the error to every slot that
	// was processing: the same failure once per request, not a new one.
	{"llamacpp_decode_failed", "srv    send_error: task id = 7, error: Context size has been exceeded."},
	{"llamacpp_invalid_batch", "srv    send_error: task id = 7, error: Invalid input batch."},
	{"llamacpp_compute_error", "srv    send_error: task id = 7, error: Compute error."},
	// What the client saw: the access log line of the failed probe.
	{"sglang_health_failed", `[2026-08-22 10:00:20] INFO:     127.0.0.1:53420 - "GET /health_generate HTTP/1.1" 503 Service Unavailable`},
	{"trtllm_health_failed", "[2026-08-22 10:00:00] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: 10:00:00. last_heartbeat time: 09:59:40"},

	// ---- auth ----
	{"hf_gated_unauthenticated", "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted and you are not in the authorized list."},
	{"hf_gated_forbidden", "Access to model meta-llama/Llama-3.1-8B-Instruct is restricted. You must have access to it and be authenticated to access it."},
	// A missing (or private) repo is not a gated one.
	{"hf_gated", "huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-abc)"},

	// ---- config / startup facts ----
	{"vllm_chunked_prefill", "max_num_batched_tokens (2048) is smaller than max_model_len (4096). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences."},
	{"vllm_chunked_prefill", "Chunked prefill is enabled with max_num_batched_tokens=None."},
	{"vllm_stats_disabled", "AsyncLLM created with api_server_count 1"},
	// V0's capacity line counts blocks, not tokens.
	{"vllm_kv_capacity", "INFO 01-10 12:00:01 executor_base.py:110] # CUDA blocks: 29380, # CPU blocks: 2048"},
	{"vllm_max_concurrency", "INFO 08-14 12:00:01 [kv_cache_utils.py:1000] GPU KV cache size: 470,080 tokens"},
	{"vllm_kv_memory", "Available KV cache memory: unknown"},
	// Uvicorn is up before the warm-up request has passed.
	{"sglang_ready", "[2026-08-22 10:00:00] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"},
	// A deprecated command-line flag, not an endpoint a monitor polls.
	{"sglang_deprecated_endpoint", "ValueError: '--enable-overlap-schedule' is deprecated. It is enabled by default now. Please drop this argument."},
	{"llamacpp_prompt_too_long", "srv  load_model: the slot context (131072) exceeds the training context of the model (32768) - capping"},
	{"llamacpp_context_shift_disabled", "slot update_slots: id  0 | task 5 | slot context shift, n_keep = 0, n_left = 4095, n_discard = 2047"},
	{"llamacpp_context_shift", "slot update_slots: id  0 | task 5 | context shift is disabled"},
	{"llamacpp_ctx_capped", "srv  send_error: task id = 7, error: request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it"},
	// Older builds announce the slots without their context.
	{"llamacpp_slots", "srv    load_model: initializing slots, n_slots = 4"},
	{"llamacpp_port_notice", "srv         main: listening on http://127.0.0.1:8080"},
	{"llamacpp_model_loaded", "INFO 08-14 12:00:01 [gpu_model_runner.py:2000] Model loading took 15.2 GiB; model loaded"},
	{"llamacpp_listening", `msg="Listening on 127.0.0.1:11434 (version 0.33.0)"`},
	// Ollama's own (Go) runner, on its internal port.
	{"llamacpp_listening", `time=2025-01-10T10:00:00.000Z level=INFO source=runner.go:985 msg="Server listening on 127.0.0.1:45631"`},
	{"llamacpp_loading", "srv    load_model: loading model '/models/qwen2.5-7b-instruct-q4_k_m.gguf'"},
	// The launcher's side of the same warm-up.
	{"tgi_warmup", "2026-01-08T10:00:00.500000Z  INFO text_generation_launcher: Warmup (this can take several minutes)"},
	// TGI falling back to a default: the line carries no value.
	{"tgi_batch_tokens", "2026-01-08T10:00:01.000000Z  WARN text_generation_router_v3: backends/v3/src/lib.rs:130: Model does not support automatic max batch total tokens"},
	{"tgi_connected", "INFO 08-14 12:00:01 [client.py:10] Connected to 127.0.0.1"},
	{"ollama_listening", "srv         main: listening on http://127.0.0.1:8080"},
	// node_exporter, in the same journal: no "(version …)".
	{"ollama_listening", `time="2020-09-22T01:12:45Z" level=info msg="Listening on 127.0.0.1:9100" source="node_exporter.go:170"`},
	// The configured context, not the VRAM-based default.
	{"ollama_default_context", `time=2026-08-21T10:00:00.000Z level=INFO source=routes.go:1400 msg="server config" env="map[OLLAMA_CONTEXT_LENGTH:4096 OLLAMA_HOST:http://127.0.0.1:11434]"`},
	{"ollama_runner_started", `time=2026-08-21T10:00:01.000Z level=INFO source=server.go:600 msg="waiting for llama runner to start responding"`},
	{"python_traceback", "During handling of the above exception, another exception occurred:"},
}

func TestCatalogueExamples(t *testing.T) {
	m, err := NewMatcher(Catalogue)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range catalogueExamples {
		got, ok := m.Match(ex.line)
		if !ok {
			t.Errorf("%s: no match for %q", ex.id, ex.line)
			continue
		}
		if got.Pattern.ID != ex.id {
			t.Errorf("%s: matched %s instead, line %q", ex.id, got.Pattern.ID, ex.line)
			continue
		}
		for k, v := range ex.fields {
			if got.Fields[k] != v {
				t.Errorf("%s: field %s = %q, want %q (fields %v)", ex.id, k, got.Fields[k], v, got.Fields)
			}
		}
	}
}

// TestCatalogueNearMisses: a row's near misses are lines its own pattern
// must not match. Each runs against that row alone (needle, Unless and
// regex, as the matcher applies them): through the whole catalogue an
// earlier row could catch it first and hide a broken exclusion — sigill's
// near miss is a cuda_illegal_access line that only sigill's Unless keeps
// out of sigill.
func TestCatalogueNearMisses(t *testing.T) {
	for _, nm := range catalogueNearMisses {
		p, ok := findPattern(nm.id)
		if !ok {
			t.Errorf("near miss for unknown id %s: %q", nm.id, nm.line)
			continue
		}
		row, err := NewMatcher([]Pattern{p})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := row.Match(nm.line); ok {
			t.Errorf("%s: its own pattern matches its near miss %q (fields %v)", nm.id, nm.line, got.Fields)
		}
	}
}

// Every row needs examples and a near miss, and sensible metadata.
func TestCatalogueComplete(t *testing.T) {
	hasEx, hasNM := map[string]bool{}, map[string]bool{}
	for _, ex := range catalogueExamples {
		hasEx[ex.id] = true
	}
	for _, nm := range catalogueNearMisses {
		hasNM[nm.id] = true
	}
	cats := map[string]bool{"memory": true, "availability": true, "config": true, "auth": true, "distributed": true, "stats": true, "lifecycle": true}
	for _, p := range Catalogue {
		if !hasEx[p.ID] || !hasNM[p.ID] {
			t.Errorf("%s: needs an example (%v) and a near miss (%v)", p.ID, hasEx[p.ID], hasNM[p.ID])
		}
		if !cats[p.Category] {
			t.Errorf("%s: unknown category %q", p.ID, p.Category)
		}
		if p.Title == "" || p.Meaning == "" || p.Needle == "" {
			t.Errorf("%s: title, meaning and needle are required", p.ID)
		}
	}
	for id := range hasEx {
		if _, ok := findPattern(id); !ok {
			t.Errorf("example for unknown id %s", id)
		}
	}
}

// A needle that a matching line does not contain would hide the row.
func TestCatalogueNeedlesAreInMatches(t *testing.T) {
	for _, ex := range catalogueExamples {
		p, _ := findPattern(ex.id)
		found := false
		for _, n := range strings.Split(p.Needle, "|") {
			found = found || strings.Contains(ex.line, n)
		}
		if !found {
			t.Errorf("%s: needle %q not in example %q", ex.id, p.Needle, ex.line)
		}
	}
}

func TestMatchEvent(t *testing.T) {
	line := "OSError: [Errno 98] Address already in use"
	mt, ok := DefaultMatcher.Match(line)
	if !ok {
		t.Fatal("no match")
	}
	at := time.Date(2026, 8, 14, 12, 0, 1, 0, time.UTC)
	ev := mt.Event(at, "http://127.0.0.1:8000", line)
	if ev.Title != "HTTP port already in use" || ev.Severity != model.SevCrit || ev.Category != "availability" ||
		ev.Source != "log" || ev.Kind != "errno98_address_in_use" || ev.Line != line || !ev.Time.Equal(at) ||
		ev.Fields["hint"] == "" {
		t.Errorf("event %+v", ev)
	}
}

func findPattern(id string) (Pattern, bool) {
	for _, p := range Catalogue {
		if p.ID == id {
			return p, true
		}
	}
	return Pattern{}, false
}

// TestCatalogueNearMissesReachTheRegex: a near miss without its row's needle
// is dropped by the prefilter before the Unless rule or the regex is tried,
// so it cannot fail for a regex that matches too much. Each row needs a near
// miss that contains (one of) its needle(s) and is still not a match, except:
//   - a row whose regex is nothing but its needle(s), literally: the
//     prefilter is then the whole test, and this test checks it stays so (a
//     regex edited to match more than its needle fails here);
//   - a row in needleIsItsMessage: its needle is the message's own wording,
//     so every line an engine prints with it is a match and no honest near
//     miss can carry it. Such a row must have an example that checks its
//     fields: a regex that matched too much would extract none, and
//     TestCatalogueExamples would fail.
func TestCatalogueNearMissesReachTheRegex(t *testing.T) {
	reached := map[string]bool{}
	for _, nm := range catalogueNearMisses {
		p, ok := findPattern(nm.id)
		if !ok || !containsNeedle(nm.line, p.Needle) {
			continue // an unknown id is TestCatalogueNearMisses' to report
		}
		row, err := NewMatcher([]Pattern{p})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := row.Match(nm.line); ok {
			t.Errorf("%s: its own pattern matches its near miss %q", nm.id, nm.line)
			continue
		}
		reached[nm.id] = true
	}
	checksFields := map[string]bool{}
	for _, ex := range catalogueExamples {
		checksFields[ex.id] = checksFields[ex.id] || len(ex.fields) > 0
	}
	for id := range needleIsItsMessage {
		if _, ok := findPattern(id); !ok {
			t.Errorf("needleIsItsMessage names an unknown id %s", id)
		}
	}
	for _, p := range Catalogue {
		_, listed := needleIsItsMessage[p.ID]
		switch {
		case reached[p.ID]:
			if listed {
				t.Errorf("%s: a near miss carries its needle: take it out of needleIsItsMessage", p.ID)
			}
		case regexIsNeedle(p):
			if listed {
				t.Errorf("%s: its regex is its needle: take it out of needleIsItsMessage", p.ID)
			}
		case listed:
			if !checksFields[p.ID] {
				t.Errorf("%s: in needleIsItsMessage, but no example checks a field", p.ID)
			}
		default:
			t.Errorf("%s: no near miss contains its needle %q and is rejected by its own row, so none tests its regex", p.ID, p.Needle)
		}
	}
}

// needleIsItsMessage: rows whose needle no line carries except the message
// itself (the format string's fixed wording, in every version seen), so a
// near miss can only be a neighbouring line without the needle.
var needleIsItsMessage = map[string]string{
	"vllm_sampler_warmup_oom":  "vLLM's own sentence, always followed by the request count",
	"vllm_max_len_kv":          "vLLM's own sentence (model's / models's), always with both sizes",
	"vllm_max_len_kv_old":      "vLLM's own sentence, always with both lengths",
	"vllm_free_mem_startup":    "vLLM's own sentence; both its versions are examples",
	"vllm_v0_preemption":       "vLLM V0's own warning",
	"sglang_kv_retract":        "SGLang's own warning; both its versions are examples",
	"sglang_batch_oom":         "SGLang's allocator error, Prefill or Decode",
	"sglang_mem_fraction":      "SGLang's own sentence",
	"tgi_max_total_tokens":     "TGI's own error text",
	"tgi_prefill_tokens":       "TGI's own error text",
	"ollama_system_memory":     "Ollama's own error, in its two forms (both are examples)",
	"ollama_runner_oom":        "Ollama's own prefix; whatever follows is the runner's reason",
	"llamacpp_no_memory_slot":  "llama.cpp's own warning",
	"llamacpp_kv_retry":        "llama-server's own warning",
	"go_address_in_use":        "Go's bind error text: every line with it is a port that could not be bound",
	"trtllm_bind":              "trtllm-serve's own wrapper of the bind error",
	"llamacpp_bind":            "llama-server's own error",
	"cuda_illegal_access":      "the CUDA runtime's text for the two illegal-access errors",
	"sglang_health_failed":     "SGLang's own error",
	"trtllm_health_failed":     "TRT-LLM's own error",
	"hf_gated_unauthenticated": "the Hub's error text",
	"hf_gated_forbidden":       "the Hub's error text",
	"hf_gated":                 "huggingface_hub's exception name and messages",
	"vllm_kv_capacity":         "vLLM's own start-up line",
	"vllm_max_concurrency":     "vLLM's own start-up line",
	"llamacpp_prompt_too_long": "llama-server's own error",
	"llamacpp_context_shift":   "llama-server's own warning",
	"llamacpp_ctx_capped":      "llama-server's own warning",
	"llamacpp_slots":           "llama-server's own start-up line",
	"llamacpp_port_notice":     "llama-server's own notice",
	"ollama_default_context":   "Ollama's own start-up line",
	"ollama_runner_started":    "Ollama's own line, in its two versions (both are examples)",
}

func containsNeedle(line, needle string) bool {
	for _, n := range strings.Split(needle, "|") {
		if strings.Contains(line, n) {
			return true
		}
	}
	return false
}

// regexIsNeedle: the row's regex matches exactly its needle(s), literally.
func regexIsNeedle(p Pattern) bool {
	re, err := syntax.Parse(p.Regex, syntax.Perl)
	if err != nil {
		return false
	}
	lits, ok := literals(re.Simplify())
	if !ok {
		return false
	}
	needles := strings.Split(p.Needle, "|")
	slices.Sort(lits)
	slices.Sort(needles)
	return slices.Equal(slices.Compact(lits), slices.Compact(needles))
}

// literals lists the strings re matches when it matches only fixed strings
// (literals, concatenations and alternations of them).
func literals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpCharClass: // one character, e.g. factored out of an alternation
		if len(re.Rune) == 2 && re.Rune[0] == re.Rune[1] {
			return []string{string(re.Rune[0])}, true
		}
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			set, ok := literals(sub)
			if !ok {
				return nil, false
			}
			var next []string
			for _, a := range out {
				for _, b := range set {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			set, ok := literals(sub)
			if !ok {
				return nil, false
			}
			out = append(out, set...)
		}
		return out, true
	}
	return nil, false
}
