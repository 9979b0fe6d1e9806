package tui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
)

// Options configure the monitor. Functions are injected so that the model
// itself never does I/O.
type Options struct {
	Endpoints []string
	Interval  time.Duration // initial refresh interval (default 1 s)
	Window    time.Duration // initial window: 1m, 5m or 15m (default 1m)
	Simulated bool
	// Sources are the registered sources' names with why each is absent
	// ("" when it started).
	Sources map[string]string
	// SetInterval tells the sources about a new interval; it runs in a
	// tea.Cmd, never in Update.
	SetInterval func(time.Duration)
	// Save writes a JSON snapshot and returns where; it runs in a tea.Cmd.
	Save func(data []byte) (string, error)
	// Theme is "auto" (ask the terminal, without waiting), "dark", "light"
	// or "mono"; NoColor drops colour whatever the theme.
	Theme      string
	NoColor    bool
	Keys       *KeyMap
	Thresholds *Thresholds
	// Now is the start time (tests pin it); zero means time.Now().
	Now time.Time
	// Init are extra commands run at start (the demo's scenario driver…).
	Init []tea.Cmd
	// LogLines and Events bound the rings (defaults 5000 and 500).
	LogLines, Events int
}

// Intervals are the refresh intervals +/- step through.
var Intervals = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute}

// Windows are the spans [/] step through.
var Windows = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute}

// tickMsg is the screen clock: staleness and uptime move with it.
type tickMsg time.Time

// SourceStatusMsg says a source started, or why it could not.
type SourceStatusMsg struct {
	Name string
	Err  string
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
	queued        []tea.Msg
	status        string
	statusUntil   time.Time
	quitting      bool
	themeForced   bool
}

// New builds the root model.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Window <= 0 {
		o.Window = time.Minute
	}
	if o.LogLines <= 0 {
		o.LogLines = 5000
	}
	if o.Events <= 0 {
		o.Events = 500
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	keys := DefaultKeyMap()
	if o.Keys != nil {
		keys = *o.Keys
	}
	th := DefaultThresholds
	if o.Thresholds != nil {
		th = *o.Thresholds
	}
	noColor := o.NoColor || o.Theme == "mono"
	d := &Data{
		Store: model.NewStore(model.DefaultStoreConfig), Now: o.Now, Started: o.Now,
		Interval: o.Interval, Window: o.Window, Endpoints: o.Endpoints,
		Info: map[string]*EndpointInfo{}, Events: NewEventLog(o.Events), Logs: NewLogRing(o.LogLines),
		Sources: map[string]string{}, Simulated: o.Simulated,
		Styles: NewStyles(o.Theme != "light", noColor), Thresholds: th, Keys: keys,
	}
	for n, e := range o.Sources {
		d.Sources[n] = e
	}
	m := &Model{d: d, opts: o, overlay: -1, help: help.New(), themeForced: o.Theme != "" && o.Theme != "auto"}
	for _, s := range paneSpecs {
		m.panes = append(m.panes, paneEntry{id: s.ID, slot: s.Slot, p: s.New()})
	}
	for _, s := range overlaySpecs {
		k := s.Key
		if b, ok := keys.overlayKey(s.ID); ok {
			k = b // the user's config may have moved it
		}
		m.overlays = append(m.overlays, overlayEntry{id: s.ID, key: k, o: s.New()})
	}
	m.restyle()
	return m
}

// Data exposes the model's data (tests, benchmarks).
func (m *Model) Data() *Data { return m.d }

func tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init starts the clock and, with theme "auto", asks the terminal for its
// background without waiting for the answer.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tick()}
	if !m.themeForced && !m.d.Styles.NoColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	cmds = append(cmds, m.opts.Init...)
	return tea.Batch(cmds...)
}

// Update routes one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		return m, nil
	case tea.BackgroundColorMsg:
		if !m.themeForced {
			m.d.Styles = NewStyles(msg.IsDark(), m.d.Styles.NoColor)
			m.restyle()
		}
		return m, nil
	case tickMsg:
		// The clock moves the header (uptime, STALE) only: the state and
		// the series stay cached until data changes, so an idle second
		// costs one cheap frame.
		if t := time.Time(msg); t.After(m.d.Now) {
			m.d.Now = t
		}
		return m, tick()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case savedMsg:
		if msg.err != nil {
			m.flash("snapshot not saved: " + msg.err.Error())
		} else {
			m.flash("snapshot saved to " + msg.path)
		}
		return m, nil
	case SourceStatusMsg:
		m.d.Sources[msg.Name] = msg.Err
		m.d.invalidate()
		return m, nil
	case model.Scrape, model.GPUSnapshot, model.LogLine, model.Sample, model.Event:
		if m.d.Paused {
			m.queue(msg)
			return m, nil
		}
		m.apply(msg)
		return m, nil
	}
	return m, m.broadcast(msg)
}

