package engines

import (
	"fmt"

	"github.com/llmtop/llmtop/model"
)

// SGLang is SGLang (ENGINES.md §2); metrics only with --enable-metrics.
var SGLang = Spec{
	ID:          model.SGLang,
	Name:        "SGLang",
	Ports:       []int{30000},
	Prefixes:    []string{"sglang:"},
	MetricsPath: "/metrics",
	Hint404:     "SGLang exposes metrics only when started with --enable-metrics",
	ModelLabel:  "model_name",
	DPLabel:     "dp_rank",
	// Ranks of one DP-attention group report the same pool: the adapter
	// averages the fractions, and so do the queries.
	KVAgg:      "avg",
	TotalMatch: SGLangPriority + `=""`,
	// kv_transfer_latency_ms and kv_transfer_total_mb are observed on the
	// prefill (sending) instance (req_time_stats).
	KVSentSide: true,
	Rules:      true,
	// sglang:num_retracted_requests_total: the scheduler retracts a
	// decoding request when the pool runs out and re-queues it
	Preemption: Preemption{Counted: "retractions"},
	Fleet: &Fleet{Present: model.Running,
		Gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage, model.GenTPSGauge,
			model.PDBootstrapQueue, model.PDPreallocQueue, model.PDTransferQueue},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: string(model.Requests), model.Preemptions: string(model.Preemptions),
			model.KVTransferFailures: string(model.KVTransferFailures)},
		HistSums: []model.Counter{model.KVTransferBytes},
		Ratios:   map[model.Gauge][2]string{model.PrefixHitGauge: {string(model.PrefixHits), string(model.PrefixQueries)}},
		Hists:    []model.Latency{model.TTFT, model.ITL, model.E2E, model.Queue, model.KVTransfer}},
	Levers: Levers{
		MaxLoRAs:       "--max-loras-per-batch %s",
		Warmup:         Change{Change: "route traffic only after /health_generate returns 200", Why: "it runs a real generation", TradeOff: "slower rollout"},
		SpeculateLess:  Change{Change: "--speculative-num-draft-tokens / --speculative-num-steps lower (or no --speculative-algorithm)", Why: "rejected drafts cost verify compute", TradeOff: "less speed-up when drafts hit"},
		Speculate:      Change{Change: "--speculative-algorithm EAGLE --speculative-draft-model-path <EAGLE head for the model>", Why: "several tokens per bandwidth-bound step when drafts are accepted", TradeOff: "a draft model's memory; gains shrink at large batch"},
		EnableMetrics:  Change{Change: "--enable-metrics", Why: "SGLang serves /metrics only with this flag (default off)", TradeOff: "negligible overhead"},
		Template:       Change{Change: "--chat-template NAME_OR_PATH matching the model", Why: "SGLang renders chat with it", TradeOff: "none"},
		Tokenizer:      Change{Change: "--tokenizer-path MODEL_REPO (the model's own)", Why: "a tokenizer from another model splits text badly", TradeOff: "none"},
		Stop:           Change{Change: "check the chat template and the model's generation_config.json eos_token_id; or send stop", Why: "SGLang stops on the EOS ids it knows", TradeOff: "none"},
		Quantize:       Change{Change: "--quantization fp8", Why: "half the weight bytes read per token", TradeOff: "small accuracy cost"},
		Cap:            "--max-running-requests %s",
		MaxLen:         "--context-length %s",
		MemFraction:    "--mem-fraction-static",
		FP8KV:          Change{Change: "--kv-cache-dtype fp8_e5m2", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
		Chunked:        Change{Change: "--chunked-prefill-size %s", Why: "bounds the prefill work per step", TradeOff: "slightly longer TTFT for long prompts"},
		DataParallel:   "--dp-size %s",
		Front:          Change{Change: "--tokenizer-worker-num 2 (or more)", Why: "tokenisation runs in more processes", TradeOff: "more CPU and memory"},
		TensorParallel: []string{"--tp-size", "--tp"},
		MoreGPUs:       []string{"--dp", "--pp-size"},
		ActivationRoom: Change{Change: "--mem-fraction-static lower by 0.05 and --chunked-prefill-size 4096", Why: "room for activations", TradeOff: "smaller KV pool"},
		NoGraphs:       "--disable-cuda-graph",
		Prefill: func(n int) Change {
			return Change{Change: fmt.Sprintf("--max-prefill-tokens %d --chunked-prefill-size %d", max(n, 16384), n), Why: "more prompt tokens per prefill step", TradeOff: "decode stalls grow"}
		},
		GraphSizes: "a smaller --cuda-graph-max-bs",
		Precision:  []string{"--dtype", "--quantization", "--kv-cache-dtype"},
	},
	Metrics: sglangMetrics,
	Logs:    sglangLogs,
	Process: Process{Programs: []string{"sglang"}, Modules: []string{"sglang"}, Serves: []string{"-m sglang"},
		Host: "127.0.0.1", PortFlags: []string{"--port"}, HostFlags: []string{"--host"}},
	Health: Health{Route: "/health", Status: 503, Means: model.HealthLoading, Why: "starting or shutting down (503)",
		Unhealthy: "SGLang's health check failed: the scheduler or detokenizer stopped responding"},
	OwnedBy: []string{"sglang"},
	// POST /tokenize {prompt} answers {tokens, count} in newer releases,
	// as vLLM's (python/sglang/srt/entrypoints/http_server.py); no route
	// renders its chat template.
	Probe: Probe{Tokenize: model.VLLM},
}

