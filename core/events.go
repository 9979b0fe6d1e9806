package core

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// EventLog keeps recent events newest last, collapsing an event that
// repeats the previous one of the same kind into a count.
type EventLog struct {
	ring *model.Ring[EventEntry]
}

// EventEntry is one event, or a run of identical ones.
type EventEntry struct {
	model.Event
	Count int
	First time.Time
}

// NewEventLog keeps at most n entries.
func NewEventLog(n int) *EventLog { return &EventLog{ring: model.NewRing[EventEntry](n)} }

// Add records an event; a repeat of the newest entry (same endpoint, kind
// and title, and both history or both now) bumps its count instead.
func (l *EventLog) Add(e model.Event) {
	if last, ok := l.ring.Last(); ok && last.Endpoint == e.Endpoint && last.Kind == e.Kind && last.Title == e.Title &&
		last.Backlog == e.Backlog && last.Untimed == e.Untimed && last.ZoneUnknown == e.ZoneUnknown {
		last.Count++
		last.Time = e.Time
		last.Line = e.Line
		l.ring.SetLast(last)
		return
	}
	l.ring.Push(EventEntry{Event: e, Count: 1, First: e.Time})
}

// Len is the number of entries.
func (l *EventLog) Len() int { return l.ring.Len() }

// Newest returns the i-th newest entry (0 is the newest).
func (l *EventLog) Newest(i int) EventEntry { return l.ring.At(l.ring.Len() - 1 - i) }

// LogRing keeps the newest log lines; Seq numbers every line ever added so
// a view can tell how many were dropped.
type LogRing struct {
	ring *model.Ring[model.LogLine]
	Seq  int
}

// NewLogRing keeps at most n lines.
func NewLogRing(n int) *LogRing { return &LogRing{ring: model.NewRing[model.LogLine](n)} }

// Add appends a line.
func (r *LogRing) Add(l model.LogLine) { r.ring.Push(l); r.Seq++ }

// Len is the number of lines held.
func (r *LogRing) Len() int { return r.ring.Len() }

// At returns the i-th held line, oldest first.
func (r *LogRing) At(i int) model.LogLine { return r.ring.At(i) }

// Event kinds the monitor raises from the diagnosis: the events pane is the
// user's timeline, with findings opening and closing and preemptions
// starting and stopping beside restarts and log events.
const (
	KindFindingOpened = "finding_opened"
	KindFindingClosed = "finding_closed"
	KindPreemptStart  = "preemptions_started"
	KindPreemptStop   = "preemptions_stopped"
)

// preemptQuiet is how long no preemption must be seen before they count
// as stopped.
const preemptQuiet = 15 * time.Second

type findingKey struct{ id, endpoint string } // endpoint: the finding's Subject

// openFinding is what the event of a finding's close says of it.
type openFinding struct {
	category diagnosis.Category
	title    string
	endpoint string // where it is now (a pool's finding moves between its workers)
}

// transitions compares a new report with the findings open before and
// records an event for each finding opened or closed.
func (m *Monitor) transitions(rep diagnosis.Report, now time.Time) {
	// The set before this one's memory, emptied: a fleet's findings are
	// thousands, and a new set every refresh was megabytes.
	open := m.wasOpen
	if open == nil {
		open = map[findingKey]openFinding{}
	}
	clear(open)
	for _, f := range rep.Findings {
		if !f.Active() {
			continue
		}
		k := findingKey{f.ID, f.Subject()}
		open[k] = openFinding{f.Category, f.Title, f.Endpoint}
		if _, was := m.open[k]; !was {
			ev := model.Event{Time: f.Opened, Endpoint: f.Endpoint, Source: "diagnosis", Kind: KindFindingOpened,
				Severity: f.Severity, Category: string(f.Category), Title: f.Severity.Tag() + " opened: " + f.Title}
			if ev.Time.IsZero() {
				ev.Time = now
			}
			if len(f.Actions) > 0 {
				ev.Fields = map[string]string{"hint": f.Actions[0].Change + ": " + f.Actions[0].Why}
			} else if f.Cause != "" {
				ev.Fields = map[string]string{"hint": f.Cause}
			}
			m.addEvent(ev)
		}
	}
	// Findings closing at once are told in one order (by endpoint, then
	// finding), not the map's: the timeline a replay rebuilds, from the
	// start or from a checkpoint, is the one the monitor showed.
	var closed []findingKey
	for k := range m.open {
		if _, still := open[k]; !still {
			closed = append(closed, k)
		}
	}
	slices.SortFunc(closed, func(a, b findingKey) int {
		return cmp.Or(cmp.Compare(a.endpoint, b.endpoint), cmp.Compare(a.id, b.id))
	})
	for _, k := range closed {
		f := m.open[k]
		m.addEvent(model.Event{Time: now, Endpoint: f.endpoint, Source: "diagnosis", Kind: KindFindingClosed,
			Severity: model.SevInfo, Category: string(f.category), Title: "closed: " + f.title})
	}
	m.open, m.wasOpen = open, m.open
}

// preemptions records an event when an endpoint starts preempting (its
// newest per-refresh rate is above zero) and when it has not preempted for
// preemptQuiet.
func (m *Monitor) preemptions() {
	for _, k := range m.evalKeys {
		if m.preemptsStand(k) {
			continue
		}
		m.buf = m.store.AppendSeries(m.buf[:0], k, model.SeriesPreemptPS, m.now.Add(-preemptQuiet))
		var newest, first model.Point // first: the oldest preempting point in the span
		seen := false
		for _, p := range m.buf {
			if p.OK && p.V > 0 && !seen {
				seen, first = true, p
			}
			newest = p
		}
		switch {
		case !m.preempting[k] && newest.OK && newest.V > 0:
			m.preempting[k] = true
			m.addEvent(model.Event{Time: first.T, Endpoint: k.Endpoint, Source: "diagnosis", Kind: KindPreemptStart,
				Severity: model.SevWarn, Category: "memory",
				Title:  fmt.Sprintf("preemptions started: %s/s", fmtRate(newest.V)),
				Fields: map[string]string{"hint": "the KV cache is full: running requests are evicted and recomputed later (see d for the fix)"}})
		case m.preempting[k] && !seen && len(m.buf) > 0:
			m.preempting[k] = false
			m.addEvent(model.Event{Time: m.now, Endpoint: k.Endpoint, Source: "diagnosis", Kind: KindPreemptStop,
				Severity: model.SevInfo, Category: "memory", Title: fmt.Sprintf("preemptions stopped (none for %s)", preemptQuiet)})
		}
	}
}

// preemptsStand reports whether k's preemptions start or stop nothing
// now, read from the span's newest point alone (not when
// Options.FromScratch: the span is read): they start when the newest
// preempts, which it tells, and stop when none in the span does, which a
// newest that preempts denies and a span without points too. What is left
// (the newest preempts and they had not started: from when; it does not
// and they had: whether an older one does) reads the span.
func (m *Monitor) preemptsStand(k model.Key) bool {
	if m.opts.FromScratch {
		return false
	}
	p, ok := m.store.LastPoint(k, model.SeriesPreemptPS)
	in := ok && p.T.After(m.now.Add(-preemptQuiet))
	busy := in && p.OK && p.V > 0
	return busy == m.preempting[k] || !busy && !in
}

func fmtRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v == float64(int64(v)):
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
