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
	Metrics: wrapped("", nimStrips, vllmMetrics),
}
