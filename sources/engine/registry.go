package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// adapter reads one engine. Prometheus engines share promCollect; the
// mapping from families to samples is a pure function per engine, tested
// against that engine's fixture.
type adapter struct {
	engine      model.Engine
	metricsPath string // default metrics route ("" when the engine has none)
	hint404     string // what to do when that route is missing
	hintEmpty   string // what to do when it answers without the engine's metrics ("" = hint404)
	collect     func(c *collector) ([]model.Sample, error)
}

// adapters is the table of supported engines.
var adapters = []adapter{
	{
		engine: model.VLLM, metricsPath: "/metrics",
		hint404: "vLLM always serves /metrics on its API port (the one /v1 answers on): a 404 means another port or route, " +
			"or a proxy in front that does not pass it; point llmtop at the API port or pass --metrics-path",
		hintEmpty: "vLLM started with --disable-log-stats serves /metrics without any vllm: metrics: start it without that flag",
		collect:   promCollect("vllm:", mapVLLM),
	},
	{
		engine: model.SGLang, metricsPath: "/metrics",
		hint404: "SGLang exposes metrics only when started with --enable-metrics",
		collect: promCollect("sglang:", mapSGLang),
	},
	{
		engine: model.TGI, metricsPath: "/metrics",
		hint404: "TGI serves /metrics on its main port and on --prometheus-port (default 9000); pass --metrics-path if a proxy moved it",
		collect: promCollect("tgi_", mapTGI),
	},
	{
		engine: model.LlamaCpp, metricsPath: "/metrics",
		hint404: "start llama-server with --metrics (env LLAMA_ARG_ENDPOINT_METRICS=1); " +
			"in router mode pass --metrics-path '/metrics?model=ID'",
		collect: collectLlamaCpp,
	},
	{
		engine: model.TRTLLM, metricsPath: "/prometheus/metrics",
		hint404: "trtllm-serve serves Prometheus at /prometheus/metrics only with return_perf_metrics: true " +
			"in its --config (--extra_llm_api_options) YAML; add enable_iter_perf_stats: true for the iteration gauges",
		collect: collectTRTLLM,
	},
	{
		engine: model.Triton, metricsPath: "/metrics",
		hint404: "Triton serves metrics on its metrics port (default 8002, --allow-metrics/--metrics-port): point llmtop at http://HOST:8002",
		collect: collectTriton,
	},
	{
		engine:  model.Ollama,
		collect: collectOllama,
	},
}

// emptyHint is the hint for a metrics route that answers without the
// engine's metrics.
func (a adapter) emptyHint() string {
	if a.hintEmpty != "" {
		return a.hintEmpty
	}
	return a.hint404
}

func adapterFor(e model.Engine) (adapter, bool) {
	for _, a := range adapters {
		if a.engine == e {
			return a, true
		}
	}
	return adapter{}, false
}

// promCollect reads the metrics route and maps it. A route that answers
// without any of the engine's metrics is reported as not found, with the
// engine's hint for that case: vLLM with --disable-log-stats still serves
// /metrics, without its vllm: families.
func promCollect(prefix string, mapFn func(families, meta) []model.Sample) func(*collector) ([]model.Sample, error) {
	return func(c *collector) ([]model.Sample, error) {
		fams, err := c.prom(c.metricsPath())
		if err != nil {
			return nil, err
		}
		if !hasPrefix(fams, prefix) {
			hint := c.a.emptyHint()
			if h := otherEngineHint(fams, c.a.engine); h != "" {
				hint = h
			}
			return nil, &scrapeError{model.ErrNotFound,
				c.s.cfg.URL + c.lastPath + " answers, but without any " + prefix + " metrics", hint}
		}
		samples := mapFn(fams, c.meta())
		addProcessStart(fams, samples)
		return samples, nil
	}
}

// addProcessStart copies the standard process_start_time_seconds (served by
// single-process Python engines such as vLLM) into each sample's Started,
// where the header reads the engine's uptime from.
func addProcessStart(f families, samples []model.Sample) {
	fam, ok := f["process_start_time_seconds"]
	if !ok || len(fam.GetMetric()) == 0 {
		return
	}
	v := scalar(fam.GetMetric()[0])
	if !finite(v) || v <= 0 {
		return
	}
	sec, frac := math.Modf(v)
	started := time.Unix(int64(sec), int64(frac*1e9))
	for i := range samples {
		samples[i].Started = started
	}
}

