package engines

import "github.com/llmtop/llmtop/model"

// RayServeID is Ray Serve LLM serving vLLM (SERVING-LAYERS.md §3f): vLLM's
// metrics re-exported by Ray's metrics agent as ray_vllm:<name>, with Ray's
// labels (Component, NodeAddress, SessionName, Version, WorkerId) beside
// model_name, on each node's metrics export port.
const RayServeID model.Engine = "rayserve"

// rayPrefix is what Ray's metrics agent puts before vLLM's names.
const rayPrefix = "ray_"

// RayServe is read by the vLLM adapter once the prefix is cut; each Ray
// replica (WorkerId) is its own vLLM engine with its own KV pool, so KV
// usage is the fullest replica's and counts add up, as for vLLM's
// data-parallel engines. Its levers are the LLMConfig's engine_kwargs,
// which Ray hands to vLLM.
var RayServe = Spec{
	ID:          RayServeID,
	Name:        "Ray Serve (vLLM)",
	Aliases:     []string{"ray", "ray-serve", "ray_serve"},
	Prefixes:    []string{rayPrefix + "vllm:"},
	MetricsPath: "/metrics",
	Hint404: "Ray exports each node's metrics on its metrics export port (ray start --metrics-export-port; " +
		"the dashboard's Metrics view names it): point llmtop at http://NODE:PORT",
	ModelLabel: "model_name",
	DPLabel:    "WorkerId",
	KVAgg:      "max",
	Rules:      true,
	Fleet:      VLLM.Fleet,
	Like:       model.VLLM,
	Reexport:   rayPrefix,
	Levers: Levers{
		Cap:          "engine_kwargs: {max_num_seqs: %s} in the LLMConfig",
		MaxLen:       "engine_kwargs: {max_model_len: %s} in the LLMConfig",
		MemFraction:  "engine_kwargs gpu_memory_utilization",
		FP8KV:        Change{Change: "engine_kwargs: {kv_cache_dtype: fp8} in the LLMConfig", Why: VLLM.Levers.FP8KV.Why, TradeOff: VLLM.Levers.FP8KV.TradeOff},
		Chunked:      Change{Change: "engine_kwargs: {max_num_batched_tokens: %s} in the LLMConfig", Why: "caps the prompt tokens that share a step with the decodes", TradeOff: "long prompts take more steps"},
		DataParallel: "deployment_config: {num_replicas: %s} (or autoscaling_config max_replicas)",
	},
	Metrics: prefixed(rayPrefix, vllmMetrics),
}

// prefixed is an engine's table under a re-exporter's prefix.
func prefixed(p string, ms []MetricSource) []MetricSource {
	return wrapped(p, "", ms)
}

// wrapped is an engine's table as a wrapping layer serves it: strip cut
// from each name, p put before.
func wrapped(p, strip string, ms []MetricSource) []MetricSource {
	add := func(ns []string) []string {
		if ns == nil {
			return nil
		}
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = wrapName(p, strip, n)
		}
		return out
	}
	out := make([]MetricSource, len(ms))
	for i, m := range ms {
		out[i] = MetricSource{Concept: m.Concept, Names: add(m.Names), Derived: add(m.Derived), Note: m.Note, Scale: m.Scale}
	}
	return out
}
