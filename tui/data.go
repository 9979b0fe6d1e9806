package tui

import (
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// Data is the picture every pane and overlay renders from. The root model
// owns it and changes it only in Update; components read it.
type Data struct {
	// Core is the headless monitor every face reads: it owns the store,
	// the endpoints, their runs, the events, the log lines and the
	// diagnosis. Store, Events and Logs are its own objects, held here
	// for the panes' convenience (not copies).
	Core   *core.Monitor
	Store  *model.Store
	Events *EventLog
	Logs   *LogRing
	// Now is the time of the newest tick or message: the screen's clock.
	Now      time.Time
	Started  time.Time
	Interval time.Duration
	Window   time.Duration
	Paused   bool
	// PausedAt is Now when the screen was paused: what it draws while
	// paused is as of that moment (Clock).
	PausedAt time.Time
	// Zoom is the pane shown alone ("" for the grid): a pane may show more
	// when it has the screen.
	Zoom string

	// Selected indexes Choices() (the endpoint+model on screen, or an
	// endpoint that gave no model yet).
	Selected int

	// Version increases on every change of data, so a component can cache
	// what it derives (findings, rendered charts) until the next change.
	// The per-input versions below say which data changed: a pane drawn
	// from the store alone is not redrawn for a log line.
	Version uint64
	// StoreVersion: samples, scrapes, the selection or the window;
	// GPUVersion: a GPU snapshot; EventsVersion: an event; LogsVersion: a
	// log line.
	StoreVersion, GPUVersion, EventsVersion, LogsVersion uint64
	// ReportVersion: the core ran the rules.
	ReportVersion uint64
	// Sources are the registered sources and why each is absent ("" when
	// it runs).
	Sources map[string]string

	Simulated bool
	// Recording is the file this session is recorded into ("" when not);
	// Prometheus is the Prometheus the endpoints are read through ("" when
	// they are scraped directly). The header says both.
	Recording, Prometheus string
	// Scenario is the demo's current simulated scenario (empty otherwise).
	Scenario ScenarioMsg
	// Replay is where a replay stands (nil live).
	Replay *ReplayState
	// Input hands the core an input the screen made (a benchmark's or a
	// probe's result, an acknowledgement, a silence, a window change): the
	// root records it (Options.OnInput) and applies it at once.
	Input      func(model.Input)
	Styles     *Styles
	Thresholds Thresholds
	Keys       KeyMap
	// panes are the panes on this screen, in zoom-key order (help lists them)
	panes []Pane

	base       model.State // the store's picture of the selected key
	stateValid bool
	state      model.State // what the panes show (base, or the log's picture)
	mode       int         // see freshMode
	fresh      Freshness
	logSt      model.State
	logValid   bool
	series     map[string]*seriesBuf // per name; the points are reused between changes
	keys       []model.Key           // ModelKeys, until the data changes
	choices    []model.Key           // Choices, while choicesValid
	keysValid  bool
	// choicesValid is cleared with keysValid
	choicesValid bool
	// hostSeen is the host reading the Host pane was last keyed on, and
	// hostVersion counts its changes (see hostPane.DrawKey); the pointer
	// is held, so a new reading cannot take its address
	hostSeen    *model.HostReading
	hostVersion uint64
	// drawing is set while a pane is drawn, and use is what it read of the
	// clock so far (see draw_clock.go)
	drawing bool
	use     clockUse
	// frame counts the frames drawn (Render), rendering is set while one
	// is: a part drawn twice in one frame is drawn once (clear, the
	// findings pane's all-clear view); outside a frame, every time
	frame     uint64
	rendering bool
	clear     clearParts
	// notChecked is the all-clear view's "not checked" lines, kept while
	// what they say, the width and the styles are the same (see
	// clearParts.notChecked)
	notChecked notCheckedLines
	// plots are the charts' last plots, by chart (see plotAt)
	plots map[string]*plotMemo
}

// seriesBuf is a sparkline read from the store, kept between changes of
// data so that reading it again allocates nothing.
type seriesBuf struct {
	pts []model.Point
	ok  bool
}

// EndpointInfo is what the core knows of an endpoint: its newest scrape
// without the samples, its lifecycle and its runs.
type EndpointInfo = core.Endpoint

// EventLog, EventEntry and LogRing are the core's.
type (
	EventLog   = core.EventLog
	EventEntry = core.EventEntry
	LogRing    = core.LogRing
)

// Endpoints are the watched endpoints in the order given or first seen.
func (d *Data) Endpoints() []string { return d.Core.URLs() }

// Info is what the newest scrape of url said (nil before any).
func (d *Data) Info(url string) *EndpointInfo { return d.Core.Endpoint(url) }

// GPU is the newest GPU snapshot (nil before any).
func (d *Data) GPU() *model.GPUSnapshot { return d.Core.GPU() }

// FromLog counts stats samples parsed from logs.
func (d *Data) FromLog() int { return d.Core.FromLog() }

// ModelKeys are the endpoint+model pairs to choose from (the core's).
func (d *Data) ModelKeys() []model.Key {
	if d.keysValid {
		return d.keys
	}
	d.keys, d.keysValid, d.choicesValid = d.Core.ModelKeys(), true, false
	return d.keys
}

// Choices are what h/→ step through: every endpoint+model pair, then every
// endpoint without one (down, degraded, not scraped yet): each is a choice
// of its own.
func (d *Data) Choices() []model.Key {
	keys := d.ModelKeys()
	if d.choicesValid {
		return d.choices
	}
	d.choices = append(d.choices[:0], keys...)
	// the endpoints with a key, as a set: looking each URL up in the
	// keys made a fleet's choices quadratic (4 million comparisons a
	// refresh at 2 000 replicas)
	keyed := make(map[string]bool, len(keys))
	for _, k := range keys {
		keyed[k.Endpoint] = true
	}
	for _, u := range d.Core.URLs() {
		if !keyed[u] {
			d.choices = append(d.choices, model.Key{Endpoint: u})
		}
	}
	d.choicesValid = true
	return d.choices
}

// selected is the index into Choices on screen.
func (d *Data) selected() int {
	if n := len(d.Choices()); d.Selected < 0 || d.Selected >= n {
		return 0
	}
	return d.Selected
}

// SelectedURL is the endpoint on screen ("" when none is watched).
func (d *Data) SelectedURL() string {
	if c := d.Choices(); len(c) > 0 {
		return c[d.selected()].Endpoint
	}
	return ""
}

// Key is the endpoint+model on screen; ok is false before any sample, or
// when the endpoint chosen has no model.
func (d *Data) Key() (model.Key, bool) {
	keys := d.ModelKeys()
	if d.Selected >= 0 && d.Selected < len(keys) {
		return keys[d.Selected], true // the common case reads no choices
	}
	if i := d.selected(); i < len(keys) {
		return keys[i], true
	}
	return model.Key{}, false
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
	// (the clock as it is when the data changed: kept until it changes
	// again, so a draw reading the series has not read the clock)
	b.pts, b.ok = d.Store.AppendSeries(b.pts[:0], k, name, d.clock().Add(-d.Window)), true
	return b.pts
}

// invalidate drops what is derived from the store after samples, scrapes,
// the selection or the window changed.
func (d *Data) invalidate() {
	d.stateValid, d.logValid, d.keysValid = false, false, false
	for _, b := range d.series {
		b.ok = false
	}
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
		if e := d.Info(k.Endpoint); e != nil && e.Scrapes > 0 {
			return e
		}
	}
	if u := d.SelectedURL(); u != "" {
		if e := d.Info(u); e != nil && e.Scrapes > 0 {
			return e
		}
	}
	return nil
}

