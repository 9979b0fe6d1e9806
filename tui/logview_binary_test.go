package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// Binary bytes in a log (a core dump cat'ed into it, a tab-separated
// table) reach the log view through the source's sanitiser; the frame's
// borders must hold: every row exactly as wide as the screen, and nothing
// in it whose width the terminal and the layout could disagree on (a tab
// counts 0 cells for the layout and up to 8 for the terminal).
func TestLogViewBinaryKeepsTheFrame(t *testing.T) {
	m := newTestModel()
	seed := uint32(7)
	for i := 0; i < 60; i++ {
		b := make([]byte, 120)
		for j := range b {
			seed = seed*1664525 + 1013904223
			b[j] = byte(seed >> 24)
		}
		b = append(b, "\tcol\tcol\u202e\u200b\u2764\ufe0f"...)
		m.Update(model.LogLine{Time: t0, Text: model.SanitizeLine(b)})
	}
	const w, h = 100, 30
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	for _, key := range []string{"l", "w"} { // the log view, then wrapped
		m.Update(press(key))
		out := ansi.Strip(m.Render())
		for i, l := range strings.Split(out, "\n") {
			if n := ansi.StringWidth(l); n != w {
				t.Errorf("%s: row %d is %d cells, want %d: %q", key, i, n, w, l)
			}
			if model.Unsafe(l) {
				t.Errorf("%s: row %d holds a character of uncertain width: %q", key, i, l)
			}
		}
	}
}
