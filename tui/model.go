package tui

import (
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// Options configure the monitor. Functions are injected so that the model
// itself never does I/O.
type Options struct {
	// Screen, when set, is where frames go (Bubble Tea runs without its
	// renderer); View then returns an empty view.
	Screen    *Screen
	Endpoints []string
	Interval  time.Duration // initial refresh interval (default 1 s)
	Window    time.Duration // initial window: 1m, 5m or 15m (default 1m)
	Simulated bool
	// Sources are the registered sources' names with why each is absent
	// ("" when it started).
	Sources map[string]string
	// NoGPU: the GPUs are not read (--no-gpu), so no GPU snapshot comes
	// with each refresh (see gathers).
	NoGPU bool
	// SetInterval tells the sources about a new interval; it runs in a
	// tea.Cmd, never in Update.
	SetInterval func(time.Duration)
	// Save writes a JSON snapshot and returns where; it runs in a tea.Cmd.
	Save func(data []byte) (string, error)
	// Theme is "auto" (ask the terminal, without waiting), "dark", "light"
	// or "mono"; NoColor drops colour whatever the theme.
	Theme   string
	NoColor bool
	Keys    *KeyMap
	// NoMouse leaves the mouse to the terminal (its own selection).
	NoMouse bool
	// Panes hides, orders and adds panes (the config's [panes]).
	Panes      PaneConfig
	Thresholds *Thresholds
	// Now is the start time (tests pin it); zero means time.Now().
	Now time.Time
	// Init are extra commands run at start (the demo's scenario driver…).
	Init []tea.Cmd
	// LogLines and Events bound the core's rings when it is built here
	// (0: the core's defaults, 10000 and 500).
	LogLines, Events int
	// Core is the monitor to show; nil builds one from the options.
	Core *core.Monitor
	// Replay, when set, makes this a replay of a recording: the
	// replayer's ReplayMsg moves the clock, and the replay keys are handed
	// to Replay (in a tea.Cmd; it must not block).
	Replay func(ReplayKey)
	// OnInput hears each input the screen itself gives the core — a
	// finished benchmark, a probe's result, an acknowledgement or silence,
	// a window change — before the core takes it (the recorder's tee; the
	// sources' messages are teed where they are sent); it must not block.
	OnInput func(model.Input)
	// Recording is the file the session is recorded into, Prometheus the
	// URL the endpoints are read through (both "" when not): the header
	// names them.
	Recording, Prometheus string
	// Fleet opens the fleet view first (--prometheus: the endpoints come
	// later); it opens by itself when two or more Endpoints are given.
	Fleet bool
	// Overlays replace the registered overlays of the same ID for this
	// screen (a face binds its overlays to its own run-time state).
	Overlays []OverlaySpec
	// SetWindow tells the sources that evaluate windows themselves
	// (Prometheus) about a new window; it runs in a tea.Cmd.
	SetWindow func(time.Duration)
}

// Intervals, Windows, CheckInterval and CheckWindow are the config
// package's (headless faces check --interval and --window too).
var (
	Intervals     = config.Intervals
	Windows       = config.Windows
	CheckInterval = config.CheckInterval
	CheckWindow   = config.CheckWindow
)

// SourceStatusMsg says a source started, or why it could not.
type SourceStatusMsg struct {
	Name string
	Err  string
}

// ScenarioMsg says which simulated scenario the demo is running and for
// how long (Length 0: until stopped); the header badges it.
type ScenarioMsg struct {
	Name            string
	Elapsed, Length time.Duration
	// Fleet is set while the demo's cycle watches its routed fleet: the
	// fleet view opens as that stretch begins and closes as it ends.
	Fleet bool
}

// savedMsg reports a snapshot write.
type savedMsg struct {
	path string
	err  error
}

// maxQueued bounds the messages held while paused.
const maxQueued = 20000

// Model is the root: it routes keys, data and sizes to the panes.
type Model struct {
	d        *Data
	opts     Options
	panes    []paneEntry
	overlays []overlayEntry
	help     help.Model

	width, height int
	focus         int    // index into panes
	zoom          string // pane id shown alone, "" for the grid
	overlay       int    // index into overlays, -1 when none
	// under are the overlays an open one was opened from, the last on
	// top: esc goes back to it (fleet view → d → esc is the fleet view
	// again, not the main screen).
	under []int
	// demoFleetOpen: the fleet view was opened for the demo's routed
	// stretch now running (once: esc closes it for good).
	demoFleetOpen bool
	queued        []model.Input
	status        string
	statusUntil   time.Time
	quitting      bool
	themeForced   bool
	// gen counts every message but the clock and data (whose changes the
	// per-input versions of Data track): anything may have changed a
	// pane's state (a scroll, a resize, a component's result).
	gen uint64
	// Data arriving together is drawn in one frame: a data message holds
	// the frame (View returns the previous one) until frameMsg, at most
	// frameDelay later; any other message draws at once.
	hold, framePending bool
	clock              screenClock // see clock.go
	lastFrame          string
	lastKey            screenKey
	// rows are the last grid's screen rows and rowParts the columns'
	// lines each was put together from (see gridRows)
	rows     []string
	rowParts [][]string
	// the key line, kept while the width and what the user did (gen) are
	// the same: it is the same line every data frame
	keysLine  string
	keysWidth int
	keysGen   uint64
	// the mouse: where each pane was drawn in the last frame, and the
	// last click (for double clicks, timed by wall)
	hits        []hitRect
	lastClick   int
	lastClickAt time.Time
	wall        func() time.Time
	// ordered: the config ordered the panes, so the grid follows that
	// order rather than its column tables
	ordered bool
}

// frameDelay is how long data messages are gathered into one frame: one
// frame at the program's 20 frames a second.
const frameDelay = 50 * time.Millisecond

// frameMsg ends a hold: the data gathered since is drawn.
type frameMsg struct{}

// Frame is the message the frame timer sends (frameDelay after data): a
// driver without Bubble Tea's timers, such as a benchmark of a whole
// refresh, sends it to have the held data drawn.
func Frame() tea.Msg { return frameMsg{} }

// ClockAt is the screen clock's tick at t, for a driver without its timer.
func ClockAt(t time.Time) tea.Msg { return tickMsg(t) }

// New builds the root model.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	keys := DefaultKeyMap()
	if o.Keys != nil {
		keys = *o.Keys
	}
	panes := arrange(o.Panes)
	keys.Zoom = zoomKeys(keys.Zoom, len(panes))
	th := DefaultThresholds
	if o.Thresholds != nil {
		th = *o.Thresholds
	}
	noColor := o.NoColor || o.Theme == "mono"
	c := o.Core
	if c == nil {
		c = core.New(core.Options{Endpoints: o.Endpoints, Window: o.Window, Diagnosis: DiagnosisConfig(th),
			Events: o.Events, LogLines: o.LogLines})
	}
	d := &Data{
		Core: c, Store: c.Store(), Events: c.Events(), Logs: c.Logs(), Now: o.Now, Started: o.Now,
		Interval: o.Interval, Window: o.Window,
		Sources: map[string]string{}, Simulated: o.Simulated, Recording: o.Recording, Prometheus: o.Prometheus,
		Styles: NewStyles(o.Theme != "light", noColor), Thresholds: th, Keys: keys,
	}
	for n, e := range o.Sources {
		d.Sources[n] = e
	}
	m := &Model{d: d, opts: o, overlay: -1, help: help.New(), themeForced: o.Theme != "" && o.Theme != "auto",
		lastClick: -1, wall: time.Now}
	d.Input = m.own
	m.panes = panes
	m.ordered = len(o.Panes.Order) > 0
	for _, p := range panes {
		d.panes = append(d.panes, p.p)
	}
	for _, s := range overlaySpecs {
		for _, o := range o.Overlays {
			if o.ID == s.ID && o.New != nil {
				s.New = o.New
			}
		}
		// the user's config may have moved it
		m.overlays = append(m.overlays, overlayEntry{id: s.ID, key: keys.Current(s.Key), o: s.New()})
	}
	m.restyle()
	m.fleetStart(o)
	return m
}

