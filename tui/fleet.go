package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
)

// The fleet view (`f`, and the first screen when two or more endpoints are
// watched or --prometheus finds a fleet): one row per endpoint+model with
// its state, load, latency and top finding, the fleet-wide findings above;
// sort, filter, group by model, enter opens the endpoint's own screen and
// esc there comes back.

func init() {
	RegisterOverlay(OverlaySpec{ID: "fleet", Key: DefaultKeyMap().Fleet, New: func() Overlay { return &fleetView{sortCol: colName} }})
}

// BatchMsg is a whole refresh of a fleet source (Prometheus): its
// messages are applied together and the rules run once on all of them.
// Sent one by one, the first endpoint's news would run the rules over a
// fleet not yet updated, and the rest a second later again (at 500
// endpoints an evaluation costs about 15 ms of CPU).
type BatchMsg = model.Batch

// closeOverlayMsg closes the open overlay (the fleet view opening an
// endpoint).
type closeOverlayMsg struct{}

type fleetView struct {
	sortCol   int
	desc      bool
	group     bool
	groupSet  bool // the user chose group or not: a topology no longer decides
	filter    string
	editing   bool // typing the filter
	sel, top  int
	rows      []fleetRow // every row, sorted
	kept      fleetRowCache
	shown     []int     // indexes into rows after the filter
	builtAt   [2]uint64 // StoreVersion, ReportVersion the rows were built at
	built     bool
	arranged  bool
	lastPage  int
	opened    bool // an endpoint was opened from here: esc comes back
	fleetLine string
}

func (*fleetView) Title() string { return "Fleet" }

func (v *fleetView) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{k.Down, k.Up, relabel(k.Confirm, "open endpoint"), k.Sort, k.Reverse, relabel(k.Search, "filter"), k.Group}
}

func (v *fleetView) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	if v.editing {
		switch msg.String() {
		case "enter":
			v.editing = false
		case "esc":
			v.editing, v.filter = false, ""
		case "backspace":
			if r := []rune(v.filter); len(r) > 0 {
				v.filter = string(r[:len(r)-1])
			}
		default:
			if t := msg.Text; t != "" && !model.Unsafe(t) && len([]rune(v.filter)) < 64 {
				v.filter += t
			}
		}
		v.arranged, v.sel, v.top = false, 0, 0
		return true, nil
	}
	switch {
	case key.Matches(msg, d.Keys.Down):
		v.sel++
	case key.Matches(msg, d.Keys.Up):
		v.sel = max(0, v.sel-1)
	case key.Matches(msg, d.Keys.PageDown):
		v.sel += max(1, v.lastPage)
	case key.Matches(msg, d.Keys.PageUp):
		v.sel = max(0, v.sel-max(1, v.lastPage))
	case key.Matches(msg, d.Keys.Sort):
		for i, c := range fleetSortKeys {
			if c == v.sortCol {
				v.sortCol = fleetSortKeys[(i+1)%len(fleetSortKeys)]
				break
			}
		}
		// numbers and findings sort worst first
		v.desc = v.sortCol != colName && v.sortCol != colModel
		v.arranged = false
	case key.Matches(msg, d.Keys.Reverse):
		v.desc, v.arranged = !v.desc, false
	case key.Matches(msg, d.Keys.Group):
		v.group, v.groupSet, v.arranged = !v.group, true, false
	case key.Matches(msg, d.Keys.Search):
		v.editing = true
	case key.Matches(msg, d.Keys.Confirm):
		return true, v.open(d)
	case key.Matches(msg, d.Keys.Back) && v.filter != "":
		v.filter, v.arranged = "", false
	default:
		return false, nil
	}
	return true, nil
}

// open shows the selected row's endpoint on the single-endpoint screen.
func (v *fleetView) open(d *Data) tea.Cmd {
	v.refresh(d) // the order the keys since the last frame asked for
	if v.sel < 0 || v.sel >= len(v.shown) {
		return nil
	}
	r := v.rows[v.shown[v.sel]]
	if r.keyIndex < 0 {
		return nil // no numbers to show: its row says why
	}
	d.Selected = r.keyIndex
	d.invalidate()
	v.opened = true
	return func() tea.Msg { return closeOverlayMsg{} }
}

