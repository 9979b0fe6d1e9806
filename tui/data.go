package tui

import (
	"time"

	"github.com/llmtop/llmtop/model"
)

// Data is the picture every pane and overlay renders from. The root model
// owns it and changes it only in Update; components read it.
type Data struct {
	Store *model.Store
	// Now is the time of the newest tick or message: the screen's clock.
	Now      time.Time
	Started  time.Time
	Interval time.Duration
	Window   time.Duration
	Paused   bool
	// Zoom is the pane shown alone ("" for the grid): a pane may show more
	// when it has the screen.
	Zoom string

	// Endpoints are the watched endpoints in the order given; Info holds
	// what their newest scrape said.
	Endpoints []string
	Info      map[string]*EndpointInfo
	// Selected indexes Store.Keys() (the endpoint+model on screen).
	Selected int

	GPU    *model.GPUSnapshot
	Events *EventLog
	Logs   *LogRing
	// FromLog counts stats samples parsed from logs.
	FromLog int

	// Version increases on every change of data, so a component can cache
	// what it derives (findings, rendered charts) until the next change.
	// The per-input versions below say which data changed: a pane drawn
	// from the store alone is not redrawn for a log line.
	Version uint64
	// StoreVersion: samples, scrapes, the selection or the window;
	// GPUVersion: a GPU snapshot; EventsVersion: an event; LogsVersion: a
	// log line.
	StoreVersion, GPUVersion, EventsVersion, LogsVersion uint64
	// Sources are the registered sources and why each is absent ("" when
	// it runs).
	Sources map[string]string

	Simulated  bool
	Styles     *Styles
	Thresholds Thresholds
	Keys       KeyMap

	base       model.State // the store's picture of the selected key
	stateValid bool
	state      model.State // what the panes show (base, or the log's picture)
	mode       int         // see freshMode
	fresh      Freshness
	logSt      model.State
	logValid   bool
	series     map[string]*seriesBuf // per name; the points are reused between changes
	restarts   map[string]time.Time  // newest restart per endpoint, until the data changes
	keys       []model.Key           // ModelKeys, until the data changes
	keysValid  bool
}

// seriesBuf is a sparkline read from the store, kept between changes of
// data so that reading it again allocates nothing.
type seriesBuf struct {
	pts []model.Point
	ok  bool
}

// EndpointInfo is an endpoint's newest scrape without its samples.
type EndpointInfo struct {
	URL       string
	Identity  model.Identity
	Last      time.Time // newest scrape, successful or not
	LastOK    time.Time // newest scrape with metrics
	FirstSeen time.Time
	Err       string
	ErrKind   model.ScrapeErrKind
	Hint      string
	Took      time.Duration
	Scrapes   int
}

// ModelKeys are the endpoint+model pairs to choose from. Log-derived samples
// that carry no model name are the same endpoint's picture from its log:
// they are not a separate choice when the endpoint is scraped too (the
// store prefers scraped data anyway).
func (d *Data) ModelKeys() []model.Key {
	if d.keysValid {
		return d.keys
	}
	all := d.Store.Keys()
	scraped := map[string]bool{}
	for _, k := range all {
		if d.Store.HasSource(k, model.FromScrape) {
			scraped[k.Endpoint] = true
		}
	}
	out := all[:0]
	for _, k := range all {
		if !d.Store.HasSource(k, model.FromScrape) && scraped[k.Endpoint] {
			continue
		}
		out = append(out, k)
	}
	d.keys, d.keysValid = out, true
	return out
}

// Key is the endpoint+model on screen; ok is false before any sample.
func (d *Data) Key() (model.Key, bool) {
	keys := d.ModelKeys()
	if len(keys) == 0 {
		return model.Key{}, false
	}
	i := d.Selected
	if i < 0 || i >= len(keys) {
		i = 0
	}
	return keys[i], true
}

// State is the selected key's state over the window, read from the store
// once per change of data or window. While scrapes have failed for three
// intervals it is the log's stats-line picture when the log has a current
// one (see Fresh).
func (d *Data) State() model.State {
	if !d.stateValid {
		k, ok := d.Key()
		if !ok {
			d.base = model.State{Window: d.Window, Latency: map[model.Latency]model.Dist{}}
		} else {
			d.base = d.Store.State(k, d.Window)
		}
		d.stateValid, d.mode = true, -1
	}
	mode, f := d.freshMode(d.base)
	d.fresh = f
	if mode != d.mode {
		d.mode, d.state = mode, d.base
		if mode == 2 && d.base.Source != model.FromLog {
			d.state = fromLogState(d.base, d.logState(d.base.Key))
		}
	}
	return d.state
}

