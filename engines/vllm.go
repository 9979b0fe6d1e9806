package engines

import "github.com/llmtop/llmtop/model"

// VLLM is vLLM (ENGINES.md §1): V1 metric names, with the names older
// releases used after them.
var VLLM = Spec{
	ID:          model.VLLM,
	Name:        "vLLM",
	Ports:       []int{8000},
	Prefixes:    []string{"vllm:"},
	MetricsPath: "/metrics",
	Hint404: "vLLM always serves /metrics on its API port (the one /v1 answers on): a 404 means another port or route, " +
		"or a proxy in front that does not pass it; point llmtop at the API port or pass --metrics-path",
	HintEmpty:  "vLLM started with " + VLLMDisableLogStats + " serves /metrics without any vllm: metrics: start it without that flag",
	ModelLabel: "model_name",
	DPLabel:    "engine",
	KVAgg:      "max",
	Rules:      true,
	Fleet: &Fleet{Present: model.Running,
		Gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: model.FinishReasons, model.Preemptions: string(model.Preemptions)},
		Ratios: map[model.Gauge][2]string{
			model.PrefixHitGauge:  {string(model.PrefixHits), string(model.PrefixQueries)},
			model.SpecAcceptGauge: {string(model.SpecAcceptTokens), string(model.SpecDraftTokens)},
		},
		Hists: []model.Latency{model.TTFT, model.TPOT, model.ITL, model.E2E, model.Queue}},
	Levers: Levers{
		Cap:                "--max-num-seqs %s",
		MaxLen:             "--max-model-len %s",
		MemFraction:        "--gpu-memory-utilization",
		MemFractionDefault: 0.92,
		FP8KV:              Change{Change: "--kv-cache-dtype fp8", Why: "halves KV bytes per token: about twice the tokens in the same pool", TradeOff: "small accuracy cost; needs a GPU with fp8 (Ada/Hopper or newer) for speed"},
		Chunked:            Change{Change: "--max-num-batched-tokens %s without " + VLLMNoChunkedPrefill},
		DataParallel:       "--data-parallel-size %s",
		Front: Change{Change: "--api-server-count 2 (or more)", Why: "tokenisation, detokenisation and JSON run in more API-server processes",
			TradeOff: "more CPU and memory; vLLM then logs no stats lines (scrape /metrics)"},
		TensorParallel: []string{"--tensor-parallel-size", "-tp"},
	},
	Metrics: vllmMetrics,
}

// vLLM metrics and flags the adapter and the advice read beyond the table.
const (
	// VLLMCacheConfig is the info gauge whose labels carry the cache
	// configuration (block size, dtype, gpu_memory_utilization, blocks).
	VLLMCacheConfig = "vllm:cache_config_info"
	// VLLMWaitingByReason is the waiting gauge split by reason (the
	// table's second Waiting name).
	VLLMWaitingByReason = "vllm:num_requests_waiting_by_reason"
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
}
