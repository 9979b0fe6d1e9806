package prometheus

import "github.com/llmtop/llmtop/model"

// family is one engine's metric names as Prometheus stores them: the same
// names the engine adapters in sources/engine read from /metrics
// (docs: /work/shared/reference/ENGINES.md §8), here as PromQL inputs.
// An empty name is a concept the engine does not expose: it stays unknown.
type family struct {
	engine model.Engine
	// present is a gauge every target of the engine serves: its series
	// are how the targets are found.
	present string
	// modelLabel is the label that names the served model ("" when the
	// engine's metrics carry none).
	modelLabel string
	// gauges are summed over a target's series, but KV usage, a ratio per
	// engine core, is averaged (query.go).
	gauges   map[model.Gauge]string
	counters map[model.Counter]string
	// ratios are hit/query counter pairs, evaluated as a ratio of rates.
	ratios map[model.Gauge][2]string
	// hists are histogram base names (without _bucket/_sum/_count).
	hists map[model.Latency]string
}

var families = []family{
	{
		engine: model.VLLM, present: "vllm:num_requests_running", modelLabel: "model_name",
		gauges: map[model.Gauge]string{
			model.Running: "vllm:num_requests_running", model.Waiting: "vllm:num_requests_waiting",
			model.KVUsage: "vllm:kv_cache_usage_perc",
		},
		counters: map[model.Counter]string{
			model.PromptTokens: "vllm:prompt_tokens_total", model.GenTokens: "vllm:generation_tokens_total",
			model.Requests: "vllm:request_success_total", model.Preemptions: "vllm:num_preemptions_total",
		},
		ratios: map[model.Gauge][2]string{
			model.PrefixHitGauge:  {"vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
			model.SpecAcceptGauge: {"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total"},
		},
		hists: map[model.Latency]string{
			model.TTFT: "vllm:time_to_first_token_seconds", model.TPOT: "vllm:request_time_per_output_token_seconds",
			model.ITL: "vllm:inter_token_latency_seconds", model.E2E: "vllm:e2e_request_latency_seconds",
			model.Queue: "vllm:request_queue_time_seconds",
		},
	},
	{
		engine: model.SGLang, present: "sglang:num_running_reqs", modelLabel: "model_name",
		gauges: map[model.Gauge]string{
			model.Running: "sglang:num_running_reqs", model.Waiting: "sglang:num_queue_reqs",
			model.KVUsage: "sglang:token_usage", model.GenTPSGauge: "sglang:gen_throughput",
		},
		counters: map[model.Counter]string{
			model.PromptTokens: "sglang:prompt_tokens_total", model.GenTokens: "sglang:generation_tokens_total",
			model.Requests: "sglang:num_requests_total", model.Preemptions: "sglang:num_retracted_requests_total",
		},
		ratios: map[model.Gauge][2]string{model.PrefixHitGauge: {"sglang:cached_tokens_total", "sglang:prompt_tokens_total"}},
		hists: map[model.Latency]string{
			model.TTFT: "sglang:time_to_first_token_seconds", model.ITL: "sglang:inter_token_latency_seconds",
			model.E2E: "sglang:e2e_request_latency_seconds", model.Queue: "sglang:queue_time_seconds",
		},
	},
	{
		engine: model.TGI, present: "tgi_queue_size",
		gauges: map[model.Gauge]string{model.Running: "tgi_batch_current_size", model.Waiting: "tgi_queue_size"},
		counters: map[model.Counter]string{
			model.PromptTokens: "tgi_request_input_length_sum", model.GenTokens: "tgi_request_generated_tokens_sum",
			model.Requests: "tgi_request_success",
		},
		hists: map[model.Latency]string{
			model.TPOT: "tgi_request_mean_time_per_token_duration", model.E2E: "tgi_request_duration",
			model.Queue: "tgi_request_queue_duration",
		},
	},
	{
		engine: model.LlamaCpp, present: "llamacpp:requests_processing",
		gauges: map[model.Gauge]string{model.Running: "llamacpp:requests_processing", model.Waiting: "llamacpp:requests_deferred"},
		counters: map[model.Counter]string{
			model.PromptTokens: "llamacpp:prompt_tokens_total", model.GenTokens: "llamacpp:tokens_predicted_total",
		},
	},
	{
		engine: model.TRTLLM, present: "trtllm_num_requests_running",
		gauges: map[model.Gauge]string{
			model.Running: "trtllm_num_requests_running", model.Waiting: "trtllm_num_requests_waiting",
			model.KVUsage: "trtllm_kv_cache_utilization",
		},
		counters: map[model.Counter]string{
			model.PromptTokens: "trtllm_prompt_tokens_total", model.GenTokens: "trtllm_generation_tokens_total",
			model.Requests: "trtllm_request_success_total",
		},
		hists: map[model.Latency]string{
			model.TTFT: "trtllm_time_to_first_token_seconds", model.TPOT: "trtllm_time_per_output_token_seconds",
			model.E2E: "trtllm_e2e_request_latency_seconds", model.Queue: "trtllm_request_queue_time_seconds",
		},
	},
}

// Missing is what a Prometheus source cannot give, named on every
// endpoint it reads (never shown as zero or fine).
var Missing = []string{
	"logs (Prometheus holds metrics only: pass --log for one endpoint)",
	"/slots (llama.cpp per-slot state)",
	"NVML process list (GPU processes on the replica's host)",
	"health route (only Prometheus's own up{} for the metrics route)",
	"engine version and /v1/models facts (max context)",
}