// Clock is the time the screen draws at: Now, or the moment of the pause
// while paused, so that uptime, "down 23s", "as of … ago" and every other
// duration on screen stand still with the data. A pane that reads it is
// drawn again whenever it moves; ageText and olderThan read it for the
// usual questions and say when their answer changes (draw_clock.go).
func (d *Data) Clock() time.Time {
	if d.drawing {
		d.use.raw = true
	}
	return d.clock()
}

// clock is Clock, not noted in a pane's draw.
func (d *Data) clock() time.Time {
	if d.Paused && !d.PausedAt.IsZero() {
		return d.PausedAt
	}
	return d.Now
}

// Stale reports whether an endpoint's newest scrape is older than three
// refresh intervals.
func (d *Data) Stale(e *EndpointInfo) bool {
	stale := e.Stale(d.clock(), d.badgeStale())
	if !stale && e != nil && !e.Last.IsZero() && d.badgeStale() > 0 {
		d.changesAt(e.Last.Add(d.badgeStale() + 1)) // where core.Endpoint.Stale turns
	}
	return stale
}

// badgeStale is how long without a scrape the badge says STALE: three
// refreshes, never while paused.
func (d *Data) badgeStale() time.Duration {
	if d.Paused {
		return 0
	}
	return 3 * d.Interval
}

// Health is an endpoint's badge, worst first: CRASHED, DOWN, STOPPED
// (a clean shutdown), STARTING (the log or health route shows a start),
// DEGRADED (metrics unreadable, health not up), STALE (no scrape for three
// intervals), RESTARTED (a new run within the window), UP, ROUTER (a
// serving layer that answers); with its level: the core's word
// (core.Endpoint.Status). SIMULATED is shown beside it (see Data.Simulated).
func (d *Data) Health(e *EndpointInfo) (string, Level) {
	c := d.clock()
	st := e.Status(c, d.badgeStale(), d.Window) // the core's word
	if t := e.StatusTurns(c, d.badgeStale(), d.Window); !t.IsZero() {
		d.changesAt(t)
	}
	return string(st), statusLevel[st]
}

// statusLevel is each status's colour.
var statusLevel = map[core.Status]Level{
	core.StatusWaiting: LevelNone, core.StatusStarting: LevelWarn, core.StatusCrashed: LevelCrit,
	core.StatusStopped: LevelWarn, core.StatusDown: LevelCrit, core.StatusDegraded: LevelWarn,
	core.StatusStale: LevelWarn, core.StatusRestarted: LevelWarn, core.StatusUp: LevelOK, core.StatusGone: LevelNone,
	core.StatusRouter: LevelNone,
}
