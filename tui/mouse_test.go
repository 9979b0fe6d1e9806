package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

func click(x, y int) tea.MouseClickMsg {
	return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft}
}

func wheel(x, y int, up bool) tea.MouseWheelMsg {
	b := tea.MouseWheelDown
	if up {
		b = tea.MouseWheelUp
	}
	return tea.MouseWheelMsg{X: x, Y: y, Button: b}
}

// cellOf finds where text is drawn on the screen (column, row).
func cellOf(t *testing.T, m *Model, text string) (int, int) {
	t.Helper()
	for y, l := range strings.Split(screen(t, m, m.width, m.height), "\n") {
		if i := strings.Index(l, text); i >= 0 {
			return len([]rune(l[:i])), y
		}
	}
	t.Fatalf("%q is not on the screen", text)
	return 0, 0
}

func TestMouseClickFocusDoubleClickZoomWheelScrolls(t *testing.T) {
	m := scenario(stressed, 8, true)
	wall := t0
	m.wall = func() time.Time { return wall }
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	x, y := cellOf(t, m, "5 Events")
	m.Update(click(x+2, y+3)) // inside the Events box
	if id := m.panes[m.focus].id; id != "events" {
		t.Fatalf("a click in the Events box focuses %q", id)
	}
	if m.zoom != "" {
		t.Fatal("a single click zoomed")
	}
	// wheel down over the focused Events pane scrolls it
	m.Update(wheel(x+2, y+3, false))
	if top := m.panes[m.focus].p.(*eventsPane).top; top != wheelStep {
		t.Errorf("the wheel scrolled the Events pane to %d, want %d", top, wheelStep)
	}
	wall = wall.Add(2 * time.Second)
	m.Update(click(x+2, y+3))
	wall = wall.Add(200 * time.Millisecond)
	m.Update(click(x+2, y+3))
	if m.zoom != "events" {
		t.Fatalf("a double click did not zoom: %q", m.zoom)
	}
	m.Render() // the program draws after every message: the zoom's place
	wall = wall.Add(2 * time.Second)
	m.Update(click(10, 10))
	wall = wall.Add(100 * time.Millisecond)
	m.Update(click(10, 10))
	if m.zoom != "" {
		t.Errorf("a double click in the zoom did not go back to the grid: %q", m.zoom)
	}

	// 80×24: a click on a tab shows that pane
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	x, y = cellOf(t, m, "4 GPU")
	wall = wall.Add(2 * time.Second)
	m.Update(click(x+1, y))
	if id := m.panes[m.focus].id; id != "gpu" {
		t.Errorf("a click on the GPU tab shows %q", id)
	}

	// the log view: the wheel up leaves follow mode
	m.Update(press("l"))
	m.Update(wheel(10, 10, true))
	if out := screen(t, m, 80, 24); !strings.Contains(out, "paused (F follows)") {
		t.Errorf("the wheel did not scroll the log view:\n%s", out)
	}
}

// Mouse reports anywhere, at any size, before any frame, never panic.
func TestMouseAnywhere(t *testing.T) {
	m := scenario(stressed, 8, true)
	for _, sz := range [][2]int{{0, 0}, {40, 10}, {80, 24}, {200, 60}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for _, xy := range [][2]int{{-1, -1}, {0, 0}, {5, 3}, {199, 59}, {1000, 1000}} {
			m.Update(click(xy[0], xy[1]))
			m.Update(wheel(xy[0], xy[1], true))
			m.Update(wheel(xy[0], xy[1], false))
			m.Update(tea.MouseReleaseMsg{X: xy[0], Y: xy[1]})
			m.Update(tea.MouseMotionMsg{X: xy[0], Y: xy[1]})
			m.Render()
		}
	}
}
