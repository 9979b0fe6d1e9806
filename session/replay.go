package session

import (
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
)

// A recording is replayed into a fresh core the way its face drove the
// live one, through the functions here and nowhere else: `replay` (its
// seeks and checkpoints), `diagnose --from`, `snapshot --from` and the
// recorder's checkpointing core all feed records with Feed, a diagnose
// recording's watch with Watch.

// Feed applies one record to mon as the monitor (and export) took it: a
// message, then the rules' chance to run at its time (the screen does that
// after each message), or the clock alone.
func Feed(mon *core.Monitor, r recording.Record) {
	switch m := r.Msg.(type) {
	case recording.Tick:
		mon.Tick(r.Time)
	case recording.Scenario, recording.Note:
		// for the screen only
	case model.Input:
		mon.Apply(m)
		mon.Tick(r.Time)
	}
}

// ReplayCore is the core a recording is replayed into: the recorded
// endpoints, window and rules (the defaults when the header has none).
func ReplayCore(h recording.Header) *core.Monitor {
	o := core.Options{Endpoints: h.Endpoints, Window: time.Duration(h.Window)}
	if h.Diagnosis != nil {
		o.Diagnosis = *h.Diagnosis
	} else {
		o.Diagnosis = config.DiagnosisConfig(config.DefaultThresholds)
	}
	return core.New(o)
}

// Watch is diagnose's clock, live or replayed: each evaluation judges the
// window since the watch began.
type Watch struct {
	Mon   *core.Monitor
	Start time.Time
}

// Evaluate runs the rules at now over everything since the watch began.
func (w Watch) Evaluate(now time.Time) diagnosis.Report {
	w.Mon.SetWindow(max(now.Sub(w.Start), time.Second))
	return w.Mon.Evaluate(now)
}

// Feed applies one record of a diagnose recording as the live watch took
// it: its Tick records are the watch's evaluations (evaluated is true and
// rep the report), every other record an input.
func (w Watch) Feed(r recording.Record) (rep diagnosis.Report, evaluated bool) {
	switch m := r.Msg.(type) {
	case recording.Tick:
		return w.Evaluate(r.Time), true
	case recording.Scenario, recording.Note:
	case model.Scrape:
		for i := range m.Samples {
			m.Samples[i].Endpoint = m.Endpoint
		}
		w.Mon.Apply(m)
	case model.Input:
		w.Mon.Apply(m)
	}
	return diagnosis.Report{}, false
}