func (m *Model) restyle() {
	m.help.Styles = help.DefaultStyles(m.d.Styles.Dark)
	if m.d.Styles.NoColor {
		m.help.Styles = help.Styles{}
	}
}

// advance moves the screen clock forward (never back).
func (m *Model) advance(t time.Time) {
	if t.After(m.d.Now) {
		m.d.Now = t
		m.d.invalidate()
	}
}

func (m *Model) queue(msg tea.Msg) {
	if len(m.queued) >= maxQueued {
		m.apply(m.queued[0]) // keep memory bounded: the oldest goes in now
		m.queued = m.queued[1:]
	}
	m.queued = append(m.queued, msg)
}

// apply feeds one data message into the state.
func (m *Model) apply(msg tea.Msg) {
	d := m.d
	switch msg := msg.(type) {
	case model.Scrape:
		m.applyScrape(msg)
	case model.GPUSnapshot:
		g := msg
		d.GPU = &g
		m.advance(msg.Time)
	case model.LogLine:
		d.Logs.Add(msg)
		if msg.Event != nil {
			e := *msg.Event
			if e.Line == "" {
				e.Line = msg.Text
			}
			d.Events.Add(e)
		}
	case model.Sample:
		if msg.Source == "" {
			msg.Source = model.FromLog
		}
		for _, e := range d.Store.Add(msg) {
			d.Events.Add(e)
		}
		d.FromLog++
		m.advance(msg.Time)
	case model.Event:
		d.Events.Add(msg)
	}
	d.invalidate()
}

func (m *Model) applyScrape(s model.Scrape) {
	d := m.d
	e := d.Info[s.Endpoint]
	if e == nil {
		e = &EndpointInfo{URL: s.Endpoint, FirstSeen: s.Time}
		d.Info[s.Endpoint] = e
		if !contains(d.Endpoints, s.Endpoint) {
			d.Endpoints = append(d.Endpoints, s.Endpoint)
		}
	}
	prevErr := e.Err
	if s.Identity.Engine != "" || len(s.Identity.Models) > 0 || s.Identity.Health != "" {
		e.Identity = s.Identity
	}
	e.Last, e.Err, e.ErrKind, e.Hint, e.Took = s.Time, s.Err, s.ErrKind, s.Hint, s.Took
	e.Scrapes++
	if s.OK() {
		e.LastOK = s.Time
	}
	if s.Err != prevErr {
		ev := model.Event{Time: s.Time, Endpoint: s.Endpoint, Source: string(model.FromScrape), Kind: "scrape_recovered",
			Severity: model.SevInfo, Category: "availability", Title: "metrics readable again"}
		if s.Err != "" {
			ev.Kind, ev.Severity, ev.Title = "scrape_failed", model.SevCrit, "scrape failed: "+s.Err
			if s.ErrKind == model.ErrAuth || s.ErrKind == model.ErrNotFound || s.ErrKind == model.ErrMalformed {
				ev.Severity = model.SevWarn
			}
		}
		if s.Err != "" || prevErr != "" {
			d.Events.Add(ev)
		}
	}
	for _, sm := range s.Samples {
		for _, ev := range d.Store.Add(sm) {
			d.Events.Add(ev)
		}
	}
	m.advance(s.Time)
}

