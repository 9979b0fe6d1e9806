package engines

import "github.com/llmtop/llmtop/model"

// Triton is Triton Inference Server with the TensorRT-LLM backend
// (ENGINES.md §5): its nv_trt_llm_* gauges and nv_inference_* counters.
var Triton = Spec{
	ID:          model.Triton,
	Name:        "Triton",
	Ports:       []int{8000},
	Prefixes:    []string{"nv_inference_", "nv_trt_llm_"},
	MetricsPath: "/metrics",
	Hint404:     "Triton serves metrics on its metrics port (default 8002, --allow-metrics/--metrics-port): point llmtop at http://HOST:8002",
	KVAgg:       "max",
	Rules:       true,
	Runs:        model.TRTLLM,
	// The levers of the TensorRT-LLM engine it serves (its batch, context,
	// KV memory and quantisation are the engine's settings), none of
	// trtllm-serve's own front end: Triton fixes the TP degree when the
	// engine is built, has its own health and metrics routes, and renders
	// no chat template of trtllm-serve's.
	Levers: Levers{Cap: TRTLLM.Levers.Cap, MaxLen: TRTLLM.Levers.MaxLen, MemFraction: TRTLLM.Levers.MemFraction,
		MemFractionDefault: TRTLLM.Levers.MemFractionDefault, FP8KV: TRTLLM.Levers.FP8KV, Chunked: TRTLLM.Levers.Chunked,
		Quantize: TRTLLM.Levers.Quantize, ActivationRoom: TRTLLM.Levers.ActivationRoom, Prefill: TRTLLM.Levers.Prefill},
	Metrics: tritonMetrics,
	Process: Process{Programs: []string{"tritonserver"}},
	// Readiness fails while models load (or failed to).
	Health: Health{Route: "/v2/health/ready", Means: model.HealthLoading, Why: "not ready: models loading or failed to load"},
}

// Triton metrics the adapter reads beyond the table.
const (
	// TritonFamily is the prefix both of Triton's families share.
	TritonFamily          = "nv_"
	TritonRequestMetrics  = "nv_trt_llm_request_metrics"
	TritonKVBlockMetrics  = "nv_trt_llm_kv_cache_block_metrics"
	TritonPending         = "nv_inference_pending_request_count"
	TritonRequestSuccess  = "nv_inference_request_success"
	TritonRequestFailure  = "nv_inference_request_failure"
	TritonRequestDuration = "nv_inference_request_duration_us"
	TritonQueueDuration   = "nv_inference_queue_duration_us"
)

var tritonMetrics = []MetricSource{
	derived(string(model.Running), "", `nv_trt_llm_request_metrics{request_type="active"}`),
	derived(string(model.Waiting), "", `nv_trt_llm_request_metrics{request_type="waiting"}`, "nv_inference_pending_request_count"),
	derived(string(model.KVUsage), "", `nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}`,
		`nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"}/nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max"}`),
	absent(string(model.TTFT), "not exposed"),
	derived(string(model.E2E), "mean only", "nv_inference_request_duration_us/nv_inference_request_success"),
	derived(string(model.Queue), "mean only", "nv_inference_queue_duration_us/nv_inference_request_success"),
}