// Data exposes the model's data (tests, benchmarks).
func (m *Model) Data() *Data { return m.d }

// Init starts the clock and, with theme "auto", asks the terminal for its
// background without waiting for the answer.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.startClock()}
	if !m.themeForced && !m.d.Styles.NoColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	cmds = append(cmds, m.opts.Init...)
	return tea.Batch(cmds...)
}

// Update routes one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg.(type) {
	case tickMsg, clockMsg, model.Scrape, model.GPUSnapshot, model.LogLine, model.LogLines, model.Sample, model.Event, model.PortOwner, model.HostReading, model.Launch, model.Origin, BatchMsg, SourceStatusMsg, frameMsg:
		// the clock and data: the per-input versions say what changed
	default:
		m.gen++ // a key, a resize, a component's result: anything may change
	}
	m.hold = false
	if cmd, ok := m.fleetMsg(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.replayUpdate(msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case frameMsg:
		m.framePending = false
		m.dataDrawn()
		return m, nil
	case tea.WindowSizeMsg:
		if m.opts.Screen != nil {
			if msg.Width <= 0 || msg.Height <= 0 {
				return m, nil // Bubble Tea without its renderer knows no size
			}
			m.opts.Screen.Resize(msg.Width)
		}
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		return m, nil
	case tea.BackgroundColorMsg:
		if !m.themeForced {
			m.d.Styles = NewStyles(msg.IsDark(), m.d.Styles.NoColor)
			m.restyle()
		}
		return m, nil
	case clockMsg:
		if m.opts.Replay != nil { // the recording's clock moves a replay
			return m, nil
		}
		m.clockTick(time.Time(msg))
		return m, m.clockAgain()
	case tickMsg:
		if m.opts.Replay == nil {
			m.clockTick(time.Time(msg))
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseMsg:
		if m.opts.NoMouse {
			return m, nil
		}
		return m, m.mouse(msg)
	case savedMsg:
		if msg.err != nil {
			m.flash("snapshot not saved: " + msg.err.Error())
		} else {
			m.flash("snapshot saved to " + msg.path)
		}
		return m, nil
	case ScenarioMsg:
		was := m.d.Scenario.Fleet
		m.d.Scenario = msg
		m.demoFleet(was, msg.Fleet)
		return m, nil
	case SourceStatusMsg:
		m.d.Sources[msg.Name] = msg.Err
		m.d.invalidate() // every pane may say why its source is absent
		m.d.GPUVersion++
		m.d.EventsVersion++
		m.d.LogsVersion++
		return m, nil
	case benchDoneMsg:
		// Filed here, at the root: the Diagnosis pane may be hidden.
		m.fileBench(msg)
		return m, m.broadcast(msg)
	case model.Input:
		if m.d.Paused {
			m.queue(msg)
			return m, nil
		}
		m.apply(msg)
		if m.between(msg) {
			m.hold = true // drawn by the next scrape's frame or the clock's
			return m, nil
		}
		if !m.framePending && !m.gathers() {
			m.dataDrawn() // by the View that follows this message
			return m, nil
		}
		m.hold = true
		if !m.framePending {
			m.framePending = true
			return m, tea.Tick(frameDelay, func(time.Time) tea.Msg { return frameMsg{} })
		}
		return m, nil
	}
	return m, m.broadcast(msg)
}

// between says whether an input waits for the screen's next frame instead
// of drawing one of its own: the host's readings (every 3 s) and the log's
// lines and stats come between the scrapes, and each drew a frame of its
// own, nearly two frames a second at a 1 s refresh. They are in the core at
// once (the rules and the recording see them when they come) and on screen
// with the next scrape's frame, or the clock's, which ticks at most
// clockAfterData after the last data frame: no later than a refresh would
// show them. Only while the screen's clock runs (not in a replay, whose
// clock is the recording's, nor in tests that drive the model by hand).
func (m *Model) between(msg model.Input) bool {
	if m.clock.c == nil || m.opts.Replay != nil || m.lastFrame == "" {
		return false
	}
	switch msg.(type) {
	case model.HostReading, model.LogLine, model.LogLines, model.Sample:
		return true
	}
	return false
}

// gathers says whether data is gathered into one frame (frameDelay): only
// while more than one source polls on the screen's cadence (the endpoints,
// the GPUs), whose answers come milliseconds apart. With one, each answer
// is drawn at once: the frame timer would cost a wake-up of its own.
func (m *Model) gathers() bool {
	polled := len(m.opts.Endpoints)
	if !m.opts.NoGPU {
		polled++
	}
	return polled > 1
}

func (m *Model) restyle() {
	m.help.Styles = help.DefaultStyles(m.d.Styles.Dark)
	if m.d.Styles.NoColor {
		m.help.Styles = help.Styles{}
	}
}

func (m *Model) flash(s string) {
	m.status, m.statusUntil = s, m.d.Now.Add(5*time.Second)
}