// broadcast passes an unknown message to every component that wants it.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if r, ok := p.p.(Receiver); ok {
			cmds = append(cmds, r.Receive(msg, m.d))
		}
	}
	for _, o := range m.overlays {
		if r, ok := o.o.(Receiver); ok {
			cmds = append(cmds, r.Receive(msg, m.d))
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) flash(s string) {
	m.status, m.statusUntil = s, m.d.Now.Add(5*time.Second)
}

// key handles a key press: the open overlay first, then global keys, then
// the focused pane.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.d.Keys
	if m.overlay >= 0 {
		if handled, cmd := m.overlays[m.overlay].o.HandleKey(msg, m.d); handled {
			return cmd
		}
		switch {
		case key.Matches(msg, k.Back), key.Matches(msg, m.overlays[m.overlay].key):
			m.overlay = -1
			return nil
		case key.Matches(msg, k.Quit):
			m.quitting = true
			return tea.Quit
		}
		return nil
	}
	for i, o := range m.overlays {
		if key.Matches(msg, o.key) {
			m.overlay = i
			if op, ok := o.o.(Opener); ok {
				return op.Open(m.d)
			}
			return nil
		}
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.quitting = true
		return tea.Quit
	case key.Matches(msg, k.Back):
		m.zoom = ""
	case key.Matches(msg, k.Focus):
		m.moveFocus(1)
	case key.Matches(msg, k.FocusBack):
		m.moveFocus(-1)
	case key.Matches(msg, k.Zoom):
		m.zoomTo(msg.String())
	case key.Matches(msg, k.Pause):
		m.togglePause()
	case key.Matches(msg, k.Slower):
		return m.stepInterval(1)
	case key.Matches(msg, k.Faster):
		return m.stepInterval(-1)
	case key.Matches(msg, k.WindowPrev):
		m.stepWindow(-1)
	case key.Matches(msg, k.WindowNext):
		m.stepWindow(1)
	case key.Matches(msg, k.Save):
		return m.save()
	case key.Matches(msg, k.Bench):
		m.flash("benchmark: not available in this build")
	case key.Matches(msg, k.Diagnose):
		m.flash("full diagnosis list: not available in this build")
	case key.Matches(msg, k.Up):
		m.scroll(-1)
	case key.Matches(msg, k.Down):
		m.scroll(1)
	case key.Matches(msg, k.PrevEndpoint):
		m.selectKey(-1)
	case key.Matches(msg, k.NextEndpoint):
		m.selectKey(1)
	}
	return nil
}

func (m *Model) togglePause() {
	m.d.Paused = !m.d.Paused
	if !m.d.Paused {
		for _, q := range m.queued {
			m.apply(q)
		}
		m.queued = nil
	}
	m.d.invalidate()
}

func (m *Model) stepInterval(dir int) tea.Cmd {
	i := 0
	for j, iv := range Intervals {
		if iv <= m.d.Interval {
			i = j
		}
	}
	i = max(0, min(len(Intervals)-1, i+dir))
	if Intervals[i] == m.d.Interval {
		m.flash("refresh interval stays " + fmtDur(m.d.Interval) + " (limit)")
		return nil
	}
	m.d.Interval = Intervals[i]
	m.d.invalidate()
	m.flash("refresh every " + fmtDur(m.d.Interval))
	if set := m.opts.SetInterval; set != nil {
		iv := m.d.Interval
		return func() tea.Msg { set(iv); return nil }
	}
	return nil
}

func (m *Model) stepWindow(dir int) {
	i := 0
	for j, w := range Windows {
		if w <= m.d.Window {
			i = j
		}
	}
	i = max(0, min(len(Windows)-1, i+dir))
	m.d.Window = Windows[i]
	m.d.invalidate()
}

func (m *Model) selectKey(dir int) {
	n := len(m.d.ModelKeys())
	if n < 2 {
		return
	}
	m.d.Selected = ((m.d.Selected+dir)%n + n) % n
	m.d.invalidate()
}

func (m *Model) zoomTo(s string) {
	var slot int
	fmt.Sscan(s, &slot)
	for i, p := range m.panes {
		if p.slot == slot {
			m.zoom, m.focus = p.id, i
			return
		}
	}
}

func (m *Model) scroll(delta int) {
	if m.focus < len(m.panes) {
		if s, ok := m.panes[m.focus].p.(Scroller); ok {
			s.Scroll(delta)
			return
		}
	}
	m.moveFocus(delta)
}

func (m *Model) save() tea.Cmd {
	if m.opts.Save == nil {
		m.flash("snapshot: no place to save in this mode")
		return nil
	}
	snap := BuildSnapshot(m.d)
	save := m.opts.Save
	return func() tea.Msg {
		b, err := snapshotBytes(snap)
		if err != nil {
			return savedMsg{err: err}
		}
		p, err := save(b)
		return savedMsg{path: p, err: err}
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
