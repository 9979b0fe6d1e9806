package engines

import (
	"fmt"

	"github.com/llmtop/llmtop/model"
)

// TRTLLM is NVIDIA TensorRT-LLM's trtllm-serve (ENGINES.md §5).
var TRTLLM = Spec{
	ID:          model.TRTLLM,
	Name:        "TensorRT-LLM",
	Ports:       []int{8000},
	Aliases:     []string{"trt-llm", "tensorrt-llm", "tensorrt_llm", "trtllm-serve"},
	Prefixes:    []string{"trtllm_"},
	MetricsPath: "/prometheus/metrics",
	Hint404: "trtllm-serve serves Prometheus at /prometheus/metrics only with return_perf_metrics: true " +
		"in its --config (--extra_llm_api_options) YAML; add enable_iter_perf_stats: true for the iteration gauges",
	ModelLabel: "", // model_name is "undefined" on most builds: the fleet groups by target
	KVAgg:      "max",
	Rules:      true,
	// the newest entry of trtllm-serve's JSON iteration stats
	// (sources/engine/trtllm.go)
	StepBatchNewest: "inflightBatchingStats.numScheduledRequests (iteration stats)",
	Fleet: &Fleet{Present: model.Running,
		Gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: model.FinishReasons},
		Ratios:   map[model.Gauge][2]string{model.PrefixHitGauge: {string(model.PrefixHits), string(model.PrefixQueries)}},
		Hists:    []model.Latency{model.TTFT, model.TPOT, model.E2E, model.Queue, model.KVTransfer},
		HistSums: []model.Counter{model.KVTransferBytes}},
	Levers: Levers{
		Warmup:         Change{Change: "route traffic after /health_generate returns 200", Why: "it runs a 1-token generation", TradeOff: "slower rollout"},
		SpeculateLess:  Change{Change: "speculative_config.max_draft_len lower in the --config YAML", Why: "shorter drafts waste less", TradeOff: "less speed-up"},
		Speculate:      Change{Change: "speculative_config (decoding_type: Eagle or NGram) in the --config YAML", Why: "several tokens per bandwidth-bound step when drafts are accepted", TradeOff: "gains shrink at large batch"},
		EnableMetrics:  Change{Change: "return_perf_metrics: true (and enable_iter_perf_stats: true) in the --config YAML", Why: "trtllm-serve registers /prometheus/metrics only then", TradeOff: "small per-request bookkeeping"},
		Template:       Change{Change: "check the tokenizer directory's tokenizer_config.json chat_template", Why: "trtllm-serve renders chat with it", TradeOff: "none"},
		Stop:           Change{Change: "check end_id / the tokenizer's EOS in the engine config; or send stop", Why: "TensorRT-LLM stops on its end_id", TradeOff: "none"},
		Quantize:       Change{Change: "an fp8 engine/checkpoint (quant_config in the --config YAML)", Why: "fewer weight bytes per token", TradeOff: "small accuracy cost"},
		Front:          Change{Change: "--num_postprocess_workers 2 (or more)", Why: "detokenisation and OpenAI formatting in more processes", TradeOff: "more CPU and memory"},
		TensorParallel: []string{"--tp_size"},
		MoreGPUs:       []string{"--pp_size"},
		Prefill: func(n int) Change {
			return Change{Change: fmt.Sprintf("--max_num_tokens %d", max(n, 8192)), Why: "more context tokens per iteration", TradeOff: "more activation memory"}
		},
		ActivationRoom:     Change{Change: "--kv_cache_free_gpu_memory_fraction 0.8 and --max_num_tokens 4096", Why: "room for activations", TradeOff: "smaller KV pool"},
		Cap:                "--max_batch_size %s",
		MaxLen:             "--max_seq_len %s",
		MemFraction:        "--kv_cache_free_gpu_memory_fraction",
		MemFractionDefault: 0.9,
		FP8KV:              Change{Change: "kv_cache_config: {dtype: fp8} in the --config YAML", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
		Chunked:            Change{Change: "--enable_chunked_prefill --max_num_tokens %s", Why: "context chunks share steps with generation", TradeOff: "slightly longer TTFT for long prompts"},
	},
	Metrics: trtllmMetrics,
	Logs:    trtllmLogs,
	Process: Process{Programs: []string{"trtllm-serve"}, Modules: []string{"tensorrt_llm"}, Serves: []string{"trtllm-serve"},
		Host: "localhost", PortFlags: []string{"--port"}, HostFlags: []string{"--host"}},
	Health: Health{Route: "/health", Status: 503, BodyHas: "load", Means: model.HealthLoading, Why: "loading (503)",
		Unhealthy: "trtllm-serve reports the LLM unavailable"},
	OwnedBy: []string{"tensorrt_llm", "trtllm"},
}

