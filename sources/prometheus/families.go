package prometheus

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// family is one engine's metric names as Prometheus stores them, taken
// from the one table of engine metric names (engines.Metrics, which
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
	// kvAgg is how KV usage, a ratio per engine, aggregates over a
	// target's series (engines.Spec.KVAgg: the fullest engine's for
	// vLLM's data-parallel engines).
	kvAgg string
	// gauges are summed over a target's series, but KV usage (kvAgg).
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
	// sum reads a histogram's _sum as the counter (the bytes KV transfers
	// moved); scale turns the metric's unit into the concept's (SGLang's
	// ms into seconds), 0 for none.
	sum   bool
	scale float64
}

// scaled is expr times the entry's unit factor, where it has one.
func (e entry) scaled(expr string) string {
	if e.scale == 0 || e.scale == 1 {
		return expr
	}
	return fmt.Sprintf("(%s) * %g", expr, e.scale)
}

// families are the engines Prometheus is asked about: each engine's
// Fleet in engines/.
var families = buildFamilies(engines.All())

// metricName is a bare metric name (the table's Derived also holds
// formulas and selectors, which are not read here).
var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// tableNames are the metrics the table lists for a concept, newest first:
// its Names, else the bare names among its Derived (SGLang's and
// TRT-LLM's prefix counters), in order, up to the first that is not one.
func tableNames(e model.Engine, concept string) []string {
	return engines.QueryNames(e, concept, metricName.MatchString)
}

func buildFamilies(ss []*engines.Spec) []family {
	out := make([]family, 0, len(ss))
	for _, sp := range ss {
		s := sp.Fleet
		if s == nil {
			continue
		}
		f := family{engine: sp.ID, modelLabel: sp.ModelLabel, kvAgg: sp.KVAgg, present: tableNames(sp.ID, string(s.Present))}
		for _, g := range s.Gauges {
			if ns := tableNames(sp.ID, string(g)); len(ns) > 0 {
				f.gauges = append(f.gauges, entry{key: string(g), names: ns, cite: string(g)})
			}
		}
		for _, c := range sortedKeys(s.Counters) {
			if ns := tableNames(sp.ID, s.Counters[c]); len(ns) > 0 {
				f.counters = append(f.counters, entry{key: string(c), names: ns, cite: string(c)})
			}
		}
		for _, c := range s.HistSums {
			if ns := tableNames(sp.ID, string(c)); len(ns) > 0 {
				f.counters = append(f.counters, entry{key: string(c), names: ns, cite: string(c), sum: true, scale: engines.ScaleOf(sp.ID, string(c))})
			}
		}
		for _, c := range sortedKeys(s.Extra) {
			f.counters = append(f.counters, entry{key: string(c), names: []string{s.Extra[c]}, cite: string(c)})
		}
		for _, g := range sortedKeys(s.Ratios) {
			p := s.Ratios[g]
			hits, queries := tableNames(sp.ID, p[0]), tableNames(sp.ID, p[1])
			n := min(len(hits), len(queries))
			if n > 0 {
				f.ratios = append(f.ratios, entry{key: string(g), names: hits[:n], pair: queries[:n], cite: p[0], citePair: p[1]})
			}
		}
		for _, l := range s.Hists {
			if ns := tableNames(sp.ID, string(l)); len(ns) > 0 {
				f.hists = append(f.hists, entry{key: string(l), names: ns, cite: string(l), scale: engines.ScaleOf(sp.ID, string(l))})
			}
		}
		out = append(out, f)
	}
	return out
}

// entry is the entry a tagged term was built from (nil when none), in
// the family's own lists.
func (f *family) entry(concept string) *entry {
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
	for i := range es {
		if es[i].key == name {
			return &es[i]
		}
	}
	return nil
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