// SGLang metrics the adapter reads beyond the table.
const (
	SGLangTokenUsage       = "sglang:token_usage"
	SGLangKVUsedTokens     = "sglang:kv_used_tokens"
	SGLangMaxTotalTokens   = "sglang:max_total_num_tokens"
	SGLangCacheHitRate     = "sglang:cache_hit_rate"
	SGLangSpecAcceptLength = "sglang:spec_accept_length"
	SGLangSpecAcceptRate   = "sglang:spec_accept_rate"
	SGLangCachedTokens     = "sglang:cached_tokens_total"
	SGLangPerStageLatency  = "sglang:per_stage_req_latency_seconds"
	SGLangContextLen       = "sglang:context_len"
	SGLangPageSize         = "sglang:page_size"
	SGLangKVCacheMemoryGB  = "sglang:kv_cache_memory_usage_gb"
	SGLangWeightMemoryGB   = "sglang:weight_memory_usage_gb"
	SGLangRunning          = "sglang:num_running_reqs"
)

var sglangMetrics = []MetricSource{
	src(string(model.Running), "", "sglang:num_running_reqs"),
	src(string(model.Waiting), "", "sglang:num_queue_reqs"),
	{Concept: string(model.KVUsage), Names: []string{"sglang:token_usage"}, Derived: []string{"sglang:kv_used_tokens/sglang:max_total_num_tokens"}},
	src(string(model.KVCapacityTokens), "", "sglang:max_total_num_tokens"),
	src(string(model.PrefixHitGauge), "", "sglang:cache_hit_rate"),
	src(string(model.GenTPSGauge), "", "sglang:gen_throughput"),
	src(string(model.PromptTokens), "", "sglang:prompt_tokens_total"),
	src(string(model.GenTokens), "", "sglang:generation_tokens_total"),
	src(string(model.Requests), "", "sglang:num_requests_total"),
	derived(string(model.PrefixHits), "cached prompt tokens", "sglang:cached_tokens_total"),
	derived(string(model.PrefixQueries), "prompt tokens, read beside the cached ones", "sglang:prompt_tokens_total"),
	src(string(model.Preemptions), "retracted requests", "sglang:num_retracted_requests_total"),
	src(string(model.TTFT), "histogram", "sglang:time_to_first_token_seconds"),
	src(string(model.ITL), "histogram", "sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
	src(string(model.E2E), "histogram", "sglang:e2e_request_latency_seconds"),
	src(string(model.Queue), "histogram", "sglang:queue_time_seconds"),
	src(string(model.PromptLen), "histogram (--collect-tokens-histogram)", "sglang:prompt_tokens_histogram"),
	src(string(model.OutputLen), "histogram (--collect-tokens-histogram)", "sglang:generation_tokens_histogram"),
	src(string(model.KVTransferFailures), "requests whose KV transfer failed", "sglang:num_transfer_failed_reqs_total"),
	scaled(src(string(model.KVTransfer), "histogram in ms (read as seconds), observed on the prefill (sending) instance from the request's entry into its transfer queue; a gauge before sglang PR #19009, not read", "sglang:kv_transfer_latency_ms"), 1e-3),
	scaled(src(string(model.KVTransferBytes), "histogram in MB per transfer (total_bytes / 1024²): its sum read as bytes; on the prefill instance", SGLangKVTransferMB), 1<<20),
	src(string(model.PDBootstrapQueue), "prefill requests waiting for the handshake with their decode peer (the total, priority=\"\")", SGLangBootstrapQ),
	src(string(model.PDPreallocQueue), "decode requests waiting to preallocate KV space for the transfer (the total, priority=\"\")", SGLangPreallocQueue),
	src(string(model.PDTransferQueue), "decode requests polling for their KV (the total, priority=\"\")", SGLangTransferQueue),
	src(string(model.LoRASlotsUsed), "LoRA adapter slots occupied (with --enable-lora)", SGLangLoRAUsed),
	src(string(model.LoRASlotsTotal), "LoRA adapter slots in all: --max-loras-per-batch", SGLangLoRATotal),
}

// SGLang's disaggregation labels and flag (SERVING-LAYERS.md §3b;
// metrics_collector.py, disaggregation/utils.py @d315eb72): engine_type is
// unified, prefill or decode on every series.
const (
	SGLangEngineType    = "engine_type"
	SGLangDisaggMode    = "--disaggregation-mode"
	SGLangKVTransferLat = "sglang:kv_transfer_latency_ms"
	SGLangTransferQueue = "sglang:num_decode_transfer_queue_reqs"
	SGLangPreallocQueue = "sglang:num_decode_prealloc_queue_reqs"
	SGLangBootstrapQ    = "sglang:num_prefill_bootstrap_queue_reqs"
	SGLangTransferFail  = "sglang:num_transfer_failed_reqs_total"
	SGLangKVTransferMB  = "sglang:kv_transfer_total_mb"
	// SGLangPriority is the label a QueueCount gauge (running, waiting,
	// the P/D queues) carries its per-priority breakdown in, with
	// priority scheduling on; the total is the series with it empty.
	SGLangPriority  = "priority"
	SGLangLoRAUsed  = "sglang:lora_pool_slots_used"
	SGLangLoRATotal = "sglang:lora_pool_slots_total"
)

// sglangLogs are its log lines, most specific first (LOG-PATTERNS.md).
var sglangLogs = []LogLine{
	{ID: "sglang_prefill", Sev: info, Category: "stats", Needle: "Prefill batch",
		Regex:   `Prefill batch(?: \[\d+\])?, #new-seq: (?P<new_seq>\d+), #new-token: (?P<new_token>\d+), #cached-token: (?P<cached_token>\d+), `,
		Title:   "SGLang prefill: {new_seq} new seqs, {new_token} new + {cached_token} cached tokens",
		Meaning: "SGLang's line for each prefill batch"},
	{ID: "sglang_decode", Sev: info, Category: "stats", Needle: "Decode batch",
		Regex:   `Decode batch(?: \[\d+\])?, #running-req: (?P<running>\d+), .*gen throughput \(token/s\): (?P<gen_tps>[\d.]+), #queue-req: (?P<waiting>\d+)`,
		Title:   "SGLang decode: {running} running, {waiting} queued, {gen_tps} tok/s",
		Meaning: "SGLang's decode line (every --decode-log-interval steps)"},
	{ID: "sglang_kv_retract", Finding: "kv_retraction_log", Fix: sglangRetractFix, Sev: warn, Category: "memory", Needle: "KV cache pool is full. Retract requests.",
		// #new_tokens_gained is recent; most SGLang releases go straight on to #new_token_ratio.
		Regex:   `KV cache pool is full\. Retract requests\. #retracted_reqs: (?P<retracted>\d+)(?:, #new_tokens_gained: (?P<tokens_gained>\d+))?`,
		Title:   "SGLang retracted {retracted} requests: KV cache pool full",
		Meaning: "decode ran out of KV cache (SGLang's preemption): raise --mem-fraction-static or lower --max-running-requests"},
	{ID: "sglang_batch_oom", Finding: "token_pool_oom", Fix: sglangBatchOOMFix, Sev: crit, Category: "memory", Needle: " out of memory. Try to lower your batch size.",
		Regex:   `(?P<phase>Prefill|Decode) out of memory\. Try to lower your batch size\.`,
		Title:   "SGLang {phase} out of token memory",
		Meaning: "the token pool could not hold the batch: lower --max-running-requests / --chunked-prefill-size"},
	{ID: "sglang_req_slots_oom", Finding: "req_slots_oom", Fix: sglangReqSlotsFix, Sev: crit, Category: "memory", Needle: "alloc_req_slots runs out of memory",
		Regex:   `alloc_req_slots runs out of memory`,
		Title:   "SGLang out of request slots",
		Meaning: "set a smaller --max-running-requests"},
	{ID: "sglang_mem_fraction", Finding: "startup_mem_fraction", Sev: crit, Category: "memory", Needle: "Not enough memory. Please try to increase --mem-fraction-static",
		Regex:   `Not enough memory\. Please try to increase --mem-fraction-static\.(?: Current value: mem_fraction_static=(?P<mem_fraction_static>[\d.]+))?`,
		Title:   "SGLang: KV pool would be empty",
		Meaning: "raise --mem-fraction-static"},
	{ID: "sglang_port_in_use", Sev: warn, Category: "distributed", Needle: "Port is already in use.",
		Regex:   `Port is already in use\.`,
		Title:   "SGLang internal port busy",
		Meaning: "an internal port (dist init / port base) collided: pass another --port or --dist-init-addr"},
	{ID: "sglang_health_failed", Finding: "health_check_failed", Sev: crit, Category: "availability", Needle: "Health check failed. Server couldn't get a response from detokenizer",
		Regex:   `Health check failed\. Server couldn't get a response from detokenizer for last (?P<seconds>\d+) seconds`,
		Title:   "SGLang health check failed: no detokenizer response for {seconds} s",
		Meaning: "the scheduler is hung; /health_generate returns 503"},
	{ID: "sglang_ready", Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "The server is fired up and ready to roll!",
		Regex: `The server is fired up and ready to roll!`,
		Title: "SGLang is ready", Meaning: "the server accepts requests"},
	{ID: "sglang_deprecated_endpoint", Sev: info, Category: "config", Needle: "' is deprecated",
		Regex:   `'(?P<endpoint>/get_model_info|/get_server_info|/get_load)' is deprecated`,
		Title:   "SGLang: {endpoint} is deprecated",
		Meaning: "a client (maybe a monitor) uses an old endpoint: /model_info, /server_info, /v1/loads replace them"},
	{ID: "sglang_weights_loaded", Sev: info, Category: "memory", Needle: "Load weight end.",
		Regex: `Load weight end\.(?:.*?avail mem=(?P<avail_gb>[\d.]+) GB)?.*?mem usage=(?P<gib>[\d.]+) GB`,
		Title: "weights take {gib} GB on each GPU", Reports: gibOf(AmountWeights, "gib"),
		Meaning: "the memory the model's weights took on this rank's GPU, and what was left for the KV cache and activations (SGLang's GB are GiB)"},
}

// The fixes of SGLang's own failure lines (LogLine.Fix).
var (
	sglangRetractFix = []Change{
		{Change: "--mem-fraction-static higher by 0.05 (if VRAM is free)", Why: "a bigger token pool", TradeOff: "less activation room"},
		{Change: "--max-running-requests lower", Why: "fewer concurrent decodes", TradeOff: "lower throughput"},
		{Change: "--kv-cache-dtype fp8_e5m2", Why: "half the bytes per token", TradeOff: "small accuracy cost"},
	}
	sglangBatchOOMFix = []Change{{Change: "--max-running-requests lower and --chunked-prefill-size 4096", Why: "smaller batches need fewer tokens at once", TradeOff: "lower throughput"}}
	sglangReqSlotsFix = []Change{{Change: "--max-running-requests lower", Why: "SGLang's own advice", TradeOff: "lower concurrency"}}
)
