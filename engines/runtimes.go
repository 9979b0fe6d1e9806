package engines

import "github.com/llmtop/llmtop/model"

// Log lines that are no one engine's: the runtimes several engines are
// built on print them (PyTorch and CUDA, uvicorn, the Hugging Face Hub
// client and NCCL under vLLM, SGLang, TGI and TensorRT-LLM; ggml under
// llama.cpp and Ollama), or any process may (a Python traceback). They come
// after every engine's own lines in the catalogue: an engine's line is the
// more specific reading.

var (
	torchEngines = []model.Engine{model.VLLM, model.SGLang, model.TGI, model.TRTLLM}
	// uvicornEngines serve their OpenAI API from Python's uvicorn (TGI's
	// router is Rust: it prints none of uvicorn's lines).
	uvicornEngines = []model.Engine{model.VLLM, model.SGLang, model.TRTLLM}
	ggmlEngines    = []model.Engine{model.LlamaCpp, model.Ollama}
	anyEngine      = []model.Engine(nil)
)

// torchSize matches a PyTorch-formatted size such as "2.00 GiB" or "20.00
// MiB"; PyTorch writes sizes up to 1 KiB in bytes ("of which 0 bytes is
// free").
const torchSize = `[\d.]+ ?(?:[KMGT]?i?B|bytes)`

// torchLogs are printed by the PyTorch/CUDA engines.
var torchLogs = []LogLine{
	// vLLM's weight-loading OOM quotes PyTorch's message as its "original
	// error": that line is vllm_load_oom's (a different remedy), not this row's.
	{ID: "torch_cuda_oom", Finding: "cuda_oom", Engines: torchEngines, Sev: crit, Category: "memory", Needle: "CUDA out of memory. Tried to allocate",
		Unless:  "Failed to load model - not enough GPU memory",
		Regex:   `CUDA out of memory\. Tried to allocate (?P<tried>` + torchSize + `)(?:\. GPU (?P<gpu>\d+) has a total capacity of (?P<total>` + torchSize + `) of which (?P<free>` + torchSize + `) is free| \(GPU (?P<gpu_old>\d+); (?P<total_old>` + torchSize + `) total capacity)?`,
		Title:   "GPU out of memory: tried to allocate {tried}",
		Meaning: "PyTorch ran out of GPU memory: lower --gpu-memory-utilization / --mem-fraction-static, batch size or context, or add GPUs"},
	{ID: "nccl_watchdog", Finding: "nccl_failure", Engines: torchEngines, Sev: crit, Category: "distributed", Needle: "atchdog",
		Regex:   `(?P<what>Process group watchdog thread terminated with exception|Watchdog caught collective operation timeout)`,
		Title:   "NCCL: {what}",
		Meaning: "a collective across GPUs failed or hung (a peer died, NVLink/PCIe or NCCL trouble); the engine usually dies"},
	{ID: "nccl_error", Finding: "nccl_failure", Engines: torchEngines, Sev: crit, Category: "distributed", Needle: "NCCL error|nccl",
		Regex:   `(?P<what>NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclRemoteError)`,
		Title:   "NCCL: {what}",
		Meaning: "multi-GPU communication failed; check the GPUs, NVLink and NCCL_* settings"},
	{ID: "cuda_illegal_access", Finding: "cuda_illegal_access", Engines: torchEngines, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "CUDA error: an illegal ",
		Regex:   `CUDA error: an illegal (?P<what>memory access|instruction) was encountered`,
		Title:   "CUDA error: illegal {what}",
		Meaning: "a kernel crashed; the engine usually dies (vLLM: EngineDeadError, /health 503) and must be restarted"},
	{ID: "uvicorn_startup_complete", Engines: uvicornEngines, Sev: info, Category: "lifecycle", Phase: model.PhaseReady, Needle: "Application startup complete.",
		Regex: `Application startup complete\.`,
		Title: "API server ready", Meaning: "the HTTP server accepts requests"},
	{ID: "uvicorn_shutting_down", Engines: uvicornEngines, Sev: info, Category: "lifecycle", Phase: model.PhaseStopping, Needle: "Shutting down",
		Regex: `(?:^|INFO:\s+)Shutting down\s*$`,
		Title: "API server shutting down", Meaning: "a clean shutdown (SIGTERM, a deploy): a planned end of this run"},
	{ID: "uvicorn_shutdown_complete", Engines: uvicornEngines, Sev: info, Category: "lifecycle", Phase: model.PhaseStopped, Needle: "Application shutdown complete.",
		Regex: `Application shutdown complete\.`,
		Title: "API server shut down cleanly", Meaning: "the run ended as planned"},
	{ID: "cuda_device_assert", Finding: "cuda_device_assert", Engines: torchEngines, Sev: crit, Category: "availability", Needle: "device-side assert triggered",
		Regex:   `CUDA error: device-side assert triggered`,
		Title:   "CUDA error: device-side assert triggered",
		Meaning: "a kernel's own check failed (a token id or index out of range: often a tokenizer that does not match the model, or a malformed request); the engine usually dies. CUDA_LAUNCH_BLOCKING=1 names the kernel"},
	{ID: "hf_model_not_found", Finding: "startup_model_unavailable", Engines: torchEngines, Sev: crit, Category: "availability", Needle: "is not a local folder and is not a valid model identifier",
		Regex:   `(?P<model>\S+) is not a local folder and is not a valid model identifier`,
		Title:   "model {model} not found (no such local folder or Hub repository)",
		Meaning: "the model name is misspelt, the local path does not exist in the engine's container, or a private repository needs HF_TOKEN"},
	{ID: "hf_offline", Finding: "startup_model_unavailable", Engines: torchEngines, Sev: crit, Category: "availability", Needle: "We couldn't connect to 'https://huggingface.co'|offline mode is enabled",
		Regex:   `We couldn't connect to 'https://huggingface\.co' to load|Cannot reach (?P<url>\S+): offline mode is enabled`,
		Title:   "model download failed: Hugging Face Hub unreachable or offline",
		Meaning: "the engine must fetch files it does not have in its cache: give it network access, or download the model first and pass its local path (HF_HUB_OFFLINE=1 needs the whole repository in the cache)"},
	{ID: "hf_trust_remote_code", Finding: "startup_trust_remote_code", Engines: torchEngines, Sev: crit, Category: "config", Needle: "contains custom code which must be executed|requires you to execute the configuration file",
		Regex:   `contains custom code which must be executed to correctly load the model|requires you to execute the configuration file in that repo`,
		Title:   "model needs --trust-remote-code",
		Meaning: "the model's repository ships its own Python code: start the engine with --trust-remote-code after reading that code"},
	{ID: "cuda_no_kernel_image", Finding: "startup_unsupported_gpu", Engines: torchEngines, Sev: crit, Category: "config", Needle: "no kernel image is available for execution on the device",
		Regex:   `no kernel image is available for execution on the device`,
		Title:   "CUDA error: no kernel image for this GPU",
		Meaning: "the engine's CUDA kernels were not built for this GPU's compute capability (a new GPU on an old build, or an old GPU on a new one): install a build for this architecture"},
	// xgrammar under vLLM, SGLang and TensorRT-LLM refuses what it cannot enforce.
	{ID: "guided_decoding_error", Finding: "guided_decoding", Engines: torchEngines, Fix: guidedFix, Sev: warn, Category: "config", Needle: "not supported by xgrammar|Grammar error:|Failed to transform json schema into a grammar|Invalid grammar specification",
		Regex:   `(?P<reason>The provided JSON schema contains features not supported by xgrammar|Grammar error: .*|Failed to transform json schema into a grammar: .*|Invalid grammar specification.*)`,
		Title:   "guided decoding rejected a request's schema or grammar",
		Meaning: "a request's response_format / guided_json / grammar uses what the structured-output backend cannot compile: the request fails with 400; simplify the schema (formats, patterns, min/max keywords) or choose another structured-output backend"},
}

