// Package exporter is the face of llmtop that Prometheus reads: a
// prometheus.Collector that turns one refresh of the core (its normalised
// metrics per endpoint and model, the lifecycle, the open findings) into
// Prometheus series (docs/fleet.md lists them).
//
// The core is not safe for concurrent use, so the exporter never reads it
// from the HTTP goroutine: the goroutine that drives the core calls Capture
// after each Tick and hands the immutable View to Collector.Publish; a
// scrape reads the newest published View. A value the engine does not
// expose, or that had no data in the window, is absent, never 0.
package exporter

import (
	"maps"
	"slices"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// View is one refresh of the core, copied out of it: nothing in it is
// shared with the core, so any goroutine may read it.
type View struct {
	Time        time.Time     // the core's clock at the refresh
	Window      time.Duration // the configured window of rates and percentiles
	Evaluations uint64        // how many times the rules ran
	Endpoints   []Endpoint
	Series      []Series
	Findings    []diagnosis.Finding
	// NotChecked are the checks the rules could not make, each saying
	// what input was missing ("URL: TTFT (… does not expose it)").
	NotChecked []string
}

// Endpoint is what llmtop knows of one endpoint as a whole.
type Endpoint struct {
	URL       string // the core's ID: redacted, no credential
	Engine    model.Engine
	Version   string
	Simulated bool
	State     model.Lifecycle
	// Scrapes counts scrape attempts; Up says whether the newest one read
	// metrics (meaningless while Scrapes is 0).
	Scrapes int
	Up      bool
	ErrKind model.ScrapeErrKind
	LastOK  time.Time
}

// Series is one endpoint+model's metrics over the window.
type Series struct {
	Endpoint string
	Engine   model.Engine
	Model    string
	Metrics  model.MetricsJSON // FinishReasons is a copy
}

// Capture copies what the exporter needs out of m. Call it from the
// goroutine that drives m, after Tick.
func Capture(m *core.Monitor) *View {
	doc := m.Snapshot()
	rep := m.Report()
	v := &View{
		Time: m.Now(), Window: m.Window(), Evaluations: m.Evaluations(),
		Findings:   cloneFindings(doc.Findings),
		NotChecked: slices.Clone(rep.Missing),
	}
	for _, u := range m.URLs() {
		e := m.Endpoint(u)
		if e == nil {
			continue
		}
		v.Endpoints = append(v.Endpoints, Endpoint{
			URL: u, Engine: e.Identity.Engine, Version: e.Identity.Version, Simulated: e.Identity.Simulated,
			State: e.Life, Scrapes: e.Scrapes, Up: e.Up(),
			ErrKind: e.ErrKind, LastOK: e.LastOK,
		})
	}
	for _, ej := range doc.Endpoints {
		if ej.Metrics == nil {
			continue
		}
		mj := *ej.Metrics
		mj.FinishReasons = maps.Clone(mj.FinishReasons)
		v.Series = append(v.Series, Series{Endpoint: ej.URL, Engine: ej.Engine, Model: ej.Model, Metrics: mj})
	}
	return v
}

func cloneFindings(fs []diagnosis.Finding) []diagnosis.Finding {
	out := make([]diagnosis.Finding, len(fs))
	for i, f := range fs {
		f.Evidence = slices.Clone(f.Evidence)
		f.Actions = slices.Clone(f.Actions)
		out[i] = f
	}
	return out
}
