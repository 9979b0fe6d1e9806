package tui

import (
	"fmt"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The events pane is the user's timeline: besides restarts, scrape
// failures and log events it shows the diagnosis findings opening and
// closing and preemptions starting and stopping. They are found when the
// rules run (liveDiagnosis.refresh) and moved into the event log by the
// root's Update (drainDiagnosisEvents), never while drawing.

// Event kinds the monitor raises from the diagnosis.
const (
	KindFindingOpened = "finding_opened"
	KindFindingClosed = "finding_closed"
	KindPreemptStart  = "preemptions_started"
	KindPreemptStop   = "preemptions_stopped"
)

// preemptQuiet is how long no preemption must be seen before they count
// as stopped.
const preemptQuiet = 15 * time.Second

func findingKey(f diagnosis.Finding) string { return f.ID + "\x00" + f.Endpoint }

// transitions compares a new report with the findings open before and
// queues an event for each finding opened or closed.
func (l *liveDiagnosis) transitions(rep diagnosis.Report, now time.Time) {
	open := map[string]diagnosis.Finding{}
	for _, f := range rep.Findings {
		if !f.Active() {
			continue
		}
		k := findingKey(f)
		open[k] = f
		if _, was := l.open[k]; !was {
			ev := model.Event{Time: f.Opened, Endpoint: f.Endpoint, Source: "diagnosis", Kind: KindFindingOpened,
				Severity: f.Severity, Category: string(f.Category), Title: sevTag(f.Severity) + " opened: " + f.Title}
			if ev.Time.IsZero() {
				ev.Time = now
			}
			if len(f.Actions) > 0 {
				ev.Fields = map[string]string{"hint": f.Actions[0].Change + ": " + f.Actions[0].Why}
			} else if f.Cause != "" {
				ev.Fields = map[string]string{"hint": f.Cause}
			}
			l.events = append(l.events, ev)
		}
	}
	for k, f := range l.open {
		if _, still := open[k]; !still {
			l.events = append(l.events, model.Event{Time: now, Endpoint: f.Endpoint, Source: "diagnosis", Kind: KindFindingClosed,
				Severity: model.SevInfo, Category: string(f.Category), Title: "closed: " + f.Title})
		}
	}
	l.open = open
}

// preemptions queues an event when an endpoint starts preempting (its
// newest per-refresh rate is above zero) and when it has not preempted
// for preemptQuiet.
func (l *liveDiagnosis) preemptions(d *Data) {
	if l.preempting == nil {
		l.preempting = map[model.Key]bool{}
	}
	for _, k := range d.ModelKeys() {
		l.buf = d.Store.AppendSeries(l.buf[:0], k, model.SeriesPreemptPS, d.Now.Add(-preemptQuiet))
		var newest, first model.Point // first: the oldest preempting point in the span
		seen := false
		for _, p := range l.buf {
			if p.OK && p.V > 0 && !seen {
				seen, first = true, p
			}
			newest = p
		}
		switch {
		case !l.preempting[k] && newest.OK && newest.V > 0:
			l.preempting[k] = true
			l.events = append(l.events, model.Event{Time: first.T, Endpoint: k.Endpoint, Source: "diagnosis", Kind: KindPreemptStart,
				Severity: model.SevWarn, Category: "memory",
				Title:  fmt.Sprintf("preemptions started: %s/s", fmtNum(model.Some(newest.V))),
				Fields: map[string]string{"hint": "the KV cache is full: running requests are evicted and recomputed later (see d for the fix)"}})
		case l.preempting[k] && !seen && len(l.buf) > 0:
			l.preempting[k] = false
			l.events = append(l.events, model.Event{Time: d.Now, Endpoint: k.Endpoint, Source: "diagnosis", Kind: KindPreemptStop,
				Severity: model.SevInfo, Category: "memory", Title: fmt.Sprintf("preemptions stopped (none for %s)", fmtDur(preemptQuiet))})
		}
	}
}

// drainDiagnosisEvents runs the rules when the data changed and moves the
// transitions they found into the event log.
func (m *Model) drainDiagnosisEvents() {
	l := liveFor(m.d)
	if len(l.events) == 0 {
		return
	}
	for _, e := range l.events {
		m.d.Events.Add(e)
	}
	l.events = l.events[:0]
	m.d.touched(&m.d.EventsVersion)
}
