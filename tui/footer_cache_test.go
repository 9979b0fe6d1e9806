package tui

import (
	"strings"
	"testing"
	"unsafe"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// The key line is the same every data frame: it is drawn once and kept
// while the width and what the user did are the same (it was 2 % of the
// monitor's CPU), and drawn again after a resize or a key.
func TestKeyLineKeptBetweenDataFrames(t *testing.T) {
	m := newTestModel()
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	ss := scrapes(3, healthy)
	m.Update(ss[0])
	m.Render()
	first := m.keysLine
	if !strings.Contains(ansi.Strip(first), "q quit") {
		t.Fatalf("key line %q", ansi.Strip(first))
	}
	m.Update(ss[1])
	out := m.Render()
	if unsafe.StringData(m.keysLine) != unsafe.StringData(first) {
		t.Fatal("a data frame drew the key line again")
	}
	if !strings.HasSuffix(out, first) {
		t.Fatal("the frame does not end with the kept key line")
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Render()
	if ansi.StringWidth(m.keysLine) != 120 || ansi.StringWidth(first) != 200 {
		t.Fatalf("after a resize the key line is %d wide, want 120", ansi.StringWidth(m.keysLine))
	}
	resized := m.keysLine
	m.Update(tea.KeyPressMsg{Code: 'p', Text: "p"}) // pause: what the user did
	m.Render()
	if unsafe.StringData(m.keysLine) == unsafe.StringData(resized) {
		t.Fatal("a key did not draw the key line again")
	}
}
