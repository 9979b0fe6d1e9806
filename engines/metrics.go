package engines

import (
	"strings"

	"github.com/llmtop/llmtop/model"
)

// MetricSource says where one engine publishes one concept. The adapters
// (sources/engine) read Names, the fleet source (sources/prometheus) and
// `llmtop rules` (exporter) query them, the `e` overlay prints them, and a
// test in sources/engine proves the adapters read every name listed. The
// diagnosis cites only what an adapter recorded it read (Sample.From),
// never this table.
type MetricSource struct {
	// Concept is a Gauge, Counter or Latency name, or model.FinishReasons.
	Concept string
	// Names are the metrics read as they are, newest first: the first one
	// the scrape has is read.
	Names []string
	// Derived are what the adapter records (Sample.From) when it computes
	// the value from several metrics or reads one only under a condition,
	// in the order it tries them after Names.
	Derived []string
	// Note says what the metric means, which releases use which name, and
	// for a concept the engine does not expose, that it does not.
	Note string
	// Scale turns the metric's unit into the concept's (SGLang's ms into
	// seconds: 1e-3; its MiB into bytes); 0 is 1.
	Scale float64
	// Counts is what a latency's count counts when it is not requests
	// (llama.cpp's TPOT is seconds over generated tokens: "tokens").
	Counts string
	// Busy is set for a throughput the engine states over its own
	// processing time (tokens ÷ the seconds its slots spent on them,
	// summed over slots), not over the wall clock: llama.cpp's
	// prompt_tokens_seconds reads thousands of tok/s while the server
	// mostly idles.
	Busy bool
}

// scaled is m with a unit factor.
func scaled(m MetricSource, f float64) MetricSource {
	m.Scale = f
	return m
}

// counting is m whose count counts what (not requests).
func counting(m MetricSource, what string) MetricSource {
	m.Counts = what
	return m
}

// busy is m stated over the engine's processing time (MetricSource.Busy).
func busy(m MetricSource) MetricSource {
	m.Busy = true
	return m
}

// BusyRate reports whether an engine states a throughput concept over
// its processing time rather than the wall clock (MetricSource.Busy).
func BusyRate(e model.Engine, concept string) bool {
	m, _ := MetricSourceOf(e, concept)
	return m.Busy
}

// ScaleOf is the factor an engine's metric for a concept is read times
// (1 when its unit is the concept's).
func ScaleOf(e model.Engine, concept string) float64 {
	if m, ok := MetricSourceOf(e, concept); ok && m.Scale != 0 {
		return m.Scale
	}
	return 1
}

// CountsOf is what an engine's count of a latency counts when it is not
// requests ("" when it is, or the engine has no row for it).
func CountsOf(e model.Engine, concept string) string {
	m, _ := MetricSourceOf(e, concept)
	return m.Counts
}

// Exposed reports whether the engine publishes the concept at all.
func (m MetricSource) Exposed() bool { return len(m.Names)+len(m.Derived) > 0 }

// Text is how the `e` overlay shows the source.
func (m MetricSource) Text() string {
	var b strings.Builder
	b.WriteString(strings.Join(append(append([]string{}, m.Names...), m.Derived...), ", else "))
	if m.Note != "" {
		if b.Len() > 0 {
			b.WriteString(" — ")
		}
		b.WriteString(m.Note)
	}
	return b.String()
}

// MetricNames returns the metrics an engine publishes a concept under,
// newest first (nil when it publishes none).
func MetricNames(e model.Engine, concept string) []string {
	m, _ := MetricSourceOf(e, concept)
	return m.Names
}

// MetricSourceOf returns an engine's row for a concept.
func MetricSourceOf(e model.Engine, concept string) (MetricSource, bool) {
	s := Of(e)
	if s == nil {
		return MetricSource{}, false
	}
	for _, m := range s.Metrics {
		if m.Concept == concept {
			return m, true
		}
	}
	return MetricSource{}, false
}

// Metrics returns an engine's whole table (nil for an unknown engine).
func Metrics(e model.Engine) []MetricSource {
	if s := Of(e); s != nil {
		return s.Metrics
	}
	return nil
}

func src(concept string, note string, names ...string) MetricSource {
	return MetricSource{Concept: concept, Names: names, Note: note}
}

func derived(concept, note string, formulas ...string) MetricSource {
	return MetricSource{Concept: concept, Derived: formulas, Note: note}
}

func absent(concept, note string) MetricSource {
	return MetricSource{Concept: concept, Note: note}
}

// QueryNames are the metrics a PromQL query can read for an engine's
// concept, newest first: the row's Names, else its Derived sources in
// order up to the first that keep rejects (a formula rather than a
// metric or selector). Nil when the engine has no row for it.
func QueryNames(e model.Engine, concept string, keep func(string) bool) []string {
	m, ok := MetricSourceOf(e, concept)
	if !ok {
		return nil
	}
	if len(m.Names) > 0 {
		return m.Names
	}
	var out []string
	for _, d := range m.Derived {
		if !keep(d) {
			break
		}
		out = append(out, d)
	}
	return out
}
