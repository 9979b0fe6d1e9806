package engines

import "github.com/llmtop/llmtop/model"

// NIMID is NVIDIA NIM for LLMs (SERVING-LAYERS.md §3f;
// docs.nvidia.com/nim/large-language-models/latest/observability.html): on
// /v1/metrics it serves vLLM's names without the vllm: prefix
// (num_requests_running, gpu_cache_usage_perc, time_to_first_token_seconds,
// …) labelled model_name only.
const NIMID model.Engine = "nim"

// nimStrips is the prefix NIM leaves off vLLM's names.
const nimStrips = "vllm:"

// NIM is read by the vLLM adapter with vLLM's prefix put back.
var NIM = Spec{
	ID:      NIMID,
	Name:    "NVIDIA NIM (vLLM)",
	Aliases: []string{"nvidia-nim"},
	// NIM's families carry no prefix of their own: these are the ones
	// that give it away (vLLM's gauges, bare).
	Prefixes:    []string{"num_requests_running", "num_requests_waiting", "gpu_cache_usage_perc"},
	Ports:       []int{8000},
	MetricsPath: "/v1/metrics",
	Hint404:     "NIM serves its metrics on /v1/metrics of its API port (8000): point llmtop at that port",
	ModelLabel:  "model_name",
	KVAgg:       "max",
	// Not read from Prometheus (Fleet nil): its bare names
	// (num_requests_running) are too plain to find its targets by among
	// every other service's.
	Like:    model.VLLM,
	Strips:  nimStrips,
	Levers:  VLLM.Levers,
	Own:     nimOwn,
	Metrics: append(wrapped("", nimStrips, vllmMetrics), nimOwn...),
}

// NIM's own families beside vLLM's, as Datadog's NIM 1.0.0 capture serves
// them (testdata/engines/dd-nim-1.0.0-metrics-8b7db5d2.txt).
const (
	NIMMaxRunning = "num_request_max"
	NIMFailures   = "request_failure_total"
)

var nimOwn = []MetricSource{
	src(string(model.MaxRunning), "NIM's own: the most requests it runs at once", NIMMaxRunning),
	src(string(model.RequestErrors), "NIM's own: failed requests (request_success_total counts the others)", NIMFailures),
}