// ggmlLogs are printed by the engines built on ggml.
var ggmlLogs = []LogLine{
	// Before October 2024 the server logged JSON; Ollama's embedded server
	// and ik_llama.cpp print these too (testdata/loglat/SOURCE.md).
	{ID: "llamacpp_timing_json", Engines: ggmlEngines, Sev: info, Category: "stats", Needle: `"function":"print_timings"`,
		Regex:   `"msg":"\s*(?P<what>prompt eval|generation eval|total) time\s*=\s*(?P<ms>[\d.]+) ms(?: /\s*(?P<tokens>\d+) (?:tokens|runs))?`,
		Title:   "llama.cpp {what} time {ms} ms",
		Meaning: "llama.cpp's per-request timing (JSON log format), printed when a slot is released"},
	{ID: "llamacpp_kv_alloc", Finding: "ggml_oom", Engines: ggmlEngines, Sev: crit, Category: "memory", Needle: "failed to allocate buffer for kv cache",
		Regex:   `failed to allocate buffer for kv cache`,
		Title:   "llama.cpp: KV cache allocation failed",
		Meaning: "the context (-c) is too large for the memory: lower -c or offload fewer layers"},
	{ID: "ggml_buffer_alloc", Finding: "ggml_oom", Engines: ggmlEngines, Sev: crit, Category: "memory", Needle: "failed to allocate",
		Regex:   `(?P<func>\w+): failed to allocate (?P<buffer>\S+) buffer of size (?P<bytes>\d+)`,
		Title:   "ggml: failed to allocate {buffer} buffer of {bytes} bytes",
		Meaning: "compute buffer out of memory: lower -c, -b/-ub or -ngl"},
	{ID: "ggml_cuda_malloc", Finding: "ggml_oom", Engines: ggmlEngines, Sev: crit, Category: "memory", Needle: "Malloc failed",
		Regex:   `allocating (?P<mib>[\d.]+) MiB on device (?P<device>\d+): (?:cuda|hip)Malloc failed: (?P<error>.*)`,
		Title:   "ggml: allocating {mib} MiB on GPU {device} failed: {error}",
		Meaning: "VRAM exhausted: lower -ngl or -c, or use a smaller quantisation"},
	{ID: "sigill", Finding: "illegal_instruction", Engines: ggmlEngines, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "llegal instruction", Unless: "an illegal instruction was encountered",
		Regex:   `[Ii]llegal instruction`,
		Title:   "illegal instruction (SIGILL)",
		Meaning: "the binary uses CPU instructions this CPU lacks (AVX…): use a build for this CPU"},
	{ID: "llamacpp_model_buffer", Engines: ggmlEngines, Sev: info, Category: "memory", Needle: " buffer size = ",
		Regex: `load_tensors: +(?P<device>(?:CUDA|ROCm|Vulkan)\d+) (?:model )?buffer size = +(?P<mib>[\d.]+) MiB`,
		Title: "weights take {mib} MiB on {device}", Reports: mibOf(AmountWeights, "mib"),
		Meaning: "the model's weights on this GPU (a CPU buffer beside it means layers run on the CPU: raise -ngl)"},
}

