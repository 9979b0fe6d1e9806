package engines

import "github.com/llmtop/llmtop/model"

// SGLang is SGLang (ENGINES.md §2); metrics only with --enable-metrics.
var SGLang = Spec{
	ID:          model.SGLang,
	Name:        "SGLang",
	Ports:       []int{30000},
	Prefixes:    []string{"sglang:"},
	MetricsPath: "/metrics",
	Hint404:     "SGLang exposes metrics only when started with --enable-metrics",
	ModelLabel:  "model_name",
	// Ranks of one DP-attention group report the same pool: the adapter
	// averages the fractions, and so do the queries.
	KVAgg: "avg",
	Rules: true,
	Fleet: &Fleet{Present: model.Running,
		Gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage, model.GenTPSGauge},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: string(model.Requests), model.Preemptions: string(model.Preemptions)},
		Ratios: map[model.Gauge][2]string{model.PrefixHitGauge: {string(model.PrefixHits), string(model.PrefixQueries)}},
		Hists:  []model.Latency{model.TTFT, model.ITL, model.E2E, model.Queue}},
	Levers: Levers{
		Cap:            "--max-running-requests %s",
		MaxLen:         "--context-length %s",
		MemFraction:    "--mem-fraction-static",
		FP8KV:          Change{Change: "--kv-cache-dtype fp8_e5m2", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
		Chunked:        Change{Change: "--chunked-prefill-size %s", Why: "bounds the prefill work per step", TradeOff: "slightly longer TTFT for long prompts"},
		DataParallel:   "--dp-size %s",
		Front:          Change{Change: "--tokenizer-worker-num 2 (or more)", Why: "tokenisation runs in more processes", TradeOff: "more CPU and memory"},
		TensorParallel: []string{"--tp-size", "--tp"},
	},
	Metrics: sglangMetrics,
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
}
