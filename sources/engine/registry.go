package engine

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// adapter reads one engine: its Spec (engines/, where everything llmtop
// knows about it lives) and the code that maps its scrape. Prometheus
// engines share promCollect; the mapping from families to samples is a
// pure function per engine, tested against that engine's fixture.
type adapter struct {
	engine      model.Engine
	metricsPath string // default metrics route ("" when the engine has none)
	hint404     string // what to do when that route is missing
	hintEmpty   string // what to do when it answers without the engine's metrics ("" = hint404)
	collect     func(c *collector) ([]model.Sample, error)
}

// collectors are the code of the engines with an adapter of their own; a
// serving layer that re-exports an engine's metrics (Spec.Like) is read by
// that engine's (reexported).
var collectors = map[model.Engine]func(*engines.Spec) func(*collector) ([]model.Sample, error){
	model.VLLM:     func(s *engines.Spec) func(*collector) ([]model.Sample, error) { return promCollect(s, mapVLLM) },
	model.SGLang:   func(s *engines.Spec) func(*collector) ([]model.Sample, error) { return promCollect(s, mapSGLang) },
	model.TGI:      func(s *engines.Spec) func(*collector) ([]model.Sample, error) { return promCollect(s, mapTGI) },
	model.LlamaCpp: func(*engines.Spec) func(*collector) ([]model.Sample, error) { return collectLlamaCpp },
	model.TRTLLM:   func(*engines.Spec) func(*collector) ([]model.Sample, error) { return collectTRTLLM },
	model.Triton:   func(*engines.Spec) func(*collector) ([]model.Sample, error) { return collectTriton },
	model.Ollama:   func(*engines.Spec) func(*collector) ([]model.Sample, error) { return collectOllama },
}

// mappers are the Prometheus mappers a re-exported engine is read with.
var mappers = map[model.Engine]func(families, meta) []model.Sample{
	model.VLLM: mapVLLM, model.SGLang: mapSGLang, model.TGI: mapTGI,
}

// adapters is the table of supported engines, in engines.All's order.
var adapters = buildAdapters()

