package engine

import (
	"net"
	"net/url"
	"sort"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// tritonMetricsPort is where Triton serves /metrics (HTTP is 8000).
const tritonMetricsPort = "8002"

// collectTriton reads Triton's metrics. Given Triton's HTTP port, whose
// /metrics does not exist, it reads the same host's metrics port instead.
func collectTriton(c *collector) ([]model.Sample, error) {
	ss, err := promCollectPrefix(engines.TritonFamily, mapTriton)(c)
	if err == nil || c.s.cfg.MetricsPath != "" {
		return ss, err
	}
	alt := withPort(c.s.cfg.URL, tritonMetricsPort)
	if alt == "" {
		return nil, err
	}
	body, _, err2 := probe.Get(c.ctx, c.s.client, alt+"/metrics", promAccept, c.s.cfg.MaxBodyBytes)
	if err2 != nil {
		return nil, err
	}
	fams, perr := parseProm(body)
	if perr != nil || !hasPrefix(fams, "nv_") {
		return nil, err
	}
	ss = mapTriton(fams, c.meta())
	for i := range ss {
		ss[i].Notes = append(ss[i].Notes, "metrics read from "+alt+"/metrics, Triton's metrics port")
	}
	return ss, nil
}

// withPort is base with its port replaced; "" when it already uses it.
func withPort(base, port string) string {
	u, err := url.Parse(base)
	if err != nil || u.Port() == port {
		return ""
	}
	u.Host = net.JoinHostPort(u.Hostname(), port)
	return u.String()
}

const tritonMeanApprox = "mean only: Triton's cumulative µs counter ÷ successful requests"

// mapTriton maps Triton's metrics port (default 8002): one sample per
// `model` label (an ensemble shows its steps: preprocessing, tensorrt_llm,
// postprocessing). The TensorRT-LLM backend's nv_trt_llm_* gauges give
// running, waiting and KV blocks; Triton's nv_inference_* counters give
// request rates and mean-only request and queue durations.
func mapTriton(f families, m meta) []model.Sample {
	names := modelNames(f, "nv_", "model")
	parts := byModel(f, "model")
	// The model with backend gauges first: that is the LLM.
	sort.SliceStable(names, func(i, j int) bool {
		ti := view{fams: parts[names[i]]}.has(engines.TritonRequestMetrics)
		tj := view{fams: parts[names[j]]}.has(engines.TritonRequestMetrics)
		return ti && !tj
	})
	var out []model.Sample
	for _, name := range names {
		v := view{fams: parts[name]}
		s := m.sample(name)
		mapTritonModel(&s, v)
		if len(s.Gauges)+len(s.Counters)+len(s.Latencies) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func mapTritonModel(s *model.Sample, v view) {
	const req, kv = engines.TritonRequestMetrics, engines.TritonKVBlockMetrics
	gaugeWhere := func(g model.Gauge, family, lbl, val string) bool {
		x, ok := v.sumWhere(family, lbl, val)
		if ok {
			s.Gauges[g] = x
		}
		return ok
	}
	if gaugeWhere(model.Running, req, "request_type", "active") {
		readDerived(s, model.Triton, string(model.Running), 0)
	}
	gaugeWhere(model.MaxRunning, req, "request_type", "max")
	if gaugeWhere(model.Waiting, req, "request_type", "waiting") {
		readDerived(s, model.Triton, string(model.Waiting), 0)
	} else {
		setGauge(s, model.Waiting, v, engines.TritonPending)
	}
	used, okU := v.sumWhere(kv, "kv_cache_block_type", "used")
	maxB, okM := v.sumWhere(kv, "kv_cache_block_type", "max")
	if gaugeWhere(model.KVUsage, kv, "kv_cache_block_type", "fraction") {
		readDerived(s, model.Triton, string(model.KVUsage), 0)
	} else if okU && okM && maxB > 0 {
		s.Gauges[model.KVUsage] = used / maxB
		readDerived(s, model.Triton, string(model.KVUsage), 1)
	}
	if per, ok := v.sumWhere(kv, "kv_cache_block_type", "tokens_per"); ok && okM && per > 0 {
		s.Gauges[model.KVCapacityTokens] = maxB * per
	}

	succ, okS := v.sum(engines.TritonRequestSuccess)
	if !okS {
		return
	}
	s.FinishReasons["success"] = succ
	total := succ
	if fail, ok := v.sum(engines.TritonRequestFailure); ok {
		s.FinishReasons["failure"] = fail
		s.Counters[model.RequestErrors] = fail
		total += fail
	}
	s.Counters[model.Requests] = total
	if us, ok := v.sum(engines.TritonRequestDuration); ok {
		s.Latencies[model.E2E] = meanOnly(us/1e6, succ, tritonMeanApprox)
		readDerived(s, model.Triton, string(model.E2E), 0)
	}
	if us, ok := v.sum(engines.TritonQueueDuration); ok {
		s.Latencies[model.Queue] = meanOnly(us/1e6, succ, tritonMeanApprox)
		readDerived(s, model.Triton, string(model.Queue), 0)
	}
}
