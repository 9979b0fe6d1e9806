package logs

import "github.com/llmtop/llmtop/model"

// Pattern is one known log message. The table below is data: adding a
// message means adding a row (and its examples in catalogue_test.go).
type Pattern struct {
	ID      string
	Engines []model.Engine // who prints it; empty = any engine
	Sev     model.Severity
	// Category is memory, availability, config, auth, distributed or stats.
	Category string
	// Needle is a literal every matching line contains (or several,
	// separated by "|", one of which it contains): a cheap prefilter before
	// the regular expression runs.
	Needle string
	// Unless: a line containing this literal is not a match (RE2 has no
	// look-behind).
	Unless string
	// Regex finds the message anywhere in the line; its named groups are
	// the extracted fields (sizes, ports, estimates…).
	Regex string
	// Title is the event's headline; {field} is replaced by that field.
	Title string
	// Meaning says what it means and what to do; it travels as the
	// event's "hint" field.
	Meaning string
	// Phase, when set, is the lifecycle step the line announces (a start
	// banner, weights loaded, ready, shutting down, a crash: model.Phase*);
	// it travels as the event's "phase" field and moves the endpoint's
	// lifecycle and runs.
	Phase string
}

var (
	anyEngine = []model.Engine(nil)
	vllm      = []model.Engine{model.VLLM}
	sglang    = []model.Engine{model.SGLang}
	tgi       = []model.Engine{model.TGI}
	llamacpp  = []model.Engine{model.LlamaCpp}
	ollama    = []model.Engine{model.Ollama}
	trtllm    = []model.Engine{model.TRTLLM}
	ggml      = []model.Engine{model.LlamaCpp, model.Ollama}
	torch     = []model.Engine{model.VLLM, model.SGLang, model.TGI, model.TRTLLM}
)

const (
	info = model.SevInfo
	warn = model.SevWarn
	crit = model.SevCrit
)

// size matches a PyTorch-formatted size such as "2.00 GiB" or "20.00 MiB";
// PyTorch writes sizes up to 1 KiB in bytes ("of which 0 bytes is free").
const size = `[\d.]+ ?(?:[KMGT]?i?B|bytes)`