// anyLogs may come from any engine (a CUDA error outside PyTorch, a
// port in use, the Hub refusing a gated model, a Python traceback).
var anyLogs = []LogLine{
	// Ollama quotes its runner's error ("llama-server reported out-of-memory
	// during startup: CUDA error: out of memory"): that is ollama_runner_oom's.
	{ID: "cuda_error_oom", Engines: anyEngine, Sev: crit, Category: "memory", Needle: "CUDA error: out of memory",
		Unless:  "llama-server reported out-of-memory during startup",
		Regex:   `CUDA error: out of memory`,
		Title:   "CUDA error: out of memory",
		Meaning: "a CUDA allocation outside PyTorch's allocator failed (NCCL, cuBLAS workspace, ggml): leave more headroom (lower memory utilisation, -ngl or context)"},
	// trtllm-serve wraps the OSError in its own message, with host and port:
	// trtllm_bind reads that line.
	{ID: "errno98_address_in_use", Finding: "startup_port_in_use", Engines: anyEngine, Sev: crit, Category: "availability", Needle: "[Errno 98]",
		Unless:  "Failed to bind socket to ",
		Regex:   `\[Errno 98\] (?:error while attempting to bind on address \(\(?'?(?P<host>[^',()]*)'?, (?P<port>\d+)\)?\): )?[Aa]ddress already in use`,
		Title:   "HTTP port {port} already in use",
		Meaning: "another process listens on the port: stop it or pass another --port"},
	{ID: "hf_gated_unauthenticated", Finding: "startup_gated_model", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "is restricted. You must have access to it and be authenticated",
		Regex:   `Access to model (?P<repo>\S+) is restricted\. You must have access to it and be authenticated`,
		Title:   "Hugging Face: {repo} is gated and no token was sent",
		Meaning: "set HF_TOKEN to a token that has been granted access"},
	{ID: "hf_gated_forbidden", Finding: "startup_gated_model", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "you are not in the authorized list",
		Regex:   `Access to model (?P<repo>\S+) is restricted and you are not in the authorized list`,
		Title:   "Hugging Face: this token has no access to {repo}",
		Meaning: "request access on the model page, or use a token of an account that has it"},
	{ID: "hf_gated", Finding: "startup_gated_model", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "GatedRepoError|gated repo",
		Regex:   `GatedRepoError|Cannot access gated repo for url https://huggingface\.co/(?P<repo>[^/\s]+/[^/\s]+)|You are trying to access a gated repo`,
		Title:   "Hugging Face: gated model {repo}",
		Meaning: "the model needs an HF_TOKEN with access"},
	{ID: "python_traceback", Engines: anyEngine, Sev: warn, Category: "availability", Needle: "Traceback (most recent call last):",
		Regex: `Traceback \(most recent call last\):`,
		Title: "Python traceback", Meaning: "an exception was raised; the lines after this say which"},
}

// guidedFix is what to do about a schema the structured-output backend
// refuses.
var guidedFix = []Change{{Change: "simplify the schema the line names (drop formats such as uri, patterns, min/max keywords the backend lacks), or serve with another structured-output backend",
	Why: "the backend refuses what it cannot enforce rather than generate against a weaker grammar", TradeOff: "a looser schema is checked by the client instead"}}