// Series is a sparkline of the selected key over the window, read from the
// store once per change of data.
//
// The points are valid until the data changes: a caller must not keep
// them (they are overwritten in place by the next read).
func (d *Data) Series(name string) []model.Point {
	b := d.series[name]
	if b != nil && b.ok {
		return b.pts
	}
	k, ok := d.Key()
	if !ok {
		return nil
	}
	if b == nil {
		if d.series == nil {
			d.series = map[string]*seriesBuf{}
		}
		b = &seriesBuf{}
		d.series[name] = b
	}
	b.pts, b.ok = d.Store.AppendSeries(b.pts[:0], k, name, d.Now.Add(-d.Window)), true
	return b.pts
}

// invalidate drops what is derived from the store after samples, scrapes,
// the selection or the window changed.
func (d *Data) invalidate() {
	d.stateValid, d.logValid, d.keysValid = false, false, false
	for _, b := range d.series {
		b.ok = false
	}
	clear(d.restarts)
	d.StoreVersion++
	d.Version++
}

// touched records a change outside the store (a GPU snapshot, an event, a
// log line): the store's derived values stay valid.
func (d *Data) touched(v *uint64) {
	*v++
	d.Version++
}

// Endpoint returns the info of the selected key's endpoint (nil before
// any scrape).
func (d *Data) Endpoint() *EndpointInfo {
	if k, ok := d.Key(); ok {
		if e := d.Info[k.Endpoint]; e != nil {
			return e
		}
	}
	if len(d.Endpoints) > 0 {
		return d.Info[d.Endpoints[0]]
	}
	return nil
}

// Stale reports whether an endpoint's newest scrape is older than three
// refresh intervals.
func (d *Data) Stale(e *EndpointInfo) bool {
	if e == nil || e.Last.IsZero() || d.Paused {
		return false
	}
	return d.Now.Sub(e.Last) > 3*d.Interval
}

// Health is an endpoint's badge, worst first: DOWN, DEGRADED (metrics
// unreadable, health not up), STALE (no scrape for three intervals),
// RESTARTED (within the window), UP; with its level. SIMULATED is shown beside it (see Data.Simulated).
func (d *Data) Health(e *EndpointInfo) (string, Level) {
	if e == nil || e.Scrapes == 0 {
		return "WAITING", LevelNone
	}
	switch {
	case e.ErrKind == model.ErrRefused || e.ErrKind == model.ErrTimeout || e.ErrKind == model.ErrUnreachable ||
		e.Identity.Health == model.HealthDown:
		return "DOWN", LevelCrit
	case e.Err != "" || (e.Identity.Health != model.HealthUp && e.Identity.Health != model.HealthUnknown && e.Identity.Health != ""):
		return "DEGRADED", LevelWarn
	case d.Stale(e):
		return "STALE", LevelWarn
	}
	// A restart is news only while nothing worse holds: it never masks
	// DOWN, DEGRADED or STALE.
	if r := d.lastRestart(e); !r.IsZero() && d.Now.Sub(r) < d.Window {
		return "RESTARTED", LevelWarn
	}
	return "UP", LevelOK
}

// lastRestart is the newest restart the store saw on any of the
// endpoint's models, computed once per change of data.
func (d *Data) lastRestart(e *EndpointInfo) time.Time {
	if r, ok := d.restarts[e.URL]; ok {
		return r
	}
	var last time.Time
	for _, k := range d.Store.Keys() {
		if k.Endpoint != e.URL {
			continue
		}
		if rs := d.Store.State(k, d.Window).Restarts; len(rs) > 0 && rs[len(rs)-1].After(last) {
			last = rs[len(rs)-1]
		}
	}
	if d.restarts == nil {
		d.restarts = map[string]time.Time{}
	}
	d.restarts[e.URL] = last
	return last
}

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
// and title) bumps its count instead.
func (l *EventLog) Add(e model.Event) {
	if last, ok := l.ring.Last(); ok && last.Endpoint == e.Endpoint && last.Kind == e.Kind && last.Title == e.Title {
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

// addLogLine keeps a log line, and its event when it matched a pattern.
func (d *Data) addLogLine(l model.LogLine) {
	d.Logs.Add(l)
	d.touched(&d.LogsVersion)
	if l.Event != nil {
		e := *l.Event
		if e.Line == "" {
			e.Line = l.Text
		}
		d.Events.Add(e)
		d.touched(&d.EventsVersion)
	}
}

// Len is the number of lines held.
func (r *LogRing) Len() int { return r.ring.Len() }

// At returns the i-th held line, oldest first.
func (r *LogRing) At(i int) model.LogLine { return r.ring.At(i) }