// TensorRT-LLM metrics the adapter reads beyond the table.
const (
	TRTLLMKVMaxBlocks      = "trtllm_kv_cache_max_blocks"
	TRTLLMKVTokensPerBlock = "trtllm_kv_cache_tokens_per_block"
	TRTLLMRequestSuccess   = "trtllm_request_success_total"
	TRTLLMPromptCached     = "trtllm_prompt_cached_tokens_total"
	TRTLLMKVReusedBlocks   = "trtllm_kv_cache_reused_blocks_total"
	TRTLLMKVMissedBlocks   = "trtllm_kv_cache_missed_blocks_total"
)

var trtllmMetrics = []MetricSource{
	src(string(model.Running), "", "trtllm_num_requests_running"),
	src(string(model.Waiting), "", "trtllm_num_requests_waiting"),
	src(string(model.KVUsage), "", "trtllm_kv_cache_utilization"),
	src(string(model.PrefixHitGauge), "", "trtllm_kv_cache_hit_rate"),
	src(string(model.MaxRunning), "", "trtllm_max_num_active_requests"),
	derived(string(model.PrefixHits), "cached prompt tokens, else reused KV blocks", "trtllm_prompt_cached_tokens_total", "trtllm_kv_cache_reused_blocks_total"),
	derived(string(model.PrefixQueries), "prompt tokens, else reused + missed KV blocks", "trtllm_prompt_tokens_total", "trtllm_kv_cache_reused_blocks_total+trtllm_kv_cache_missed_blocks_total"),
	src(string(model.SpecDraftTokens), "", "trtllm_spec_decode_num_draft_tokens_total"),
	src(string(model.SpecAcceptTokens), "", "trtllm_spec_decode_num_accepted_tokens_total"),
	src(string(model.PromptTokens), "", "trtllm_prompt_tokens_total"),
	src(string(model.GenTokens), "", "trtllm_generation_tokens_total"),
	src(model.FinishReasons, "by finished_reason", "trtllm_request_success_total"),
	src(string(model.RequestErrors), "", "trtllm_request_error_total"),
	src(string(model.TTFT), "histogram", "trtllm_time_to_first_token_seconds"),
	src(string(model.TPOT), "histogram", "trtllm_time_per_output_token_seconds"),
	src(string(model.E2E), "histogram", "trtllm_e2e_request_latency_seconds"),
	src(string(model.Queue), "histogram", "trtllm_request_queue_time_seconds"),
	src(string(model.Prefill), "histogram", "trtllm_request_prefill_time_seconds"),
	src(string(model.Decode), "histogram", "trtllm_request_decode_time_seconds"),
	src(string(model.KVTransfer), "histogram (Dynamo's TRT-LLM worker, disaggregated: per request, from TRT-LLM's kv_cache_transfer_start to _end)", TRTLLMKVTransferLat),
	src(string(model.KVTransferBytes), "histogram of bytes per request (Dynamo's TRT-LLM worker): its sum, the bytes moved", TRTLLMKVTransferBytes),
}

// The KV transfer families NVIDIA Dynamo's TensorRT-LLM worker adds
// (components/src/dynamo/trtllm additional metrics; names in
// dynamo.prometheus_names.trtllm_additional), with its P/D role label.
const (
	TRTLLMKVTransferLat   = "trtllm_kv_transfer_latency_seconds"
	TRTLLMKVTransferBytes = "trtllm_kv_transfer_bytes"
	// TRTLLMDisaggMode is "prefill", "decode" or "prefill_and_decode" on
	// every series of the worker.
	TRTLLMDisaggMode = "disaggregation_mode"
)

// trtllmLogs are its log lines, most specific first (LOG-PATTERNS.md).
var trtllmLogs = []LogLine{
	{ID: "trtllm_bind", Finding: "startup_port_in_use", Sev: crit, Category: "availability", Needle: "Failed to bind socket to ",
		Regex:   `Failed to bind socket to (?P<host>\S+):(?P<port>\d+): (?P<error>.*)`,
		Title:   "trtllm-serve could not bind port {port}",
		Meaning: "the HTTP port is busy: stop the other process or pass another --port"},
	{ID: "trtllm_health_failed", Finding: "health_check_failed", Sev: crit, Category: "availability", Needle: "Health generate check failed with status code",
		Regex:   `Health generate check failed with status code: (?P<code>\d+)`,
		Title:   "TRT-LLM health check failed (status {code})",
		Meaning: "the executor does not answer generate requests"},
}
