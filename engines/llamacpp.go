package engines

import "github.com/llmtop/llmtop/model"

// LlamaCpp is llama.cpp's llama-server (ENGINES.md §4).
var LlamaCpp = Spec{
	ID:          model.LlamaCpp,
	Name:        "llama.cpp",
	Ports:       []int{8080},
	Aliases:     []string{"llama.cpp", "llama-server", "llama_cpp"},
	Prefixes:    []string{"llamacpp:"},
	MetricsPath: "/metrics",
	Hint404: "start llama-server with --metrics (env LLAMA_ARG_ENDPOINT_METRICS=1); " +
		"in router mode pass --metrics-path '/metrics?model=ID'",
	KVAgg: "max",
	// Older llama-server builds only; newer ones have no KV metric (llmtop reads /slots).
	Rules: true,
	Fleet: &Fleet{Present: model.Running,
		Gauges:   []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens)}},
	Levers: Levers{
		Front:          Change{Change: "--threads-http N (default: the CPU count)", Why: "more threads serve HTTP", TradeOff: "more CPU"},
		FrontRunsModel: true,
		// An explicit -np turns the default unified KV cache off and splits
		// -c over the slots; -kvu keeps one shared pool (issue 14 item 16).
		Cap:     "-np %s -kvu (keep -c)",
		MaxLen:  "-c %s",
		FP8KV:   Change{Change: "-ctk q8_0 -ctv q8_0 (with -fa on)", Why: "halves the KV cache", TradeOff: "small accuracy cost; V quantisation needs flash attention"},
		Chunked: Change{Change: "-ub %s", Why: "smaller physical batches interleave prompt processing with generation", TradeOff: "slower prompt processing"},
	},
	Metrics: llamacppMetrics,
}

// llama.cpp metrics the adapter reads beyond the table.
const (
	LlamaCppPromptCached     = "llamacpp:prompt_tokens_cached_total"
	LlamaCppPredictedSeconds = "llamacpp:tokens_predicted_seconds_total"
)

var llamacppMetrics = []MetricSource{
	src(string(model.Running), "", "llamacpp:requests_processing"),
	src(string(model.Waiting), "", "llamacpp:requests_deferred"),
	{Concept: string(model.KVUsage), Names: []string{"llamacpp:kv_cache_usage_ratio"},
		Derived: []string{"/slots: context held by busy slots ÷ the pool (unified cache: one slot's n_ctx; split: their sum)"},
		Note:    "the metric was removed 2025-05-21 and is read from older builds; newer ones give /slots (model/slotkv.go)"},
	src(string(model.PromptTokens), "", "llamacpp:prompt_tokens_total"),
	src(string(model.GenTokens), "", "llamacpp:tokens_predicted_total"),
	src(string(model.PromptTPSGauge), "", "llamacpp:prompt_tokens_seconds"),
	src(string(model.GenTPSGauge), "", "llamacpp:predicted_tokens_seconds"),
	src(string(model.SpecDraftTokens), "", "llamacpp:spec_decode_num_draft_tokens_total"),
	src(string(model.SpecAcceptTokens), "", "llamacpp:spec_decode_num_accepted_tokens_total"),
	src(string(model.BatchPerStep), "mean busy slots per decode since start", "llamacpp:n_busy_slots_per_decode"),
	absent(string(model.TTFT), "not exposed (per request only, in timings.prompt_ms)"),
	derived(string(model.TPOT), "aggregate mean", "llamacpp:tokens_predicted_seconds_total/llamacpp:tokens_predicted_total"),
}
