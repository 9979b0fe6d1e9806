package prometheus

import (
	"regexp"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// family is one engine's metric names as Prometheus stores them, taken
// from the one table of engine metric names (model.EngineMetrics, which
// the adapters in sources/engine read too), here as PromQL inputs. Each
// concept lists its names newest first; every name is queried in the same
// query, tagged with the name (fromLabel), and the newest one that answered
// for an endpoint is read and recorded on the Sample's From. A concept the
// engine does not expose stays unknown.
type family struct {
	engine model.Engine
	// present are the names of a gauge every target of the engine serves:
	// its series are how the targets are found.
	present []string
	// modelLabel is the label that names the served model ("" when the
	// engine's metrics carry none).
	modelLabel string
	// gauges are summed over a target's series, but KV usage, a ratio per
	// engine core, is averaged (query.go).
	gauges []entry
	// counters are read as rate() over the window.
	counters []entry
	// ratios are hit/query counter pairs, evaluated as a ratio of rates.
	ratios []entry
	// hists are histogram base names (without _bucket/_sum/_count).
	hists []entry
}

// entry is one concept's names, newest first.
type entry struct {
	// key is the Gauge, Counter or Latency the value is stored under.
	key string
	// names are the metrics read (for a ratio, the numerators).
	names []string
	// pair are a ratio's denominators, index for index with names.
	pair []string
	// cite and citePair are the Sample.From keys the name read (and its
	// denominator) are recorded under.
	cite, citePair string
}

// spec says which table concepts a family reads; the names come from
// model.EngineMetrics.
type spec struct {
	engine     model.Engine
	present    model.Gauge
	modelLabel string
	gauges     []model.Gauge
	// counters map a Counter to the table concept that names it (vLLM's
	// finished requests are its FinishReasons counter, summed).
	counters map[model.Counter]string
	// ratios map a ratio Gauge to its table numerator and denominator.
	ratios map[model.Gauge][2]string
	hists  []model.Latency
	// extra are counters the table does not list (TGI's token counts are
	// histogram sums), by their one name.
	extra map[model.Counter]string
}

var specs = []spec{
	{engine: model.VLLM, present: model.Running, modelLabel: "model_name",
		gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: model.FinishReasons, model.Preemptions: string(model.Preemptions)},
		ratios: map[model.Gauge][2]string{
			model.PrefixHitGauge:  {string(model.PrefixHits), string(model.PrefixQueries)},
			model.SpecAcceptGauge: {string(model.SpecAcceptTokens), string(model.SpecDraftTokens)},
		},
		hists: []model.Latency{model.TTFT, model.TPOT, model.ITL, model.E2E, model.Queue}},
	{engine: model.SGLang, present: model.Running, modelLabel: "model_name",
		gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage, model.GenTPSGauge},
		counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: string(model.Requests), model.Preemptions: string(model.Preemptions)},
		ratios: map[model.Gauge][2]string{model.PrefixHitGauge: {string(model.PrefixHits), string(model.PrefixQueries)}},
		hists:  []model.Latency{model.TTFT, model.ITL, model.E2E, model.Queue}},
	{engine: model.TGI, present: model.Waiting,
		gauges: []model.Gauge{model.Running, model.Waiting},
		extra: map[model.Counter]string{model.PromptTokens: "tgi_request_input_length_sum",
			model.GenTokens: "tgi_request_generated_tokens_sum", model.Requests: "tgi_request_success"},
		hists: []model.Latency{model.TPOT, model.E2E, model.Queue}},
	{engine: model.LlamaCpp, present: model.Running,
		gauges:   []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens)}},
	{engine: model.TRTLLM, present: model.Running,
		gauges: []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens),
			model.Requests: model.FinishReasons},
		ratios: map[model.Gauge][2]string{model.PrefixHitGauge: {string(model.PrefixHits), string(model.PrefixQueries)}},
		hists:  []model.Latency{model.TTFT, model.TPOT, model.E2E, model.Queue}},
}

var families = buildFamilies(specs)

// metricName is a bare metric name (the table's Derived also holds
// formulas and selectors, which are not read here).
var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// tableNames are the metrics the table lists for a concept, newest first:
// its Names, else the bare names among its Derived (SGLang's and
// TRT-LLM's prefix counters), in order, up to the first that is not one.
func tableNames(e model.Engine, concept string) []string {
	return model.QueryNames(e, concept, metricName.MatchString)
}

func buildFamilies(ss []spec) []family {
	out := make([]family, 0, len(ss))
	for _, s := range ss {
		f := family{engine: s.engine, modelLabel: s.modelLabel, present: tableNames(s.engine, string(s.present))}
		for _, g := range s.gauges {
			if ns := tableNames(s.engine, string(g)); len(ns) > 0 {
				f.gauges = append(f.gauges, entry{key: string(g), names: ns, cite: string(g)})
			}
		}
		for _, c := range sortedKeys(s.counters) {
			if ns := tableNames(s.engine, s.counters[c]); len(ns) > 0 {
				f.counters = append(f.counters, entry{key: string(c), names: ns, cite: string(c)})
			}
		}
		for _, c := range sortedKeys(s.extra) {
			f.counters = append(f.counters, entry{key: string(c), names: []string{s.extra[c]}, cite: string(c)})
		}
		for _, g := range sortedKeys(s.ratios) {
			p := s.ratios[g]
			hits, queries := tableNames(s.engine, p[0]), tableNames(s.engine, p[1])
			n := min(len(hits), len(queries))
			if n > 0 {
				f.ratios = append(f.ratios, entry{key: string(g), names: hits[:n], pair: queries[:n], cite: p[0], citePair: p[1]})
			}
		}
		for _, l := range s.hists {
			if ns := tableNames(s.engine, string(l)); len(ns) > 0 {
				f.hists = append(f.hists, entry{key: string(l), names: ns, cite: string(l)})
			}
		}
		out = append(out, f)
	}
	return out
}

// lookup returns the entry a tagged term ("gauge:running", "lat:itl:p99")
// was built from.
func (f family) lookup(concept string) (entry, bool) {
	kind, rest, _ := strings.Cut(concept, ":")
	name, _, _ := strings.Cut(rest, ":")
	var es []entry
	switch kind {
	case "gauge":
		es = f.gauges
	case "rate":
		es = f.counters
	case "ratio":
		es = f.ratios
	case "lat":
		es = f.hists
	}
	for _, e := range es {
		if e.key == name {
			return e, true
		}
	}
	return entry{}, false
}

// rank is where name, the fromLabel of an answer, stands among the
// entry's names (0 newest, which is not tagged), -1 when it is not one of
// them.
func (e entry) rank(name string) int {
	if name == "" {
		return 0
	}
	for i, n := range e.names {
		if n == name {
			return i
		}
	}
	return -1
}

// cites records on from which names rank read.
func (e entry) cites(from map[string]string, rank int) {
	from[e.cite] = e.names[rank]
	if e.citePair != "" {
		from[e.citePair] = e.pair[rank]
	}
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
