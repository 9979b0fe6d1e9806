package tui

import (
	"strings"
	"testing"
)

// TestHelpShowsEveryKeyAtEachSize: the help fits every global key into the
// width (bubbles cut the columns that did not fit to "…", hiding s, l, b, d,
// r, o at 80 and 120 columns) and scrolls at 80×24, where the screens' keys
// were below the last line with no way to reach them.
func TestHelpShowsEveryKeyAtEachSize(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			m := newTestModel()
			m.Update(press("?"))
			seen := screen(t, m, sz.w, sz.h)
			for i := 0; i < 80; i++ {
				m.Update(press("j"))
				seen += screen(t, m, sz.w, sz.h)
			}
			for _, l := range strings.Split(seen, "\n") {
				if strings.Contains(l, "┃") && strings.Contains(l, "…") { // inside the help's frame
					t.Errorf("a help line is cut at %s: %q", sz.name, l)
				}
			}
			for _, want := range []string{"s save JSON snapshot", "l log view", "b benchmark", "A apply a finding's change",
				"l Log", "d Diagnosis", "(zoomed too)", "config.toml)."} {
				if !strings.Contains(seen, want) {
					t.Errorf("help never shows %q at %s:\n%s", want, sz.name, seen)
				}
			}
		})
	}
}

// TestHelpSaysThereIsMore: a help taller than the screen says how many
// lines are below and the key that shows them.
func TestHelpSaysThereIsMore(t *testing.T) {
	m := newTestModel()
	m.Update(press("?"))
	out := screen(t, m, 80, 24)
	if !strings.Contains(out, "more lines: j") {
		t.Errorf("80×24 help does not say there is more:\n%s", out)
	}
}
