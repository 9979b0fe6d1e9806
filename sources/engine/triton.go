package engine

import (
	"sort"

	"github.com/llmtop/llmtop/model"
)

const tritonMeanApprox = "mean only: Triton's cumulative µs counter ÷ successful requests"

// mapTriton maps Triton's metrics port (default 8002): one sample per
// `model` label (an ensemble shows its steps: preprocessing, tensorrt_llm,
// postprocessing). The TensorRT-LLM backend's nv_trt_llm_* gauges give
// running, waiting and KV blocks; Triton's nv_inference_* counters give
// request rates and mean-only request and queue durations.
func mapTriton(f families, m meta) []model.Sample {
	names := modelNames(f, "nv_", "model")
	// The model with backend gauges first: that is the LLM.
	sort.SliceStable(names, func(i, j int) bool {
		ti := view{fams: f, key: "model", val: names[i]}.has("nv_trt_llm_request_metrics")
		tj := view{fams: f, key: "model", val: names[j]}.has("nv_trt_llm_request_metrics")
		return ti && !tj
	})
	var out []model.Sample
	for _, name := range names {
		v := view{fams: f, key: "model", val: name}
		s := m.sample(name)
		mapTritonModel(&s, v)
		if len(s.Gauges)+len(s.Counters)+len(s.Latencies) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func mapTritonModel(s *model.Sample, v view) {
	const req, kv = "nv_trt_llm_request_metrics", "nv_trt_llm_kv_cache_block_metrics"
	gaugeWhere := func(g model.Gauge, family, lbl, val string) bool {
		x, ok := v.sumWhere(family, lbl, val)
		if ok {
			s.Gauges[g] = x
		}
		return ok
	}
	gaugeWhere(model.Running, req, "request_type", "active")
	gaugeWhere(model.MaxRunning, req, "request_type", "max")
	if !gaugeWhere(model.Waiting, req, "request_type", "waiting") {
		setGauge(s, model.Waiting, v, "nv_inference_pending_request_count")
	}
	used, okU := v.sumWhere(kv, "kv_cache_block_type", "used")
	maxB, okM := v.sumWhere(kv, "kv_cache_block_type", "max")
	if !gaugeWhere(model.KVUsage, kv, "kv_cache_block_type", "fraction") && okU && okM && maxB > 0 {
		s.Gauges[model.KVUsage] = used / maxB
	}
	if per, ok := v.sumWhere(kv, "kv_cache_block_type", "tokens_per"); ok && okM && per > 0 {
		s.Gauges[model.KVCapacityTokens] = maxB * per
	}

	succ, okS := v.sum("nv_inference_request_success")
	if !okS {
		return
	}
	s.FinishReasons["success"] = succ
	total := succ
	if fail, ok := v.sum("nv_inference_request_failure"); ok {
		s.FinishReasons["failure"] = fail
		s.Counters[model.RequestErrors] = fail
		total += fail
	}
	s.Counters[model.Requests] = total
	if us, ok := v.sum("nv_inference_request_duration_us"); ok {
		s.Latencies[model.E2E] = meanOnly(us/1e6, succ, tritonMeanApprox)
	}
	if us, ok := v.sum("nv_inference_queue_duration_us"); ok {
		s.Latencies[model.Queue] = meanOnly(us/1e6, succ, tritonMeanApprox)
	}
}
