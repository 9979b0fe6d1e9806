package tui

import (
	"reflect"
	"testing"
)

// Every theme style paints exactly as lipgloss would, on the strings the
// panes draw and on the ones that must take lipgloss's own path.
func TestInkMatchesLipgloss(t *testing.T) {
	texts := []string{"ok", "TTFT p99 1.2s", " padded ", "▁▂▃ → ≤50", "模型", "\x1b[1mbold\x1b[0m inside",
		"", "two\nlines", "tab\there", "cr\rhere", "trailing ", "  "}
	fast := 0
	for _, dark := range []bool{true, false} {
		for _, noColor := range []bool{false, true} {
			s := NewStyles(dark, noColor)
			v := reflect.ValueOf(*s)
			for i := 0; i < v.NumField(); i++ {
				k, ok := v.Field(i).Interface().(Ink)
				if !ok {
					continue
				}
				if k.fast {
					fast++
				}
				name := v.Type().Field(i).Name
				for _, x := range texts {
					if got, want := k.Render(x), k.Style.Render(x); got != want {
						t.Errorf("%s (dark %v, no colour %v) on %q: %q, lipgloss %q", name, dark, noColor, x, got, want)
					}
				}
				if got, want := k.Render("a", "b"), k.Style.Render("a", "b"); got != want {
					t.Errorf("%s on two strings: %q, lipgloss %q", name, got, want)
				}
			}
		}
	}
	if fast < 40 {
		t.Errorf("only %d theme styles take the fast path", fast)
	}
}