// metricPrefixes are the engines' metric name prefixes, to tell whose
// metrics a route serves when they are not the expected engine's.
var metricPrefixes = []struct {
	engine model.Engine
	prefix string
}{{model.VLLM, "vllm:"}, {model.SGLang, "sglang:"}, {model.TGI, "tgi_"}, {model.LlamaCpp, "llamacpp:"}, {model.TRTLLM, "trtllm_"}, {model.Triton, "nv_inference_"}}

// otherEngineHint says whose metrics f holds when they belong to another
// engine than want (an --engine forced wrong); "" when none.
func otherEngineHint(f families, want model.Engine) string {
	for _, p := range metricPrefixes {
		if p.engine != want && hasPrefix(f, p.prefix) {
			return fmt.Sprintf("these look like %s metrics (%s…): drop --engine %s (llmtop detects the engine) or use --engine %s", p.engine, p.prefix, want, p.engine)
		}
	}
	return ""
}

func hasPrefix(f families, prefix string) bool {
	for name := range f {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// modelNames lists the distinct values of a model label over the families
// with a prefix, sorted; empty when no series carries the label.
func modelNames(f families, prefix, lbl string) []string {
	seen := map[string]bool{}
	for name, fam := range f {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range fam.Metric {
			if v := label(m, lbl); v != "" {
				seen[v] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// The setters below copy a concept from the first of several names the view
// has (current name first, renamed/old names after) and report the name
// used, "" when the engine exposes none of them.

func setGauge(s *model.Sample, g model.Gauge, v view, names ...string) string {
	n := v.first(names...)
	if n == "" {
		return ""
	}
	if x, ok := v.sum(n); ok {
		s.Gauges[g] = x
		readFrom(s, string(g), n)
		return n
	}
	return ""
}

func setCounter(s *model.Sample, c model.Counter, v view, names ...string) string {
	n := v.first(names...)
	if n == "" {
		return ""
	}
	if x, ok := v.sum(n); ok {
		s.Counters[c] = x
		readFrom(s, string(c), n)
		return n
	}
	return ""
}

func setLatency(s *model.Sample, l model.Latency, v view, names ...string) string {
	n := v.first(names...)
	if n == "" {
		return ""
	}
	if h, ok := v.hist(n); ok {
		s.Latencies[l] = h
		readFrom(s, string(l), n)
		return n
	}
	return ""
}

// names is where an engine publishes a concept, newest name first: the
// one table of engine metric names (model.EngineMetrics), which the
// adapters read so that a rename is one edit.
func names[C ~string](e model.Engine, c C) []string { return model.MetricNames(e, string(c)) }

// readDerived records that a concept was computed as the engine's row in
// model.EngineMetrics says (its i-th Derived formula).
func readDerived(s *model.Sample, e model.Engine, concept string, i int) {
	if m, ok := model.MetricSourceOf(e, concept); ok && i < len(m.Derived) {
		readFrom(s, concept, m.Derived[i])
	}
}

// readFrom records which metric a concept was read from (Sample.From).
func readFrom(s *model.Sample, concept, metric string) {
	if s.From == nil {
		s.From = map[string]string{}
	}
	s.From[concept] = metric
}

// setHTTPStatus reads an HTTP instrumentation counter by status
// (prometheus_fastapi_instrumentator's http_requests_total: status "2xx",
// "4xx", "5xx" when grouped, the exact code otherwise) over the API routes
// (/v1/…): the responses, the 5xx, and the rejections (429, 503) where the
// codes are exact. Nothing is set without API-route series.
func setHTTPStatus(s *model.Sample, v view, name string) {
	var all, bad, rej float64
	seen, exact := false, false
	for _, m := range v.series(name) {
		if !strings.HasPrefix(label(m, "handler"), "/v1/") {
			continue
		}
		x := scalar(m)
		if !finite(x) {
			continue
		}
		seen = true
		all += x
		st := label(m, "status")
		exact = exact || !strings.HasSuffix(st, "xx")
		if strings.HasPrefix(st, "5") {
			bad += x
		}
		if st == "429" || st == "503" {
			rej += x
		}
	}
	if !seen {
		return
	}
	s.Counters[model.HTTPResponses], s.Counters[model.HTTP5xx] = all, bad
	readFrom(s, string(model.HTTP5xx), name+`{status="5xx"}`)
	if exact {
		s.Counters[model.HTTPRejected] = rej
	}
}