func buildAdapters() []adapter {
	var out []adapter
	for _, s := range engines.All() {
		a := adapter{engine: s.ID, metricsPath: s.MetricsPath, hint404: s.Hint404, hintEmpty: s.HintEmpty}
		switch {
		case collectors[s.ID] != nil:
			a.collect = collectors[s.ID](s)
		case s.Like != model.Unknown && mappers[s.Like] != nil:
			a.collect = promCollect(s, reexported(s, engines.Of(s.Like), mappers[s.Like]))
		default:
			continue
		}
		out = append(out, a)
	}
	return out
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
func promCollect(s *engines.Spec, mapFn func(families, meta) []model.Sample) func(*collector) ([]model.Sample, error) {
	return promCollectPrefix(s.Prefix(), mapFn)
}

// promCollectPrefix is promCollect for the families under prefix.
func promCollectPrefix(prefix string, mapFn func(families, meta) []model.Sample) func(*collector) ([]model.Sample, error) {
	return func(c *collector) ([]model.Sample, error) {
		mapFn, prefix := mapFn, prefix // a wrapper found below is this scrape's only
		fams, err := c.prom(c.metricsPath())
		if err != nil && notFound(err) && c.s.cfg.MetricsPath == "" && c.a.metricsPath != defaultMetricsPath {
			// A layer whose own route is elsewhere (NIM's /v1/metrics)
			// found by its families on /metrics: read them there.
			if f2, err2 := c.prom(defaultMetricsPath); err2 == nil {
				fams, err = f2, nil
			} else {
				c.lastPath = c.metricsPath()
			}
		}
		if err != nil {
			return nil, err
		}
		// What the endpoint is comes before whose prefix it carries: a
		// router that reuses vllm: names is a router (issue 26).
		r := c.s.roles.classify(fams)
		if r.Role != engines.RoleEngine {
			c.s.identify(r, c.id, c.now)
			return nil, layerError(c.s.cfg.URL+c.lastPath, r)
		}
		if !hasPrefix(fams, prefix) {
			if w := wrapperAt(fams, c.a.engine); w != nil {
				// The engine's metrics as a wrapping layer serves them
				// (a gateway's /engine_metrics, NIM's bare names):
				// read through the layer, named as it.
				c.id.Engine = w.ID
				mapFn = reexported(w, engines.Of(w.Like), mappers[w.Like])
				prefix = w.Prefix()
			}
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
		c.id.Role, c.id.RoleFrom = pdRole(fams)
		c.id.Via = ""
		for _, l := range r.Beside {
			if l.Role == engines.RoleEngine {
				c.id.Via = l.Name
			}
		}
		if notes := r.besideNotes(); len(notes) > 0 {
			for i := range samples {
				samples[i].Notes = append(samples[i].Notes, notes...)
			}
		}
		return samples, nil
	}
}

// wrapperAt is the wrapping layer whose re-export of engine e's metrics f
// holds (nil when none).
func wrapperAt(f families, e model.Engine) *engines.Spec {
	for _, w := range engines.All() {
		if w.Like == e && w.Like != model.Unknown && mappers[w.Like] != nil && hasPrefix(f, w.Prefix()) {
			return w
		}
	}
	return nil
}

// reexported reads a serving layer's re-export of an engine's metrics
// (Ray Serve's ray_vllm:, KServe's kserve_vllm:, NIM's bare names, SGLang's
// gateway's sglang_…) with that engine's mapper: each name is put back as
// the engine spells it (s.Unwrapped), each of the layer's replicas
// (s.DPLabel) becomes one of the engine's data-parallel engines
// (like.DPLabel), and what the samples say they read is named as the layer
// serves it.
func reexported(s, like *engines.Spec, mapFn func(families, meta) []model.Sample) func(families, meta) []model.Sample {
	relabels := s.DPLabel != "" && like.DPLabel != "" && s.DPLabel != like.DPLabel
	return func(f families, m meta) []model.Sample {
		in := families{}
		for name, fam := range f {
			cut, ok := s.Unwrapped(name)
			if !ok || engines.ByMetricName(cut) != like {
				in[name] = fam
				continue
			}
			if relabels {
				fam = relabel(fam, s.DPLabel, like.DPLabel)
			}
			in[cut] = fam
			if s.Reexport == "" {
				in[name] = fam // a bare name (NIM's) may be read bare too
			}
		}
		out := mapFn(in, m)
		for i := range out {
			served := map[string]string{} // the engine's name → the layer's
			for k, v := range out[i].From {
				if engines.ByMetricName(v) == like {
					w := s.Wrapped(v)
					if relabels {
						w = strings.ReplaceAll(w, "{"+like.DPLabel+"=", "{"+s.DPLabel+"=")
					}
					out[i].From[k] = w
					served[familyOf(v)] = familyOf(w)
				}
			}
			// The notes name a family as the layer serves it too.
			for j, n := range out[i].Notes {
				for from, to := range served {
					n = replaceName(n, from, to)
				}
				out[i].Notes[j] = n
			}
			out[i].Notes = append(out[i].Notes, "read through "+s.Name+": "+like.Name+"'s metrics as it serves them")
		}
		readOwn(s, f, out)
		return out
	}
}

// relabel copies a family with label from renamed to to (joined to a to
// the series already has: a replica's own data-parallel engines).
func relabel(fam *dto.MetricFamily, from, to string) *dto.MetricFamily {
	cp := &dto.MetricFamily{Name: fam.Name, Help: fam.Help, Type: fam.Type, Unit: fam.Unit, Metric: make([]*dto.Metric, len(fam.Metric))}
	for i, m := range fam.Metric {
		var ls []*dto.LabelPair
		rep, own := "", ""
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case from:
				rep = l.GetValue()
			case to:
				own = l.GetValue()
			default:
				ls = append(ls, l)
			}
		}
		id := rep
		if own != "" {
			id = strings.TrimPrefix(rep+"/"+own, "/")
		}
		if id != "" {
			name, val := to, id
			ls = append(ls, &dto.LabelPair{Name: &name, Value: &val})
		}
		cp.Metric[i] = &dto.Metric{Label: ls, Gauge: m.Gauge, Counter: m.Counter, Summary: m.Summary,
			Untyped: m.Untyped, Histogram: m.Histogram, TimestampMs: m.TimestampMs}
	}
	return cp
}

