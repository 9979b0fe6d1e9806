package engines

import (
	"strings"

	"github.com/llmtop/llmtop/model"
)

// VLLM is vLLM (ENGINES.md §1): V1 metric names, with the names older
// releases used after them.
var VLLM = Spec{
	ID:          model.VLLM,
	Name:        "vLLM",
	Ports:       []int{8000},
	Prefixes:    []string{"vllm:"},
	MetricsPath: "/metrics",
	// the sleep mode's state, the external (connector) and multimodal
	// caches, the request parameters' and the KV-computed tokens'
	// histograms, and the inference time (prefill + decode, both read)
	Unread: []string{"vllm:engine_sleep_state", "vllm:external_prefix_cache_hits_total", "vllm:external_prefix_cache_queries_total",
		"vllm:mm_cache_hits_total", "vllm:mm_cache_queries_total", "vllm:request_params_n", "vllm:request_params_max_tokens",
		"vllm:request_max_num_generation_tokens", "vllm:request_prefill_kv_computed_tokens", "vllm:request_inference_time_seconds"},
	Hint404: "vLLM always serves /metrics on its API port (the one /v1 answers on): a 404 means another port or route, " +
		"or a proxy in front that does not pass it; point llmtop at the API port or pass --metrics-path",
	HintEmpty: "vLLM started with " + VLLMDisableLogStats + " serves /metrics without any vllm: metrics: start it without that flag",
	// the API server mounts /metrics beside /v1 (entrypoints/openai/api_server.py)
	MetricsAlways: true,
	StatsOff:      VLLMDisableLogStats,
	ModelLabel:    "model_name",
	DPLabel:       "engine",
	KVAgg:         "max",
	Rules:         true,
	// vllm:num_preemptions_total: a preempted request is freed and
	// recomputed later
	Preemption: Preemption{Counted: "preemptions"},
	Fleet: &Fleet{Present: model.Running,
		Gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: model.FinishReasons, model.Preemptions: string(model.Preemptions),
			model.KVTransferFailures: string(model.KVTransferFailures), model.KVExpired: string(model.KVExpired)},
		Ratios: map[model.Gauge][2]string{
			model.PrefixHitGauge:  {string(model.PrefixHits), string(model.PrefixQueries)},
			model.SpecAcceptGauge: {string(model.SpecAcceptTokens), string(model.SpecDraftTokens)},
		},
		Hists:    []model.Latency{model.TTFT, model.TPOT, model.ITL, model.E2E, model.Queue, model.KVTransfer},
		HistSums: []model.Counter{model.KVTransferBytes}},
	Levers: Levers{
		Warmup:        Change{Change: "send warm-up requests before routing traffic (readiness on /health + one request)", Why: "torch.compile and CUDA graphs are built at start; prefix cache fills with traffic", TradeOff: "slower rollout"},
		SpeculateLess: Change{Change: `--speculative-config '{"num_speculative_tokens": 2, ...}' (fewer draft tokens) or drop it`, Why: "rejected drafts cost a verify pass each", TradeOff: "less speed-up when the draft is right"},
		Speculate:     Change{Change: `--speculative-config '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}' (or an EAGLE/draft model for the served one)`, Why: "at a small batch each step is bandwidth-bound: verifying a few drafted tokens costs about one step and yields several when accepted", TradeOff: "gains shrink as the batch grows; low acceptance costs compute (watch the acceptance rate)"},
		EnableMetrics: Change{Change: "point llmtop at vLLM's API port (where /v1/models answers), or pass --metrics-path (llmtop) if a proxy moved /metrics", Why: "vLLM always serves /metrics on its API port: a 404 is another port or route, or a proxy", TradeOff: "none"},
		Template:      Change{Change: "--chat-template PATH (the model's own template, from its tokenizer_config.json) or drop a --chat-template that overrides it", Why: "vLLM renders chat with the template given, else the tokenizer's", TradeOff: "none"},
		Tokenizer:     Change{Change: "--tokenizer MODEL_REPO (the model's own) and --tokenizer-mode auto", Why: "a tokenizer from another model splits text badly", TradeOff: "none"},
		Stop:          Change{Change: "keep --generation-config auto (the model's generation_config.json, with its eos_token_id) and check the chat template ends turns with the model's EOS; or send stop/stop_token_ids", Why: "vLLM stops on the tokenizer's EOS plus the generation config's eos_token_id", TradeOff: "none"},
		Sampling:      Change{Change: "read the start-up log's \"Default sampling parameters have been overridden\" line and --generation-config (auto applies the model's generation_config.json where a request is silent; vllm ignores it): an explicit temperature 0 in the request must still win", Why: "a server-side default that overrides the request makes sampling random", TradeOff: "none"},
		Quantize:      Change{Change: "serve an fp8/AWQ/GPTQ checkpoint (--quantization fp8 for on-the-fly fp8)", Why: "half the weight bytes read per token", TradeOff: "small accuracy cost"},
		HostBuffers:   "--swap-space, --cpu-offload-gb, --kv-offloading-size",
		Cap:           "--max-num-seqs %s",
		// SchedulerConfig's check: max_num_batched_tokens must be at
		// least max_num_seqs
		BudgetOverCap: true,
		DraftTokens:   VLLMDraftTokens,
		// V1 chunks prefill unless told not to
		// (vllm/v1/core/sched/scheduler.py); SchedulerConfig's default
		// max_num_batched_tokens
		ChunkedDefault: ChunkedDefault{Off: VLLMNoChunkedPrefill, Before: VLLMChunkedV0,
			Budget: "8192 on ≥ 70 GiB GPUs other than A100, 2048 on others"},
		StatsOn: Change{Change: "restart vLLM without " + VLLMDisableLogStats, Why: "that flag turns off vLLM's stats, the Prometheus ones included",
			TradeOff: "the periodic stats log line comes back too (" + VLLMStatsInterval + " sets its period)"},
		APIKey:             "--api-key",
		MaxLen:             "--max-model-len %s",
		MemFraction:        "--gpu-memory-utilization",
		MemFractionDefault: 0.92,
		MemFractionKey:     "gpu_memory_utilization",
		ActivationRoom:     Change{Change: "--gpu-memory-utilization 0.05 lower than it serves with now", Why: "leaves room for activations outside the KV pool", TradeOff: "a smaller KV pool"},
		CapDefaultMax:      1024,
		FP8KV:              Change{Change: "--kv-cache-dtype fp8", Why: "halves KV bytes per token: about twice the tokens in the same pool", TradeOff: "small accuracy cost; needs a GPU with fp8 (Ada/Hopper or newer) for speed"},
		Chunked:            Change{Change: "--max-num-batched-tokens %s without " + VLLMNoChunkedPrefill},
		DataParallel:       "--data-parallel-size %s",
		Front: Change{Change: "--api-server-count 2 (or more)", Why: "tokenisation, detokenisation and JSON run in more API-server processes",
			TradeOff: "more CPU and memory; vLLM then logs no stats lines (scrape /metrics)"},
		TensorParallel: []string{"--tensor-parallel-size", "-tp"},
		MoreGPUs:       []string{"-dp", "--pipeline-parallel-size", "-pp"},
		NoGraphs:       "--enforce-eager",
		StepBudget:     "--max-num-batched-tokens %s",
		GraphSizes:     "fewer capture sizes: --cuda-graph-sizes",
		Precision:      []string{"--dtype", "--quantization", "-q", "--kv-cache-dtype"},
		MaxLoRAs:       "--max-loras %s",
	},
	Metrics: vllmMetrics,
	Logs:    vllmLogs,
	Process: Process{Programs: []string{"vllm"}, Modules: []string{"vllm"}, Serves: []string{"vllm", "-m vllm"},
		Host: "0.0.0.0", PortFlags: []string{"--port"}, HostFlags: []string{"--host"}},
	// 503 only when its engine core died (vllm/entrypoints/openai/api_server.py).
	Health: Health{Route: "/health", Status: 503, Means: model.HealthUnhealthy, Why: "engine dead (503): see the server log",
		Unhealthy: "vLLM's /health returns 503 after EngineDeadError: the engine core died (CUDA error, OOM, NCCL) while the API server lives on"},
	OwnedBy: []string{"vllm"},
	Probe: Probe{Template: model.VLLM, Tokenize: model.VLLM, RawPrompt: true,
		DefaultsNote: "not served over HTTP: vLLM logs them at start-up (\"Default sampling parameters have been overridden by the model's Hugging Face generation config\"); read the log or the model's generation_config.json"},
}