// refresh rebuilds the rows when the data or the report changed, and
// re-sorts and re-filters them when asked.
func (v *fleetView) refresh(d *Data) {
	at := [2]uint64{d.StoreVersion, d.ReportVersion}
	if !v.built || at != v.builtAt {
		v.rows, v.builtAt, v.built, v.arranged = v.kept.build(d, v.rows), at, true, false
		v.fleetLine = fleetSummary(v.rows)
		if !v.groupSet && !v.group && topologyShown(v.rows) {
			v.group = true // router → pools → workers
		}
	}
	if v.arranged {
		return
	}
	sortFleet(v.rows, v.sortCol, v.desc)
	if v.group {
		sortPools(v.rows) // stable: the chosen order inside each pool
	}
	v.shown = v.shown[:0]
	f := strings.ToLower(v.filter)
	for i := range v.rows {
		if f == "" || strings.Contains(v.rows[i].text, f) {
			v.shown = append(v.shown, i)
		}
	}
	v.arranged = true
}

// fleetSummary counts the fleet's states.
func fleetSummary(rows []fleetRow) string {
	eps := map[string]string{}
	for _, r := range rows {
		eps[r.key.Endpoint] = r.state
	}
	counts := map[string]int{}
	for _, s := range eps {
		counts[s]++
	}
	parts := []string{fmt.Sprintf("%d endpoints", len(eps))}
	for _, s := range []string{"serving", "router", "starting", "degraded", "unreachable", "crashed", "stopped", "gone", "unknown"} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, " · ")
}

// fleetIndex is the fleet overlay's index (-1 when not registered).
func (m *Model) fleetIndex() int {
	for i, o := range m.overlays {
		if o.id == "fleet" {
			return i
		}
	}
	return -1
}

// fleetStart opens the fleet view as the first screen when the monitor
// watches a fleet: two or more endpoints, or a source that finds them.
func (m *Model) fleetStart(o Options) {
	if i := m.fleetIndex(); i >= 0 && (len(o.Endpoints) >= 2 || o.Fleet) {
		m.overlay = i
	}
}

// fleetMsg handles the fleet view's own messages and esc on an endpoint
// opened from it (back to the fleet); ok reports whether it did.
func (m *Model) fleetMsg(msg tea.Msg) (tea.Cmd, bool) {
	i := m.fleetIndex()
	if i < 0 {
		return nil, false
	}
	fv, _ := m.overlays[i].o.(*fleetView)
	switch msg := msg.(type) {
	case BatchMsg:
		if m.d.Paused {
			for _, x := range msg {
				m.queue(x)
			}
			return nil, true
		}
		for _, x := range msg {
			m.applyData(x)
		}
		m.diagnose()
		m.hold = true
		if !m.framePending {
			m.framePending = true
			return tea.Tick(frameDelay, func(time.Time) tea.Msg { return frameMsg{} }), true
		}
		return nil, true
	case closeOverlayMsg:
		m.overlay, m.under = -1, nil
		return nil, true
	case tea.KeyPressMsg:
		if fv != nil && fv.opened && m.overlay < 0 && m.zoom == "" && key.Matches(msg, m.d.Keys.Back) {
			fv.opened = false
			m.overlay = i
			return nil, true
		}
		// [ and ] change the window on the fleet view too, and a source
		// that evaluates windows itself (Prometheus) is told.
		onFleet := m.overlay == i && fv != nil && !fv.editing
		if (m.overlay < 0 || onFleet) && m.opts.Replay == nil {
			dir := 0
			switch {
			case key.Matches(msg, m.d.Keys.WindowPrev):
				dir = -1
			case key.Matches(msg, m.d.Keys.WindowNext):
				dir = 1
			}
			if dir != 0 {
				m.stepWindow(dir)
				if set, w := m.opts.SetWindow, m.d.Window; set != nil {
					return func() tea.Msg { set(w); return nil }, true
				}
				return nil, true
			}
		}
	}
	return nil, false
}

// demoFleet opens the fleet view once as the demo's routed stretch begins
// (as soon as no other overlay is open: a benchmark's result is not
// covered) and, as it ends, closes it and comes back to the demo's own
// engine if the person had opened one of the fleet's.
func (m *Model) demoFleet(was, now bool) {
	i := m.fleetIndex()
	if i < 0 {
		return
	}
	switch {
	case now && !m.demoFleetOpen && m.overlay < 0:
		m.overlay, m.demoFleetOpen = i, true
	case !now && was:
		if m.demoFleetOpen && m.overlay == i {
			m.overlay, m.under = -1, nil
		}
		for k, u := range m.under {
			if u == i {
				m.under = m.under[:k] // the fleet is leaving: nothing goes back to it
				break
			}
		}
		m.demoFleetOpen = false
		if fv, ok := m.overlays[i].o.(*fleetView); ok {
			fv.opened = false
		}
		if eps := m.d.Endpoints(); len(eps) > 0 && m.d.SelectedURL() != eps[0] {
			m.d.Selected = 0 // the fleet's endpoints are leaving: back to the demo's engine
			m.d.invalidate()
		}
	}
}
