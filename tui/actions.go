package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
)

// The root's answers to the global keys: focus, zoom, pause, interval,
// window, endpoint choice, snapshot. Overlays and panes get their keys
// first (see key).

// openOverlay shows overlay i.
func (m *Model) openOverlay(i int) tea.Cmd {
	m.overlay = i
	if op, ok := m.overlays[i].o.(Opener); ok {
		return op.Open(m.d)
	}
	return nil
}

// stackOver remembers the open overlay under i, about to open from it; an
// overlay already under it (fleet → d → f) is gone back to, not stacked
// twice.
func (m *Model) stackOver(i int) {
	for k, u := range m.under {
		if u == i {
			m.under = m.under[:k]
			return
		}
	}
	m.under = append(m.under, m.overlay)
}

// closeOverlay closes the open overlay, back to the one it was opened
// from, or to the main screen.
func (m *Model) closeOverlay() {
	if n := len(m.under); n > 0 {
		m.overlay, m.under = m.under[n-1], m.under[:n-1]
		return
	}
	m.overlay = -1
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
			m.closeOverlay()
			return nil
		case key.Matches(msg, k.Quit):
			m.quitting = true
			return tea.Quit
		}
		// A replay is driven from every screen, before another screen's key
		// opens it: b from the help opened the benchmark's form in a replay,
		// and enter loaded whatever now answers at the recorded URL.
		if cmd, ok := m.replayKey(msg); ok {
			return cmd
		}
		// Another screen's key opens it: the fleet's banner said "(+7: d)"
		// and d did nothing there.
		for i, o := range m.overlays {
			if i != m.overlay && key.Matches(msg, o.key) {
				m.stackOver(i)
				return m.openOverlay(i)
			}
		}
		return nil
	}
	if cmd, ok := m.replayKey(msg); ok {
		return cmd
	}
	for i, o := range m.overlays {
		if key.Matches(msg, o.key) {
			m.under = nil // from the main screen: esc comes back here
			return m.openOverlay(i)
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
		m.zoomTo(msg)
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
	case key.Matches(msg, k.Ack):
		if f, ok := topFinding(m.d); ok {
			toggleAck(m.d, f)
			m.flash("acknowledged for this run: " + f.Title + " (" + k.Diagnose.Help().Key + " lists it, " + k.Ack.Help().Key + " there takes it back)")
		} else {
			m.flash("no finding to acknowledge")
		}
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
	m.d.PausedAt = m.d.Now
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
	m.d.Input(model.WindowChange{Time: m.d.Now, Window: m.d.Window})
	m.d.invalidate()
}

func (m *Model) selectKey(dir int) {
	n := len(m.d.Choices())
	if n < 2 {
		return
	}
	m.d.Selected = ((m.d.selected()+dir)%n + n) % n
	m.d.invalidate()
}

// zoomTo zooms the pane whose zoom key was pressed: the zoom keys are the
// panes' in slot order (see zoomKeys).
func (m *Model) zoomTo(msg tea.KeyPressMsg) {
	for i, k := range m.d.Keys.Zoom.Keys() {
		if k == msg.String() && i < len(m.panes) {
			m.zoom, m.focus = m.panes[i].id, i
			return
		}
	}
}

func (m *Model) scroll(delta int) {
	if m.focus < len(m.panes) {
		if s, ok := m.panes[m.focus].p.(Selector); ok {
			s.Select(delta, m.d)
			return
		}
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

// zoomKey is the key that zooms pane i (its help text).
func (m *Model) zoomKey(i int) string {
	ks := m.d.Keys.Zoom.Keys()
	if i < len(ks) {
		return ks[i]
	}
	return "·"
}