// vLLM metrics and flags the adapter and the advice read beyond the table.
const (
	// VLLMCacheConfig is the info gauge whose labels carry the cache
	// configuration (block size, dtype, gpu_memory_utilization, blocks).
	VLLMCacheConfig = "vllm:cache_config_info"
	// VLLMWaitingByReason is the waiting gauge split by reason (the
	// table's second Waiting name).
	VLLMWaitingByReason = "vllm:num_requests_waiting_by_reason"
	// VLLMDraftTokens sets how many tokens a speculative draft proposes
	// (%d the count).
	VLLMDraftTokens = `--speculative-config '{"num_speculative_tokens": %d, ...}'`
	// VLLMStatsInterval sets the period of its stats log line (seconds).
	VLLMStatsInterval = "VLLM_LOG_STATS_INTERVAL"
	// VLLMDisableLogStats turns the vllm: metrics off.
	VLLMDisableLogStats = "--disable-log-stats"
	// VLLMNoChunkedPrefill turns the V1 engine's chunked prefill off.
	VLLMNoChunkedPrefill = "--no-enable-chunked-prefill"
	// VLLMChunkedV0 turns chunked prefill on in a V0 engine (%s the step
	// budget).
	VLLMChunkedV0 = "--enable-chunked-prefill --max-num-batched-tokens %s"
)