// addProcessStart copies the standard process_start_time_seconds (served by
// single-process Python engines such as vLLM) into each sample's Started,
// where the header reads the engine's uptime from.
func addProcessStart(f families, samples []model.Sample) {
	fam, ok := f[engines.ProcessStart]
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

// otherEngineHint says whose metrics f holds when they belong to another
// engine than want (an --engine forced wrong); "" when none.
func otherEngineHint(f families, want model.Engine) string {
	for _, e := range engines.All() {
		if p := e.Prefix(); e.ID != want && p != "" && hasPrefix(f, p) {
			return fmt.Sprintf("these look like %s metrics (%s…): drop --engine %s (llmtop detects the engine) or use --engine %s", e.ID, p, want, e.ID)
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

// setSpecByPos reads the drafts counter and the accepted tokens by draft
// position (label "position", 0 the first drafted token) into
// SpecAcceptPos(i); nothing without both.
func setSpecByPos(s *model.Sample, v view, drafts, byPos []string) {
	if setCounter(s, model.SpecDrafts, v, drafts...) == "" {
		return
	}
	n := v.first(byPos...)
	if n == "" {
		return
	}
	read := false
	for p, x := range v.byLabel(n, "position") {
		i, err := strconv.Atoi(p)
		if err != nil || i < 0 || i >= model.MaxSpecPos {
			continue
		}
		s.Counters[model.SpecAcceptPos(i)] = x
		read = true
	}
	if read {
		readFrom(s, model.SpecAcceptByPos, n)
	}
}

// setHistSum reads a histogram's sum as a counter, times scale (the bytes
// a transfer-size histogram counted).
func setHistSum(s *model.Sample, c model.Counter, v view, scale float64, names ...string) string {
	n := v.first(names...)
	if n == "" {
		return ""
	}
	if h, ok := v.hist(n); ok && finite(h.Sum) {
		s.Counters[c] = h.Sum * scale
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

// names is where an engine publishes a concept, newest name first: its
// file in engines/, which the adapters read so that a rename is one edit.
func names[C ~string](e model.Engine, c C) []string { return engines.MetricNames(e, string(c)) }

// readDerived records that a concept was computed as the engine's row in
// its engines/ file says (its i-th Derived formula).
func readDerived(s *model.Sample, e model.Engine, concept string, i int) {
	if m, ok := engines.MetricSourceOf(e, concept); ok && i < len(m.Derived) {
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
	var all, bad, rej, client float64
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
		if strings.HasPrefix(st, "4") && st != "429" {
			client += x
		}
	}
	if !seen {
		return
	}
	s.Counters[model.HTTPResponses], s.Counters[model.HTTP5xx] = all, bad
	readFrom(s, string(model.HTTP5xx), name+`{status="5xx"}`)
	s.Counters[model.HTTP4xx] = client
	readFrom(s, string(model.HTTP4xx), name+`{status="4xx"}`)
	if exact {
		s.Counters[model.HTTPRejected] = rej
	}
}

// defaultMetricsPath is where an engine's metrics are when nothing says
// otherwise, and where the probe looks first.
const defaultMetricsPath = "/metrics"

// notFound says the route answered 404: it is not there.
func notFound(err error) bool {
	var he *probe.HTTPError
	return errors.As(err, &he) && he.Status == http.StatusNotFound
}

// familyOf is a From citation's family name (its label selector cut).
func familyOf(cite string) string {
	if i := strings.IndexByte(cite, '{'); i >= 0 {
		return cite[:i]
	}
	return cite
}

// replaceName replaces the family name from by to in a note where it
// stands as a whole name (not inside a longer one: ray_vllm:x holds vllm:x).
func replaceName(note, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(note, from)
		if i < 0 {
			b.WriteString(note)
			return b.String()
		}
		end := i + len(from)
		whole := (i == 0 || !nameByte(note[i-1])) && (end == len(note) || !nameByte(note[end]))
		b.WriteString(note[:i])
		if whole {
			b.WriteString(to)
		} else {
			b.WriteString(from)
		}
		note = note[end:]
	}
}

func nameByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// readOwn reads a wrapping layer's own families (Spec.Own) into each
// model's sample: a gauge or a counter, summed over the model's series,
// absent when the layer does not serve it.
func readOwn(s *engines.Spec, f families, out []model.Sample) {
	if len(s.Own) == 0 {
		return
	}
	parts := byModel(f, s.ModelLabel)
	for i := range out {
		v := modelView(f, parts, out[i].Model)
		for _, row := range s.Own {
			if n := v.first(row.Names...); n != "" && f[n].GetType() == dto.MetricType_COUNTER {
				setCounter(&out[i], model.Counter(row.Concept), v, row.Names...)
			} else {
				setGauge(&out[i], model.Gauge(row.Concept), v, row.Names...)
			}
		}
	}
}