// Catalogue is every known message, most specific first: a line raises at
// most one event, the first row that matches. Sources: LOG-PATTERNS.md.
var Catalogue = []Pattern{
	// ---- periodic stats (also parsed into log-derived samples) ----
	{ID: "vllm_stats", Engines: vllm, Sev: info, Category: "stats", Needle: "Avg prompt throughput:",
		Regex:   `(?:Engine (?P<engine>\d+)|(?P<engines>\d+) Engines Aggregated): Avg prompt throughput: (?P<prompt_tps>[\d.]+) tokens/s, Avg generation throughput: (?P<gen_tps>[\d.]+) tokens/s, Running: (?P<running>\d+) reqs, Waiting: (?P<waiting>\d+) reqs`,
		Title:   "vLLM stats: {running} running, {waiting} waiting, {gen_tps} tok/s generated",
		Meaning: "vLLM's periodic stats line (every VLLM_LOG_STATS_INTERVAL s, INFO only while busy)"},
	{ID: "vllm_stats_v0", Engines: vllm, Sev: info, Category: "stats", Needle: "Avg prompt throughput:",
		Regex:   `Avg prompt throughput: (?P<prompt_tps>[\d.]+) tokens/s, Avg generation throughput: (?P<gen_tps>[\d.]+) tokens/s, Running: (?P<running>\d+) reqs, (?:Swapped: (?P<swapped>\d+) reqs, Pending: (?P<waiting>\d+) reqs|Waiting: (?P<waiting2>\d+) reqs)`,
		Title:   "vLLM stats: {running} running, {waiting}{waiting2} waiting, {gen_tps} tok/s generated",
		Meaning: "vLLM's periodic stats line (V0 engine or early V1 format)"},
	{ID: "vllm_spec_decode", Engines: vllm, Sev: info, Category: "stats", Needle: "SpecDecoding metrics:",
		Regex:   `SpecDecoding metrics: Mean acceptance length: (?P<mean_accept_len>[\d.]+), .*Accepted: (?P<accepted>\d+) tokens, Drafted: (?P<drafted>\d+) tokens`,
		Title:   "vLLM speculative decoding: mean acceptance length {mean_accept_len}",
		Meaning: "speculative decoding acceptance over the last stats interval"},
	{ID: "sglang_prefill", Engines: sglang, Sev: info, Category: "stats", Needle: "Prefill batch",
		Regex:   `Prefill batch(?: \[\d+\])?, #new-seq: (?P<new_seq>\d+), #new-token: (?P<new_token>\d+), #cached-token: (?P<cached_token>\d+), `,
		Title:   "SGLang prefill: {new_seq} new seqs, {new_token} new + {cached_token} cached tokens",
		Meaning: "SGLang's line for each prefill batch"},
	{ID: "sglang_decode", Engines: sglang, Sev: info, Category: "stats", Needle: "Decode batch",
		Regex:   `Decode batch(?: \[\d+\])?, #running-req: (?P<running>\d+), .*gen throughput \(token/s\): (?P<gen_tps>[\d.]+), #queue-req: (?P<waiting>\d+)`,
		Title:   "SGLang decode: {running} running, {waiting} queued, {gen_tps} tok/s",
		Meaning: "SGLang's decode line (every --decode-log-interval steps)"},
	{ID: "llamacpp_timing", Engines: llamacpp, Sev: info, Category: "stats", Needle: "time = ",
		Regex:   `id +(?P<slot>\d+) \| task (?P<task>\d+) \| +(?P<what>prompt eval|eval|total) time = +(?P<ms>[\d.]+) ms / +(?P<tokens>\d+) tokens`,
		Title:   "llama.cpp task {task}: {what} {tokens} tokens in {ms} ms",
		Meaning: "llama-server's per-request timing, printed when a slot is released"},
	// TGI records these span fields (Rust Duration Debug: "4.065504959s",
	// "440.038965ms", "94.981µs") just before its "Success" event, in text
	// (`generate{… total_time="…" …}: …: Success`) and --json-output
	// ("span":{"total_time":"…",…}) logs: router/src/server.rs.
	{ID: "tgi_request", Engines: tgi, Sev: info, Category: "stats", Needle: "time_per_token",
		Regex:   `(?:\btotal_time=|"total_time":)"(?P<total>[^"]+)"`,
		Title:   "TGI request done in {total}",
		Meaning: "TGI's per-request timings (total, validation, queue, inference, time per token), logged with its Success line"},
	// Before October 2024 the server logged JSON; Ollama's embedded server
	// and ik_llama.cpp print these too (testdata/loglat/SOURCE.md).
	{ID: "llamacpp_timing_json", Engines: ggml, Sev: info, Category: "stats", Needle: `"function":"print_timings"`,
		Regex:   `"msg":"\s*(?P<what>prompt eval|generation eval|total) time\s*=\s*(?P<ms>[\d.]+) ms(?: /\s*(?P<tokens>\d+) (?:tokens|runs))?`,
		Title:   "llama.cpp {what} time {ms} ms",
		Meaning: "llama.cpp's per-request timing (JSON log format), printed when a slot is released"},
	{ID: "ollama_request", Engines: ollama, Sev: info, Category: "stats", Needle: "[GIN] ",
		Regex:   `\[GIN\] \d{4}/\d\d/\d\d - \d\d:\d\d:\d\d \|\s*(?P<status>\d{3})\s*\|\s*(?P<latency>\S+)\s*\|\s*(?P<client>\S*)\s*\|\s*(?P<method>[A-Z]+)\s+"(?P<path>[^"]*)"`,
		Title:   "Ollama {method} {path}: {status} in {latency}",
		Meaning: "Ollama's (gin) access log line, one per HTTP request"},

	// ---- memory ----
	// vLLM's weight-loading OOM quotes PyTorch's message as its "original
	// error": that line is vllm_load_oom's (a different remedy), not this row's.
	{ID: "torch_cuda_oom", Engines: torch, Sev: crit, Category: "memory", Needle: "CUDA out of memory. Tried to allocate",
		Unless:  "Failed to load model - not enough GPU memory",
		Regex:   `CUDA out of memory\. Tried to allocate (?P<tried>` + size + `)(?:\. GPU (?P<gpu>\d+) has a total capacity of (?P<total>` + size + `) of which (?P<free>` + size + `) is free| \(GPU (?P<gpu_old>\d+); (?P<total_old>` + size + `) total capacity)?`,
		Title:   "GPU out of memory: tried to allocate {tried}",
		Meaning: "PyTorch ran out of GPU memory: lower --gpu-memory-utilization / --mem-fraction-static, batch size or context, or add GPUs"},
	// Ollama quotes its runner's error ("llama-server reported out-of-memory
	// during startup: CUDA error: out of memory"): that is ollama_runner_oom's.
	{ID: "cuda_error_oom", Engines: anyEngine, Sev: crit, Category: "memory", Needle: "CUDA error: out of memory",
		Unless:  "llama-server reported out-of-memory during startup",
		Regex:   `CUDA error: out of memory`,
		Title:   "CUDA error: out of memory",
		Meaning: "a CUDA allocation outside PyTorch's allocator failed (NCCL, cuBLAS workspace, ggml): leave more headroom (lower memory utilisation, -ngl or context)"},
	{ID: "vllm_sampler_warmup_oom", Engines: vllm, Sev: crit, Category: "memory", Needle: "CUDA out of memory occurred when warming up sampler",
		Regex:   `CUDA out of memory occurred when warming up sampler with (?P<num_reqs>\d+) dummy requests`,
		Title:   "vLLM OOM warming up the sampler with {num_reqs} requests",
		Meaning: "lower --max-num-seqs or --gpu-memory-utilization"},
	{ID: "vllm_load_oom", Engines: vllm, Sev: crit, Category: "memory", Needle: "Failed to load model - not enough GPU memory",
		Regex:   `Failed to load model - not enough GPU memory`,
		Title:   "vLLM: not enough GPU memory to load the weights",
		Meaning: "lower --gpu-memory-utilization to free memory for weights, raise --tensor-parallel-size, or quantize"},
	{ID: "vllm_no_kv_memory", Engines: vllm, Sev: crit, Category: "memory", Needle: "No available memory for the cache blocks",
		Regex:   `No available memory for the cache blocks`,
		Title:   "vLLM: no memory left for the KV cache",
		Meaning: "weights and activations used the whole budget: raise --gpu-memory-utilization"},
	{ID: "vllm_max_len_kv", Engines: vllm, Sev: crit, Category: "config", Needle: "To serve at least one request with the model",
		Regex:   `max seq len \((?P<max_model_len>\d+)\), \(?(?P<needed_gib>[\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \((?P<available_gib>[\d.]+) GiB\)\.(?: (?:Based on the available memory, the estimated|Estimated) maximum model length is (?P<estimated_max_len>\d+)\.)?`,
		Title:   "vLLM: max model len {max_model_len} needs {needed_gib} GiB KV cache, {available_gib} GiB available",
		Meaning: "lower --max-model-len (vLLM's estimate of what fits is in estimated_max_len) or raise --gpu-memory-utilization"},
	{ID: "vllm_max_len_kv_old", Engines: vllm, Sev: crit, Category: "config", Needle: "is larger than the maximum number of tokens that can be stored in KV cache",
		Regex:   `The model's max seq len \((?P<max_model_len>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((?P<kv_tokens>\d+)\)`,
		Title:   "vLLM: max model len {max_model_len} exceeds KV cache capacity {kv_tokens} tokens",
		Meaning: "lower --max-model-len to at most kv_tokens or raise --gpu-memory-utilization"},
	{ID: "vllm_free_mem_startup", Engines: vllm, Sev: crit, Category: "memory", Needle: "on startup is less than desired GPU memory utilization",
		// vLLM ≤ 0.11 names no device: "Free memory on device (61.05/119.7 GiB) on startup…".
		Regex:   `Free memory on device (?:(?P<device>\S+) )?\((?P<free_gib>[\d.]+)/(?P<total_gib>[\d.]+) GiB\) on startup is less than desired GPU memory utilization \((?P<util>[\d.]+), (?P<wanted_gib>[\d.]+) GiB\)`,
		Title:   "vLLM: {device} has only {free_gib} of {total_gib} GiB free, wanted {wanted_gib} GiB",
		Meaning: "another process holds GPU memory: stop it or lower --gpu-memory-utilization"},
	{ID: "vllm_v0_preemption", Engines: vllm, Sev: warn, Category: "memory", Needle: "because there is not enough KV cache space",
		Regex:   `Sequence group (?P<seq_group>\S+) is preempted by (?P<mode>\S+) mode because there is not enough KV cache space\..*total_num_cumulative_preemption=(?P<total>\d+)`,
		Title:   "vLLM preempted requests: KV cache full ({total} so far)",
		Meaning: "KV cache pressure: raise --gpu-memory-utilization or --tensor-parallel-size, or lower --max-num-seqs"},
	{ID: "sglang_kv_retract", Engines: sglang, Sev: warn, Category: "memory", Needle: "KV cache pool is full. Retract requests.",
		// #new_tokens_gained is recent; most SGLang releases go straight on to #new_token_ratio.
		Regex:   `KV cache pool is full\. Retract requests\. #retracted_reqs: (?P<retracted>\d+)(?:, #new_tokens_gained: (?P<tokens_gained>\d+))?`,
		Title:   "SGLang retracted {retracted} requests: KV cache pool full",
		Meaning: "decode ran out of KV cache (SGLang's preemption): raise --mem-fraction-static or lower --max-running-requests"},
	{ID: "sglang_batch_oom", Engines: sglang, Sev: crit, Category: "memory", Needle: " out of memory. Try to lower your batch size.",
		Regex:   `(?P<phase>Prefill|Decode) out of memory\. Try to lower your batch size\.`,
		Title:   "SGLang {phase} out of token memory",
		Meaning: "the token pool could not hold the batch: lower --max-running-requests / --chunked-prefill-size"},
	{ID: "sglang_req_slots_oom", Engines: sglang, Sev: crit, Category: "memory", Needle: "alloc_req_slots runs out of memory",
		Regex:   `alloc_req_slots runs out of memory`,
		Title:   "SGLang out of request slots",
		Meaning: "set a smaller --max-running-requests"},
	{ID: "sglang_mem_fraction", Engines: sglang, Sev: crit, Category: "memory", Needle: "Not enough memory. Please try to increase --mem-fraction-static",
		Regex:   `Not enough memory\. Please try to increase --mem-fraction-static\.(?: Current value: mem_fraction_static=(?P<mem_fraction_static>[\d.]+))?`,
		Title:   "SGLang: KV pool would be empty",
		Meaning: "raise --mem-fraction-static"},
	{ID: "tgi_max_total_tokens", Engines: tgi, Sev: crit, Category: "memory", Needle: "Not enough memory to handle `max_total_tokens=",
		Regex:   "Not enough memory to handle `max_total_tokens=(?P<max_total_tokens>\\d+)`",
		Title:   "TGI: not enough memory for max_total_tokens={max_total_tokens}",
		Meaning: "lower --max-total-tokens / --max-batch-total-tokens"},
	{ID: "tgi_prefill_tokens", Engines: tgi, Sev: crit, Category: "memory", Needle: "prefill tokens. You need to decrease",
		Regex:   `Not enough memory to handle (?P<tokens>\d+) prefill tokens\. You need to decrease .?--max-batch-prefill-tokens`,
		Title:   "TGI: OOM warming up {tokens} prefill tokens",
		Meaning: "lower --max-batch-prefill-tokens"},
	{ID: "ollama_system_memory", Engines: ollama, Sev: crit, Category: "memory", Needle: "model requires more system memory",
		Regex:   `model requires more system memory(?: \((?P<needed>[^)]+)\) than is available \((?P<available>[^)]+)\)| than is currently available)`,
		Title:   "Ollama: not enough system memory for the model",
		Meaning: "host RAM is short (Ollama ≤ v0.2x): free RAM or pick a smaller model"},
	{ID: "ollama_runner_oom", Engines: ollama, Sev: crit, Category: "memory", Needle: "llama-server reported out-of-memory during startup",
		Regex:   `llama-server reported out-of-memory during startup: (?P<detail>.*)`,
		Title:   "Ollama: model runner out of memory at start",
		Meaning: "lower num_ctx / num_gpu or pick a smaller quantisation"},
	{ID: "llamacpp_kv_alloc", Engines: ggml, Sev: crit, Category: "memory", Needle: "failed to allocate buffer for kv cache",
		Regex:   `failed to allocate buffer for kv cache`,
		Title:   "llama.cpp: KV cache allocation failed",
		Meaning: "the context (-c) is too large for the memory: lower -c or offload fewer layers"},
	{ID: "ggml_buffer_alloc", Engines: ggml, Sev: crit, Category: "memory", Needle: "failed to allocate",
		Regex:   `(?P<func>\w+): failed to allocate (?P<buffer>\S+) buffer of size (?P<bytes>\d+)`,
		Title:   "ggml: failed to allocate {buffer} buffer of {bytes} bytes",
		Meaning: "compute buffer out of memory: lower -c, -b/-ub or -ngl"},
	{ID: "ggml_cuda_malloc", Engines: ggml, Sev: crit, Category: "memory", Needle: "Malloc failed",
		Regex:   `allocating (?P<mib>[\d.]+) MiB on device (?P<device>\d+): (?:cuda|hip)Malloc failed: (?P<error>.*)`,
		Title:   "ggml: allocating {mib} MiB on GPU {device} failed: {error}",
		Meaning: "VRAM exhausted: lower -ngl or -c, or use a smaller quantisation"},
	{ID: "llamacpp_no_memory_slot", Engines: llamacpp, Sev: warn, Category: "memory", Needle: "failed to find a memory slot for batch",
		Regex:   `failed to find a memory slot for batch of size (?P<batch>\d+)`,
		Title:   "llama.cpp: KV cache full for a batch of {batch}",
		Meaning: "the KV cache is full; the server retries with a smaller batch"},
	{ID: "llamacpp_kv_retry", Engines: llamacpp, Sev: warn, Category: "memory", Needle: "failed to find free space in the KV cache",
		Regex:   `failed to find free space in the KV cache, retrying with smaller batch size, off = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp: KV cache full, retrying with batch {n_batch}",
		Meaning: "KV pressure: raise -c or lower -np"},

	// ---- distributed ----
	{ID: "nccl_watchdog", Engines: torch, Sev: crit, Category: "distributed", Needle: "atchdog",
		Regex:   `(?P<what>Process group watchdog thread terminated with exception|Watchdog caught collective operation timeout)`,
		Title:   "NCCL: {what}",
		Meaning: "a collective across GPUs failed or hung (a peer died, NVLink/PCIe or NCCL trouble); the engine usually dies"},
	{ID: "nccl_error", Engines: torch, Sev: crit, Category: "distributed", Needle: "NCCL error|nccl",
		Regex:   `(?P<what>NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclRemoteError)`,
		Title:   "NCCL: {what}",
		Meaning: "multi-GPU communication failed; check the GPUs, NVLink and NCCL_* settings"},
	{ID: "vllm_port_retry", Engines: vllm, Sev: warn, Category: "distributed", Needle: "already in use",
		Regex:   `Address already in use\. Retrying with a new port|Port (?P<port>\d+) is already in use, trying port (?P<next_port>\d+)`,
		Title:   "vLLM internal port busy, retrying",
		Meaning: "an internal distributed port collided (not the HTTP port); harmless unless it keeps failing"},
	{ID: "sglang_port_in_use", Engines: sglang, Sev: warn, Category: "distributed", Needle: "Port is already in use.",
		Regex:   `Port is already in use\.`,
		Title:   "SGLang internal port busy",
		Meaning: "an internal port (dist init / port base) collided: pass another --port or --dist-init-addr"},

	// ---- availability ----
	// trtllm-serve wraps the OSError in its own message, with host and port:
	// trtllm_bind reads that line.
	{ID: "errno98_address_in_use", Engines: anyEngine, Sev: crit, Category: "availability", Needle: "[Errno 98]",
		Unless:  "Failed to bind socket to ",
		Regex:   `\[Errno 98\] (?:error while attempting to bind on address \(\(?'?(?P<host>[^',()]*)'?, (?P<port>\d+)\)?\): )?[Aa]ddress already in use`,
		Title:   "HTTP port {port} already in use",
		Meaning: "another process listens on the port: stop it or pass another --port"},
	{ID: "go_address_in_use", Engines: ollama, Sev: crit, Category: "availability", Needle: "bind: address already in use",
		Regex:   `listen tcp (?P<host>\S*):(?P<port>\d+): bind: address already in use`,
		Title:   "port {port} already in use",
		Meaning: "another process (often another ollama serve) holds the port: stop it or set OLLAMA_HOST"},
	{ID: "trtllm_bind", Engines: trtllm, Sev: crit, Category: "availability", Needle: "Failed to bind socket to ",
		Regex:   `Failed to bind socket to (?P<host>\S+):(?P<port>\d+): (?P<error>.*)`,
		Title:   "trtllm-serve could not bind port {port}",
		Meaning: "the HTTP port is busy: stop the other process or pass another --port"},
	{ID: "llamacpp_bind", Engines: llamacpp, Sev: crit, Category: "availability", Needle: "couldn't bind HTTP server socket",
		Regex:   `couldn't bind HTTP server socket, hostname: (?P<host>\S+), port: (?P<port>\d+)`,
		Title:   "llama-server could not bind port {port}",
		Meaning: "the HTTP port is busy: stop the other process or pass another --port"},
	{ID: "cuda_illegal_access", Engines: torch, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "CUDA error: an illegal ",
		Regex:   `CUDA error: an illegal (?P<what>memory access|instruction) was encountered`,
		Title:   "CUDA error: illegal {what}",
		Meaning: "a kernel crashed; the engine usually dies (vLLM: EngineDeadError, /health 503) and must be restarted"},
	{ID: "vllm_engine_start_failed", Engines: vllm, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "EngineCore failed to start.|Engine core initialization failed.",
		Regex:   `EngineCore failed to start\.|Engine core initialization failed\.`,
		Title:   "vLLM engine failed to start",
		Meaning: "the engine core died during start-up: the error lines around this one say why"},
	{ID: "vllm_engine_dead", Engines: vllm, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "EngineDeadError",
		Regex:   `EngineDeadError`,
		Title:   "vLLM engine core died",
		Meaning: "the engine process failed (see the error before this line); /health returns 503 until restarted"},
	{ID: "sigill", Engines: ggml, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "llegal instruction", Unless: "an illegal instruction was encountered",
		Regex:   `[Ii]llegal instruction`,
		Title:   "illegal instruction (SIGILL)",
		Meaning: "the binary uses CPU instructions this CPU lacks (AVX…): use a build for this CPU"},
	{ID: "llamacpp_decode_failed", Engines: llamacpp, Sev: crit, Category: "availability", Needle: "Context size has been exceeded.",
		// Older builds print "i = " where current ones print "off = ".
		Regex:   `Context size has been exceeded\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: context size exceeded",
		Meaning: "every processing slot gets this error: raise -c or lower -np"},
	{ID: "llamacpp_invalid_batch", Engines: llamacpp, Sev: crit, Category: "availability", Needle: "Invalid input batch.",
		// Only the decode line, which carries off/n_batch/ret: the error then
		// sent to each processing slot ("send_error: task id = 7, error:
		// Invalid input batch.") is the same failure again.
		Regex:   `Invalid input batch\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: invalid input batch",
		Meaning: "every processing slot gets this error; see the lines before it"},
	{ID: "llamacpp_compute_error", Engines: llamacpp, Sev: crit, Category: "availability", Needle: "Compute error.",
		// As llamacpp_invalid_batch: the decode line, not each slot's send_error.
		Regex:   `Compute error\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: compute error",
		Meaning: "the backend failed to compute the batch (often a GPU fault); every processing slot gets this error"},
	{ID: "sglang_health_failed", Engines: sglang, Sev: crit, Category: "availability", Needle: "Health check failed. Server couldn't get a response from detokenizer",
		Regex:   `Health check failed\. Server couldn't get a response from detokenizer for last (?P<seconds>\d+) seconds`,
		Title:   "SGLang health check failed: no detokenizer response for {seconds} s",
		Meaning: "the scheduler is hung; /health_generate returns 503"},
	{ID: "trtllm_health_failed", Engines: trtllm, Sev: crit, Category: "availability", Needle: "Health generate check failed with status code",
		Regex:   `Health generate check failed with status code: (?P<code>\d+)`,
		Title:   "TRT-LLM health check failed (status {code})",
		Meaning: "the executor does not answer generate requests"},

	// ---- auth ----
	{ID: "hf_gated_unauthenticated", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "is restricted. You must have access to it and be authenticated",
		Regex:   `Access to model (?P<repo>\S+) is restricted\. You must have access to it and be authenticated`,
		Title:   "Hugging Face: {repo} is gated and no token was sent",
		Meaning: "set HF_TOKEN to a token that has been granted access"},
	{ID: "hf_gated_forbidden", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "you are not in the authorized list",
		Regex:   `Access to model (?P<repo>\S+) is restricted and you are not in the authorized list`,
		Title:   "Hugging Face: this token has no access to {repo}",
		Meaning: "request access on the model page, or use a token of an account that has it"},
	{ID: "hf_gated", Engines: anyEngine, Sev: crit, Category: "auth", Needle: "GatedRepoError|gated repo",
		Regex:   `GatedRepoError|Cannot access gated repo for url https://huggingface\.co/(?P<repo>[^/\s]+/[^/\s]+)|You are trying to access a gated repo`,
		Title:   "Hugging Face: gated model {repo}",
		Meaning: "the model needs an HF_TOKEN with access"},

	// ---- config / startup facts ----
	{ID: "vllm_stats_disabled", Engines: vllm, Sev: warn, Category: "config", Needle: "api_server_count more than 1; disabling stats logging",
		Regex:   `api_server_count more than 1; disabling stats logging`,
		Title:   "vLLM stats logging disabled (api_server_count > 1)",
		Meaning: "no periodic stats lines will follow: read /metrics instead"},
	{ID: "vllm_kv_capacity", Engines: vllm, Sev: info, Category: "config", Phase: model.PhaseKV, Needle: "GPU KV cache size:",
		Regex:   `GPU KV cache size: (?P<kv_tokens>[\d,]+) tokens(?:, Maximum concurrency for (?P<tokens>[\d,]+) tokens per request: (?P<concurrency>[\d.]+)x)?`,
		Title:   "vLLM KV cache holds {kv_tokens} tokens",
		Meaning: "KV capacity at start-up"},
	{ID: "vllm_max_concurrency", Engines: vllm, Sev: info, Category: "config", Needle: "Maximum concurrency for",
		Regex:   `Maximum concurrency for (?P<tokens>[\d,]+) tokens per request: (?P<concurrency>[\d.]+)x`,
		Title:   "vLLM fits {concurrency} requests of {tokens} tokens",
		Meaning: "how many full-length requests the KV cache holds at once"},
	{ID: "vllm_chunked_prefill", Engines: vllm, Sev: info, Category: "config", Needle: "Chunked prefill is enabled with max_num_batched_tokens=",
		Regex:   `Chunked prefill is enabled with max_num_batched_tokens=(?P<max_num_batched_tokens>\d+)`,
		Title:   "vLLM chunked prefill on: {max_num_batched_tokens} tokens per step",
		Meaning: "each engine step carries at most this many tokens, prompt chunks and decodes together: lower --max-num-batched-tokens to shorten decode stalls behind long prompts, raise it to prefill long prompts in fewer steps"},
	{ID: "vllm_kv_memory", Engines: vllm, Sev: info, Category: "memory", Needle: "Available KV cache memory:",
		Regex:   `Available KV cache memory: (?P<gib>[\d.]+) GiB`,
		Title:   "vLLM KV cache memory: {gib} GiB",
		Meaning: "memory left for the KV cache after weights and activations"},
	{ID: "sglang_ready", Engines: sglang, Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "The server is fired up and ready to roll!",
		Regex: `The server is fired up and ready to roll!`,
		Title: "SGLang is ready", Meaning: "the server accepts requests"},
	{ID: "sglang_deprecated_endpoint", Engines: sglang, Sev: info, Category: "config", Needle: "' is deprecated",
		Regex:   `'(?P<endpoint>/get_model_info|/get_server_info|/get_load)' is deprecated`,
		Title:   "SGLang: {endpoint} is deprecated",
		Meaning: "a client (maybe a monitor) uses an old endpoint: /model_info, /server_info, /v1/loads replace them"},
	{ID: "llamacpp_prompt_too_long", Engines: llamacpp, Sev: warn, Category: "config", Needle: "exceeds the available context size",
		Regex:   `request \((?P<n_prompt>\d+) tokens\) exceeds the available context size \((?P<n_ctx>\d+) tokens\)`,
		Title:   "llama.cpp rejected a {n_prompt}-token prompt (slot context {n_ctx})",
		Meaning: "the per-slot context is -c divided by -np (unless unified): raise -c or lower -np"},
	{ID: "llamacpp_context_shift_disabled", Engines: llamacpp, Sev: warn, Category: "config", Needle: "context shift is disabled",
		Regex:   `context shift is disabled`,
		Title:   "llama.cpp: generation hit the context limit",
		Meaning: "context shift is off: raise -c, or enable --context-shift"},
	{ID: "llamacpp_context_shift", Engines: llamacpp, Sev: warn, Category: "config", Needle: "slot context shift",
		Regex:   `slot context shift, n_keep = (?P<n_keep>\d+), n_left = (?P<n_left>\d+), n_discard = (?P<n_discard>\d+)`,
		Title:   "llama.cpp discarded {n_discard} tokens (context shift)",
		Meaning: "a request outgrew its slot context and lost tokens: raise -c or lower -np"},
	{ID: "llamacpp_ctx_capped", Engines: llamacpp, Sev: warn, Category: "config", Needle: "exceeds the training context of the model",
		Regex:   `the slot context \((?P<n_ctx_slot>\d+)\) exceeds the training context of the model \((?P<n_ctx_train>\d+)\) - capping`,
		Title:   "llama.cpp capped the context at {n_ctx_train}",
		Meaning: "-c is larger than the model was trained for"},
	{ID: "llamacpp_slots", Engines: llamacpp, Sev: info, Category: "config", Needle: "initializing, n_slots",
		// kv_unified is printed by builds with the unified cache (-kvu); the
		// core reads it to size the KV pool (model.SlotKV): unified, every
		// slot's n_ctx is the one shared pool.
		Regex:   `initializing, n_slots = (?P<n_slots>\d+), n_ctx_slot = (?P<n_ctx_slot>\d+)(?:, kv_unified = '(?P<kv_unified>true|false)')?`,
		Title:   "llama-server: {n_slots} slots of {n_ctx_slot} tokens",
		Meaning: "concurrency limit (-np) and per-slot context; with kv_unified = 'true' the slots share one pool of that size"},
	{ID: "llamacpp_port_notice", Engines: llamacpp, Sev: info, Category: "config", Needle: "server default port will be changed",
		Regex:   `server default port will be changed to :(?P<port>\d+)`,
		Title:   "llama-server default port will move to {port}",
		Meaning: "pin --port if clients rely on 8080"},
	{ID: "llamacpp_model_loaded", Engines: llamacpp, Sev: info, Category: "availability", Needle: "model loaded",
		Regex: `\bsrv +\S+: model loaded\s*$`,
		Title: "llama-server model loaded", Meaning: "the model is ready"},
	{ID: "llamacpp_listening", Engines: llamacpp, Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "listening on ",
		Regex: `\bsrv +\S+: (?:server is )?listening on (?P<address>\S+)`,
		Title: "llama-server listening on {address}", Meaning: "the HTTP server is up"},
	{ID: "llamacpp_loading", Engines: llamacpp, Sev: info, Category: "availability", Needle: `"message":"Loading model","type":"unavailable_error"`,
		Regex: `"message":"Loading model","type":"unavailable_error"`,
		Title: "llama-server is still loading the model", Meaning: "requests get 503 until it is loaded"},
	{ID: "tgi_warmup", Engines: tgi, Sev: info, Category: "availability", Phase: model.PhaseLoading, Needle: "Warming up model",
		Regex: `Warming up model`,
		Title: "TGI warming up", Meaning: "the shard is measuring how many tokens fit"},
	{ID: "tgi_batch_tokens", Engines: tgi, Sev: info, Category: "config", Needle: "max batch total tokens",
		Regex: `(?:Setting max batch total tokens to|Inferred max batch total tokens:) (?P<tokens>\d+)`,
		Title: "TGI max batch total tokens: {tokens}", Meaning: "the KV budget in tokens across the batch"},
	{ID: "tgi_connected", Engines: tgi, Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "Connected",
		Regex: `text_generation_router[\w:]*: .*: Connected\s*$`,
		Title: "TGI router connected", Meaning: "the router is ready"},
	{ID: "ollama_listening", Engines: ollama, Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "Listening on ",
		Regex: `Listening on (?P<address>\S+) \(version (?P<version>[^)]+)\)`,
		Title: "Ollama {version} listening on {address}", Meaning: "the server is up"},
	{ID: "ollama_default_context", Engines: ollama, Sev: info, Category: "config", Needle: "vram-based default context",
		Regex: `vram-based default context.*?total_vram=(?P<total_vram>\S+).*?default_num_ctx=(?P<default_num_ctx>\d+)`,
		Title: "Ollama default context {default_num_ctx} tokens ({total_vram} VRAM)", Meaning: "num_ctx used when a request does not set one"},
	{ID: "ollama_runner_started", Engines: ollama, Sev: info, Category: "availability", Needle: "llama-server started in|llama runner started in",
		Regex: `(?:llama-server|llama runner) started in (?P<seconds>[\d.]+) seconds`,
		Title: "Ollama model runner started in {seconds} s", Meaning: "a model was loaded"},

	// ---- lifecycle: starts, phases, clean shutdowns ----
	{ID: "vllm_start", Engines: vllm, Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: "vLLM API server version ",
		Regex: `vLLM API server version (?P<version>v?\d\S*)\s*$`,
		Title: "vLLM {version} starting", Meaning: "a new vLLM process started: a new run begins"},
	{ID: "vllm_args", Engines: vllm, Sev: info, Category: "lifecycle", Phase: model.PhaseConfig, Needle: "non-default args: {",
		Regex: `non-default args: (?P<args>\{.*\})\s*$`,
		Title: "vLLM configuration (non-default args)", Meaning: "the flags this run was started with; the runs view compares them between runs"},
	{ID: "vllm_args_v0", Engines: vllm, Sev: info, Category: "lifecycle", Phase: model.PhaseConfig, Needle: "args: Namespace(",
		Regex: `\bargs: Namespace\((?P<args>.*)\)\s*$`,
		Title: "vLLM configuration (all args, V0)", Meaning: "the flags this run was started with, defaults included (vLLM before the V1 logger); the runs view compares them between runs"},
	{ID: "vllm_weights_loaded", Engines: vllm, Sev: info, Category: "lifecycle", Phase: model.PhaseLoaded, Needle: "Loading weights took ",
		Regex: `Loading weights took (?P<seconds>[\d.]+) seconds`,
		Title: "weights loaded in {seconds} s", Meaning: "start-up: the model's weights are on the GPU"},
	{ID: "vllm_graphs_captured", Engines: vllm, Sev: info, Category: "lifecycle", Phase: model.PhaseGraphs, Needle: "Graph capturing finished in ",
		Regex: `Graph capturing finished in (?P<seconds>[\d.]+) secs?`,
		Title: "CUDA graphs captured in {seconds} s", Meaning: "start-up: the last step before the engine serves"},
	{ID: "uvicorn_startup_complete", Engines: torch, Sev: info, Category: "lifecycle", Phase: model.PhaseReady, Needle: "Application startup complete.",
		Regex: `Application startup complete\.`,
		Title: "API server ready", Meaning: "the HTTP server accepts requests"},
	{ID: "uvicorn_shutting_down", Engines: torch, Sev: info, Category: "lifecycle", Phase: model.PhaseStopping, Needle: "Shutting down",
		Regex: `(?:^|INFO:\s+)Shutting down\s*$`,
		Title: "API server shutting down", Meaning: "a clean shutdown (SIGTERM, a deploy): a planned end of this run"},
	{ID: "uvicorn_shutdown_complete", Engines: torch, Sev: info, Category: "lifecycle", Phase: model.PhaseStopped, Needle: "Application shutdown complete.",
		Regex: `Application shutdown complete\.`,
		Title: "API server shut down cleanly", Meaning: "the run ended as planned"},
	{ID: "llamacpp_loading_model", Engines: llamacpp, Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: "loading model '",
		Regex: `\bsrv +\S+: loading model '(?P<model>[^']*)'`,
		Title: "llama-server loading {model}", Meaning: "a new llama-server process is loading its model: a new run begins"},
	{ID: "llamacpp_exit", Engines: llamacpp, Sev: info, Category: "lifecycle", Phase: model.PhaseStopped, Needle: "cleaning up before exit...",
		Regex: `\bsrv +\S+: (?:\S+: )?cleaning up before exit\.\.\.`,
		Title: "llama-server exiting cleanly", Meaning: "SIGTERM or SIGINT: a planned end of this run"},
	{ID: "ollama_server_config", Engines: ollama, Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: `msg="server config"`,
		Regex: `msg="server config" env="(?P<args>map\[.*\])"`,
		Title: "Ollama starting (server config)", Meaning: "Ollama's first line: a new process, and the OLLAMA_* settings this run was started with (the runs view compares them)"},

	// ---- runtime and start-up failures (issue 27); each held by a real
	// line in testdata/real-lines.txt with where it was printed ----
	{ID: "cuda_device_assert", Engines: torch, Sev: crit, Category: "availability", Needle: "device-side assert triggered",
		Regex:   `CUDA error: device-side assert triggered`,
		Title:   "CUDA error: device-side assert triggered",
		Meaning: "a kernel's own check failed (a token id or index out of range: often a tokenizer that does not match the model, or a malformed request); the engine usually dies. CUDA_LAUNCH_BLOCKING=1 names the kernel"},
	{ID: "vllm_worker_died", Engines: vllm, Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "died unexpectedly, shutting down executor",
		Regex:   `Worker proc (?P<worker>\S+) died unexpectedly, shutting down executor`,
		Title:   "vLLM worker {worker} died",
		Meaning: "a GPU worker process is gone (the kernel's OOM killer, a segfault, an NCCL failure): the engine shuts down; the lines before it and dmesg say why"},
	{ID: "hf_model_not_found", Engines: torch, Sev: crit, Category: "availability", Needle: "is not a local folder and is not a valid model identifier",
		Regex:   `(?P<model>\S+) is not a local folder and is not a valid model identifier`,
		Title:   "model {model} not found (no such local folder or Hub repository)",
		Meaning: "the model name is misspelt, the local path does not exist in the engine's container, or a private repository needs HF_TOKEN"},
	{ID: "hf_offline", Engines: torch, Sev: crit, Category: "availability", Needle: "We couldn't connect to 'https://huggingface.co'|offline mode is enabled",
		Regex:   `We couldn't connect to 'https://huggingface\.co' to load|Cannot reach (?P<url>\S+): offline mode is enabled`,
		Title:   "model download failed: Hugging Face Hub unreachable or offline",
		Meaning: "the engine must fetch files it does not have in its cache: give it network access, or download the model first and pass its local path (HF_HUB_OFFLINE=1 needs the whole repository in the cache)"},
	{ID: "hf_trust_remote_code", Engines: torch, Sev: crit, Category: "config", Needle: "contains custom code which must be executed|requires you to execute the configuration file",
		Regex:   `contains custom code which must be executed to correctly load the model|requires you to execute the configuration file in that repo`,
		Title:   "model needs --trust-remote-code",
		Meaning: "the model's repository ships its own Python code: start the engine with --trust-remote-code after reading that code"},
	{ID: "cuda_no_kernel_image", Engines: torch, Sev: crit, Category: "config", Needle: "no kernel image is available for execution on the device",
		Regex:   `no kernel image is available for execution on the device`,
		Title:   "CUDA error: no kernel image for this GPU",
		Meaning: "the engine's CUDA kernels were not built for this GPU's compute capability (a new GPU on an old build, or an old GPU on a new one): install a build for this architecture"},
	{ID: "vllm_bf16_capability", Engines: vllm, Sev: crit, Category: "config", Needle: "is only supported on GPUs with compute capability",
		Regex:   `Bfloat16 is only supported on GPUs with compute capability of at least (?P<need>[\d.]+)\. Your (?P<gpu>.+?) GPU has compute capability (?P<cc>\d+\.\d+)`,
		Title:   "bfloat16 unsupported on {gpu} (compute capability {cc})",
		Meaning: "this GPU predates bfloat16 (Ampere, 8.0): run the model in float16 (--dtype half)"},
	{ID: "vllm_lora_not_found", Engines: vllm, Sev: warn, Category: "config", Needle: "No adapter found for",
		Regex:   `Loading lora \[?"?(?P<lora>\S+?) failed: No adapter found for (?P<path>[^"\]\s]+)`,
		Title:   "LoRA adapter {lora} not found at {path}",
		Meaning: "the adapter's path holds no adapter_config.json and weights (or is not visible inside the engine's container): requests for it fail"},
	{ID: "vllm_mm_limit", Engines: vllm, Sev: warn, Category: "config", Needle: "may be provided in one|(or defaulted to 1) in",
		Regex:   `At most (?P<limit>\d+) (?P<modality>\w+)\(s\) may be provided in one (?:request|prompt)|You set (?P<modality2>\w+)=(?P<limit2>\d+) \(or defaulted to 1\) in .--limit-mm-per-prompt., but passed (?P<passed>\d+)`,
		Title:   "request over the per-prompt {modality}{modality2} limit ({limit}{limit2})",
		Meaning: "a request carried more images (or other media) than --limit-mm-per-prompt allows: it was rejected with 400"},

	// ---- generic ----
	{ID: "python_traceback", Engines: anyEngine, Sev: warn, Category: "availability", Needle: "Traceback (most recent call last):",
		Regex: `Traceback \(most recent call last\):`,
		Title: "Python traceback", Meaning: "an exception was raised; the lines after this say which"},
}