var vllmMetrics = []MetricSource{
	src(string(model.Running), "", "vllm:num_requests_running"),
	src(string(model.Waiting), "the by-reason split is summed when the total is absent", "vllm:num_requests_waiting", "vllm:num_requests_waiting_by_reason"),
	src(string(model.KVUsage), "a 0–1 fraction despite the name; gpu_cache_usage_perc before v0.11", "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
	src(string(model.Preemptions), "", "vllm:num_preemptions_total"),
	src(string(model.PrefixQueries), "prompt tokens looked up; gpu_prefix_cache_* in early V1 (counted blocks)", "vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
	src(string(model.PrefixHits), "read with the queries counter of the same name", "vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
	src(string(model.PrefixHitGauge), "V0 block hit rate, read only when the counters are absent", "vllm:gpu_prefix_cache_hit_rate"),
	src(string(model.PromptTokens), "", "vllm:prompt_tokens_total"),
	src(string(model.GenTokens), "", "vllm:generation_tokens_total"),
	src(string(model.SpecDraftTokens), "", "vllm:spec_decode_num_draft_tokens_total"),
	src(string(model.SpecAcceptTokens), "", "vllm:spec_decode_num_accepted_tokens_total"),
	src(string(model.SpecDrafts), "drafts proposed: the denominator of the acceptance by position", "vllm:spec_decode_num_drafts_total"),
	src(model.SpecAcceptByPos, "by position (0 the first drafted token); read with the drafts counter", "vllm:spec_decode_num_accepted_tokens_per_pos_total"),
	src(model.FinishReasons, "by finished_reason", "vllm:request_success_total"),
	src(string(model.TTFT), "histogram", "vllm:time_to_first_token_seconds"),
	src(string(model.ITL), "histogram of every inter-token gap; time_per_output_token_seconds before v0.11 observed the same", "vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
	src(string(model.TPOT), "histogram", "vllm:request_time_per_output_token_seconds"),
	src(string(model.E2E), "histogram", "vllm:e2e_request_latency_seconds"),
	src(string(model.Queue), "histogram", "vllm:request_queue_time_seconds"),
	src(string(model.Prefill), "histogram", "vllm:request_prefill_time_seconds"),
	src(string(model.Decode), "histogram", "vllm:request_decode_time_seconds"),
	src(string(model.PromptLen), "histogram", "vllm:request_prompt_tokens"),
	src(string(model.OutputLen), "histogram", "vllm:request_generation_tokens"),
	src(string(model.StepTokens), "histogram", "vllm:iteration_tokens_total"),
	src(string(model.KVTransfer), "histogram of NIXL transfers, counted where performed (the decode instance pulls)", "vllm:nixl_xfer_time_seconds"),
	src(string(model.KVTransferFailures), "NIXL transfers that failed, counted where performed", "vllm:nixl_num_failed_transfers_total"),
	src(string(model.KVTransferBytes), "histogram of bytes per NIXL transfer: its sum, the bytes moved; over the transfer time, vLLM's own throughput", VLLMNixlBytes),
	src(string(model.KVExpired), "requests whose KV expired before the decode side pulled it; tracked on the prefill instance", VLLMNixlExpired),
}

// vLLM's disaggregation families (SERVING-LAYERS.md §3a”; NIXL's in
// kv_connector/v1/nixl/stats.py @6adad087): counted where the transfer is
// performed, the decode instance that pulls the KV.
const (
	VLLMNixlXferTime   = "vllm:nixl_xfer_time_seconds"
	VLLMRequestSuccess = "vllm:request_success_total"
	VLLMNixlFailed     = "vllm:nixl_num_failed_transfers_total"
	VLLMNixlExpired    = "vllm:nixl_num_kv_expired_reqs_total"
	VLLMNixlBytes      = "vllm:nixl_bytes_transferred"
	// VLLMNixlAbortTimeout is how long the prefill side keeps a request's
	// KV for the decode side to read before it frees it (envs.py: "after
	// which the KV cache on the producer side is automatically cleared if
	// no READ notification is received from the consumer", 480 s).
	VLLMNixlAbortTimeout = "VLLM_NIXL_ABORT_REQUEST_TIMEOUT"
	VLLMPromptBySource   = "vllm:prompt_tokens_by_source_total"
	VLLMExternalKV       = "external_kv_transfer"
	VLLMLoRAInfo         = "vllm:lora_requests_info"
	VLLMLoRAMax          = "max_lora"
	VLLMLoRAWaiting      = "waiting_lora_adapters"
	VLLMLoRARunning      = "running_lora_adapters"
	VLLMKVTransferConfig = "--kv-transfer-config"
	VLLMKVRoleProducer   = "kv_producer"
	VLLMKVRoleConsumer   = "kv_consumer"
	VLLMKVRoleBoth       = "kv_both"
)

// vllmLogs are its log lines, most specific first (LOG-PATTERNS.md).
var vllmLogs = []LogLine{
	{ID: "vllm_stats", Sev: info, Category: "stats", Needle: "Avg prompt throughput:",
		Regex:   `(?:Engine (?P<engine>\d+)|(?P<engines>\d+) Engines Aggregated): Avg prompt throughput: (?P<prompt_tps>[\d.]+) tokens/s, Avg generation throughput: (?P<gen_tps>[\d.]+) tokens/s, Running: (?P<running>\d+) reqs, Waiting: (?P<waiting>\d+) reqs`,
		Title:   "vLLM stats: {running} running, {waiting} waiting, {gen_tps} tok/s generated",
		Meaning: "vLLM's periodic stats line (every VLLM_LOG_STATS_INTERVAL s, INFO only while busy)"},
	{ID: "vllm_stats_v0", Sev: info, Category: "stats", Needle: "Avg prompt throughput:",
		Regex:   `Avg prompt throughput: (?P<prompt_tps>[\d.]+) tokens/s, Avg generation throughput: (?P<gen_tps>[\d.]+) tokens/s, Running: (?P<running>\d+) reqs, (?:Swapped: (?P<swapped>\d+) reqs, Pending: (?P<waiting>\d+) reqs|Waiting: (?P<waiting2>\d+) reqs)`,
		Title:   "vLLM stats: {running} running, {waiting}{waiting2} waiting, {gen_tps} tok/s generated",
		Meaning: "vLLM's periodic stats line (V0 engine or early V1 format)"},
	{ID: "vllm_spec_decode", Sev: info, Category: "stats", Needle: "SpecDecoding metrics:",
		Regex:   `SpecDecoding metrics: Mean acceptance length: (?P<mean_accept_len>[\d.]+), .*Accepted: (?P<accepted>\d+) tokens, Drafted: (?P<drafted>\d+) tokens`,
		Title:   "vLLM speculative decoding: mean acceptance length {mean_accept_len}",
		Meaning: "speculative decoding acceptance over the last stats interval"},
	{ID: "vllm_sampler_warmup_oom", Finding: "startup_warmup_oom", Sev: crit, Category: "memory", Needle: "CUDA out of memory occurred when warming up sampler",
		Regex:   `CUDA out of memory occurred when warming up sampler with (?P<num_reqs>\d+) dummy requests`,
		Title:   "vLLM OOM warming up the sampler with {num_reqs} requests",
		Meaning: "lower --max-num-seqs or --gpu-memory-utilization"},
	{ID: "vllm_load_oom", Finding: "startup_weights_oom", Fix: vllmWeightsFix, Sev: crit, Category: "memory", Needle: "Failed to load model - not enough GPU memory",
		Regex:   `Failed to load model - not enough GPU memory`,
		Title:   "vLLM: not enough GPU memory to load the weights",
		Meaning: "lower --gpu-memory-utilization to free memory for weights, raise --tensor-parallel-size, or quantize"},
	{ID: "vllm_no_kv_memory", Finding: "startup_no_kv_memory", Fix: vllmNoKVFix, Sev: crit, Category: "memory", Needle: "No available memory for the cache blocks",
		Regex:   `No available memory for the cache blocks`,
		Title:   "vLLM: no memory left for the KV cache",
		Meaning: "weights and activations used the whole budget: raise --gpu-memory-utilization"},
	{ID: "vllm_max_len_kv", Finding: "startup_max_len_kv", Sev: crit, Category: "config", Needle: "To serve at least one request with the model",
		Regex:   `max seq len \((?P<max_model_len>\d+)\), \(?(?P<needed_gib>[\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory \((?P<available_gib>[\d.]+) GiB\)\.(?: (?:Based on the available memory, the estimated|Estimated) maximum model length is (?P<estimated_max_len>\d+)\.)?`,
		Title:   "vLLM: max model len {max_model_len} needs {needed_gib} GiB KV cache, {available_gib} GiB available",
		Meaning: "lower --max-model-len (vLLM's estimate of what fits is in estimated_max_len) or raise --gpu-memory-utilization"},
	{ID: "vllm_max_len_kv_old", Finding: "startup_max_len_kv", Sev: crit, Category: "config", Needle: "is larger than the maximum number of tokens that can be stored in KV cache",
		Regex:   `The model's max seq len \((?P<max_model_len>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((?P<kv_tokens>\d+)\)`,
		Title:   "vLLM: max model len {max_model_len} exceeds KV cache capacity {kv_tokens} tokens",
		Meaning: "lower --max-model-len to at most kv_tokens or raise --gpu-memory-utilization"},
	{ID: "vllm_free_mem_startup", Finding: "startup_vram_held", Sev: crit, Category: "memory", Needle: "on startup is less than desired GPU memory utilization",
		// vLLM ≤ 0.11 names no device: "Free memory on device (61.05/119.7 GiB) on startup…".
		Regex:   `Free memory on device (?:(?P<device>\S+) )?\((?P<free_gib>[\d.]+)/(?P<total_gib>[\d.]+) GiB\) on startup is less than desired GPU memory utilization \((?P<util>[\d.]+), (?P<wanted_gib>[\d.]+) GiB\)`,
		Title:   "vLLM: {device} has only {free_gib} of {total_gib} GiB free, wanted {wanted_gib} GiB",
		Meaning: "another process holds GPU memory: stop it or lower --gpu-memory-utilization"},
	{ID: "vllm_v0_preemption", Finding: "kv_retraction_log", Fix: vllmPreemptFix, Sev: warn, Category: "memory", Needle: "because there is not enough KV cache space",
		Regex:   `Sequence group (?P<seq_group>\S+) is preempted by (?P<mode>\S+) mode because there is not enough KV cache space\..*total_num_cumulative_preemption=(?P<total>\d+)`,
		Title:   "vLLM preempted requests: KV cache full ({total} so far)",
		Meaning: "KV cache pressure: raise --gpu-memory-utilization or --tensor-parallel-size, or lower --max-num-seqs"},
	{ID: "vllm_port_retry", Sev: warn, Category: "distributed", Needle: "already in use",
		Regex:   `Address already in use\. Retrying with a new port|Port (?P<port>\d+) is already in use, trying port (?P<next_port>\d+)`,
		Title:   "vLLM internal port busy, retrying",
		Meaning: "an internal distributed port collided (not the HTTP port); harmless unless it keeps failing"},
	{ID: "vllm_engine_start_failed", Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "EngineCore failed to start.|Engine core initialization failed.",
		Regex:   `EngineCore failed to start\.|Engine core initialization failed\.`,
		Title:   "vLLM engine failed to start",
		Meaning: "the engine core died during start-up: the error lines around this one say why"},
	{ID: "vllm_engine_dead", Finding: "cuda_illegal_access", Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "EngineDeadError",
		Regex:   `EngineDeadError`,
		Title:   "vLLM engine core died",
		Meaning: "the engine process failed (see the error before this line); /health returns 503 until restarted"},
	{ID: "vllm_stats_disabled", Sev: warn, Category: "config", Needle: "api_server_count more than 1; disabling stats logging",
		Regex:   `api_server_count more than 1; disabling stats logging`,
		Title:   "vLLM stats logging disabled (api_server_count > 1)",
		Meaning: "no periodic stats lines will follow: read /metrics instead"},
	{ID: "vllm_kv_capacity", Sev: info, Category: "config", Phase: model.PhaseKV, Needle: "GPU KV cache size:",
		Regex:   `GPU KV cache size: (?P<kv_tokens>[\d,]+) tokens(?:, Maximum concurrency for (?P<tokens>[\d,]+) tokens per request: (?P<concurrency>[\d.]+)x)?`,
		Title:   "vLLM KV cache holds {kv_tokens} tokens",
		Meaning: "KV capacity at start-up"},
	{ID: "vllm_max_concurrency", Sev: info, Category: "config", Needle: "Maximum concurrency for",
		Regex:   `Maximum concurrency for (?P<tokens>[\d,]+) tokens per request: (?P<concurrency>[\d.]+)x`,
		Title:   "vLLM fits {concurrency} requests of {tokens} tokens",
		Meaning: "how many full-length requests the KV cache holds at once"},
	{ID: "vllm_chunked_prefill", Sev: info, Category: "config", Needle: "Chunked prefill is enabled with max_num_batched_tokens=",
		Regex: `Chunked prefill is enabled with max_num_batched_tokens=(?P<max_num_batched_tokens>\d+)`,
		Title: "vLLM chunked prefill on: {max_num_batched_tokens} tokens per step", StepBudget: "max_num_batched_tokens",
		Meaning: "each engine step carries at most this many tokens, prompt chunks and decodes together: lower --max-num-batched-tokens to shorten decode stalls behind long prompts, raise it to prefill long prompts in fewer steps"},
	{ID: "vllm_kv_memory", Sev: info, Category: "memory", Needle: "Available KV cache memory:",
		Regex: `Available KV cache memory: (?P<gib>[\d.]+) GiB`,
		Title: "vLLM KV cache memory: {gib} GiB", Reports: gibOf(AmountKV, "gib"),
		Meaning: "memory left for the KV cache after weights and activations"},
	{ID: "vllm_start", Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: "vLLM API server version ",
		Regex: `vLLM API server version (?P<version>v?\d\S*)\s*$`,
		Title: "vLLM {version} starting", Meaning: "a new vLLM process started: a new run begins"},
	{ID: "vllm_args", Sev: info, Category: "lifecycle", Phase: model.PhaseConfig, Needle: "non-default args: {",
		Regex: `non-default args: (?P<args>\{.*\})\s*$`,
		Title: "vLLM configuration (non-default args)", Meaning: "the flags this run was started with; the runs view compares them between runs"},
	{ID: "vllm_args_v0", Sev: info, Category: "lifecycle", Phase: model.PhaseConfig, Needle: "args: Namespace(",
		Regex: `\bargs: Namespace\((?P<args>.*)\)\s*$`,
		Title: "vLLM configuration (all args, V0)", Meaning: "the flags this run was started with, defaults included (vLLM before the V1 logger); the runs view compares them between runs"},
	{ID: "vllm_weights_loaded", Sev: info, Category: "lifecycle", Phase: model.PhaseLoaded, Needle: "Loading weights took ",
		Regex: `Loading weights took (?P<seconds>[\d.]+) seconds`,
		Title: "weights loaded in {seconds} s", Meaning: "start-up: the model's weights are on the GPU"},
	{ID: "vllm_graphs_captured", Sev: info, Category: "lifecycle", Phase: model.PhaseGraphs, Needle: "Graph capturing finished in ",
		Regex: `Graph capturing finished in (?P<seconds>[\d.]+) secs?`,
		Title: "CUDA graphs captured in {seconds} s", Meaning: "start-up: the last step before the engine serves"},
	{ID: "vllm_worker_died", Finding: "worker_died", Sev: crit, Category: "availability", Phase: model.PhaseCrash, Needle: "died unexpectedly, shutting down executor",
		Regex:   `Worker proc (?P<worker>\S+) died unexpectedly, shutting down executor`,
		Title:   "vLLM worker {worker} died",
		Meaning: "a GPU worker process is gone (the kernel's OOM killer, a segfault, an NCCL failure): the engine shuts down; the lines before it and dmesg say why"},
	{ID: "vllm_bf16_capability", Finding: "startup_unsupported_gpu", Fix: vllmBF16Fix, Sev: crit, Category: "config", Needle: "is only supported on GPUs with compute capability",
		Regex:   `Bfloat16 is only supported on GPUs with compute capability of at least (?P<need>[\d.]+)\. Your (?P<gpu>.+?) GPU has compute capability (?P<cc>\d+\.\d+)`,
		Title:   "bfloat16 unsupported on {gpu} (compute capability {cc})",
		Meaning: "this GPU predates bfloat16 (Ampere, 8.0): run the model in float16 (--dtype half)"},
	{ID: "vllm_lora_not_found", Finding: "lora_not_found", Refused: true, Fix: vllmLoRAFix, Sev: warn, Category: "config", Needle: "No adapter found for",
		Regex:   `Loading lora \[?"?(?P<lora>\S+?) failed: No adapter found for (?P<path>[^"\]\s]+)`,
		Title:   "LoRA adapter {lora} not found at {path}",
		Meaning: "the adapter's path holds no adapter_config.json and weights (or is not visible inside the engine's container): requests for it fail"},
	{ID: "vllm_mm_limit", Finding: "mm_limit", Refused: true, Fix: vllmMMFix, Sev: warn, Category: "config", Needle: "may be provided in one|(or defaulted to 1) in",
		Regex:   `At most (?P<limit>\d+) (?P<modality>\w+)\(s\) may be provided in one (?:request|prompt)|You set (?P<modality2>\w+)=(?P<limit2>\d+) \(or defaulted to 1\) in .--limit-mm-per-prompt., but passed (?P<passed>\d+)`,
		Title:   "request over the per-prompt {modality}{modality2} limit ({limit}{limit2})",
		Meaning: "a request carried more images (or other media) than --limit-mm-per-prompt allows: it was rejected with 400"},
	{ID: "vllm_fp8_marlin", Sev: warn, Category: "config", Needle: "does not have native support for FP8 computation",
		Regex: `does not have native support for FP8 computation but FP8 quantization is being used`,
		Title: "fp8 on a GPU without fp8 compute: weight-only fp8 (Marlin)", Emulates: "fp8",
		Meaning: "this GPU (before Ada/Hopper, compute capability 8.9) has no fp8 tensor cores: the fp8 weights are expanded to 16 bits for every matmul, saving memory but not compute; expect slower prefill than a 16-bit or INT8/AWQ model"},
	{ID: "vllm_model_loading", Sev: info, Category: "memory", Needle: "Model loading took ",
		Regex: `Model loading took (?P<gib>[\d.]+) GiB(?: memory)? and (?P<seconds>[\d.]+) seconds`,
		Title: "weights take {gib} GiB on each GPU", Reports: gibOf(AmountWeights, "gib"),
		Meaning: "the memory the model's weights took on this rank's GPU (each tensor-parallel rank prints its own share)"},
}

// The fixes of vLLM's own failure lines (LogLine.Fix).
var (
	vllmNoKVFix = []Change{
		{Change: "--gpu-memory-utilization 0.95", Why: "the budget is a share of VRAM; the default 0.92 may leave no KV", TradeOff: "less safety margin"},
		{Change: "--max-num-batched-tokens 2048 and --max-num-seqs 64", Why: "a smaller profiling batch lowers the activation peak", TradeOff: "lower peak throughput"},
		{Change: "--quantization fp8 or --tensor-parallel-size 2", Why: "less weight memory per GPU", TradeOff: "accuracy / a second GPU"},
	}
	vllmWeightsFix = []Change{
		{Change: "--tensor-parallel-size 2", Why: "split weights over two GPUs", TradeOff: "a second GPU"},
		{Change: "--quantization fp8 (or an AWQ/GPTQ checkpoint)", Why: "half the weight bytes", TradeOff: "small accuracy cost"},
		{Change: "--cpu-offload-gb 8", Why: "keep part of the weights in host memory", TradeOff: "much slower decode"},
	}
	vllmPreemptFix = []Change{
		{Change: "--gpu-memory-utilization higher (if VRAM is free) or --tensor-parallel-size 2", Why: "vLLM's own advice: more KV memory", TradeOff: "less activation room / a second GPU"},
		{Change: "--max-num-seqs lower", Why: "fewer sequences share the pool", TradeOff: "lower throughput"},
	}
	vllmBF16Fix = []Change{{Change: "--dtype half", Why: "GPUs before compute capability 8.0 (Ampere) have no bfloat16", TradeOff: "float16 can overflow on a few models trained in bf16"}}
	vllmLoRAFix = []Change{{Change: "point --lora-modules NAME=PATH at a folder with adapter_config.json and the adapter weights, mounted into the engine's container", Why: "vLLM loads the adapter from that path", TradeOff: "none"}}
	vllmMMFix   = []Change{{Change: "--limit-mm-per-prompt '{\"image\": N}' (older releases: image=N)", Why: "the default is one image per prompt", TradeOff: "more memory reserved per request for media"}}
)

// vLLM V0's block hit-rate gauges (gpu_/cpu_prefix_cache_hit_rate) hold -1
// where there is no rate to give: the naive block allocator, used when
// prefix caching is off, answers -1 (block/naive_block.py). Datadog's Ray
// Serve capture shows both at -1 beside enable_prefix_caching="False".
const (
	VLLMHitRateUnset = -1.0
	VLLMHitRateNote  = "prefix-cache hit rate not given: vLLM V0 writes -1 when prefix caching is off"
)

var vllmV0HitRates = []string{"gpu_prefix_cache_hit_rate", "cpu_prefix_cache_hit_rate"}

// Unset says a series value is an engine's "no value" sentinel, not a
// reading: left out (unknown), not rejected as implausible. name is the
// family as served, through any wrapper (ray_vllm:, kserve_vllm:, NIM's
// bare names, a gateway's vllm_).
func Unset(name string, v float64) bool {
	if v != VLLMHitRateUnset {
		return false
	}
	for _, n := range vllmV0HitRates {
		if name == n || strings.HasSuffix(name, ":"+n) || strings.HasSuffix(name, "_"+n) {
			return true
		}
	}
	return false
}
