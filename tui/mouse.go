package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// The mouse: a click focuses the pane (or tab) under it, a second click on
// the same pane within doubleClick zooms it (or, zoomed, goes back to the
// grid), the wheel scrolls the focused pane, the open overlay (the log
// view, the lists) or, over a pane, that pane. Bubble Tea asks the
// terminal for SGR mouse reports; tmux passes them to the program when it
// asks.

// doubleClick is the most time between the two clicks of a double click.
const doubleClick = 400 * time.Millisecond

// wheelStep is how many lines one notch of the wheel scrolls.
const wheelStep = 3

// hitRect is where pane i was drawn in the last frame.
type hitRect struct{ i, x, y, w, h int }

func (m *Model) hit(i, x, y, w, h int) {
	if i >= 0 && w > 0 && h > 0 {
		m.hits = append(m.hits, hitRect{i, x, y, w, h})
	}
}

// paneAt is the pane drawn at cell x, y in the last frame, or -1.
func (m *Model) paneAt(x, y int) int {
	for _, r := range m.hits {
		if x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h {
			return r.i
		}
	}
	return -1
}

// Wheeler is an overlay or pane that scrolls by the wheel itself; others
// get the down and up keys' actions.
type Wheeler interface {
	Wheel(delta int, d *Data)
}

func (m *Model) mouse(msg tea.MouseMsg) tea.Cmd {
	if len(m.panes) == 0 || m.mode() == modeTooSmall {
		return nil
	}
	ev := msg.Mouse()
	switch msg.(type) {
	case tea.MouseClickMsg:
		if ev.Button != tea.MouseLeft || m.overlay >= 0 {
			return nil
		}
		i := m.paneAt(ev.X, ev.Y)
		if i < 0 {
			return nil
		}
		now := m.wall()
		double := i == m.lastClick && now.Sub(m.lastClickAt) <= doubleClick
		m.lastClick, m.lastClickAt = i, now
		m.focus = i
		if double {
			m.lastClick = -1
			if m.zoom == m.panes[i].id {
				m.zoom = ""
			} else {
				m.zoom = m.panes[i].id
			}
		}
	case tea.MouseWheelMsg:
		delta := 0
		switch ev.Button {
		case tea.MouseWheelUp:
			delta = -wheelStep
		case tea.MouseWheelDown:
			delta = wheelStep
		default:
			return nil
		}
		if m.overlay >= 0 {
			return m.wheelOverlay(delta)
		}
		i := m.paneAt(ev.X, ev.Y)
		if i < 0 || i >= len(m.panes) {
			i = min(m.focus, len(m.panes)-1)
		}
		switch s := m.panes[i].p.(type) {
		case Selector:
			m.focus = i
			s.Select(delta/wheelStep, m.d)
		case Scroller:
			m.focus = i
			s.Scroll(delta)
		}
	}
	return nil
}

// wheelOverlay scrolls the open overlay: by its own Wheel, else by its
// down/up keys, once per line.
func (m *Model) wheelOverlay(delta int) tea.Cmd {
	o := m.overlays[m.overlay].o
	if w, ok := o.(Wheeler); ok {
		w.Wheel(delta, m.d)
		return nil
	}
	k := tea.KeyPressMsg{Code: tea.KeyDown}
	if delta < 0 {
		k = tea.KeyPressMsg{Code: tea.KeyUp}
		delta = -delta
	}
	var cmds []tea.Cmd
	for range delta {
		if _, cmd := o.HandleKey(k, m.d); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}
