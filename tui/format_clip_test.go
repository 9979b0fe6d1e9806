package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A styled line is cut by what shows, not by its escape codes: the runs
// view's faint latencies note (wrapped to the width, then clipped) lost
// "where the" at 80 columns, and a cut could split an escape code.
func TestClipMeasuresStyledLinesByVisibleCells(t *testing.T) {
	text := "latencies: percentiles over the run's last 34s (bucket estimates where the"
	faint := "\x1b[2m" + text + "\x1b[0m"
	if got := clip(faint, len(text)); got != faint {
		t.Errorf("a styled line that fits was cut: %q", ansi.Strip(got))
	}
	got := clip(faint, 20)
	if w := ansi.StringWidth(got); w != 20 {
		t.Errorf("clipped to %d cells, want 20: %q", w, got)
	}
	if plain := ansi.Strip(got); plain != text[:19]+"…" {
		t.Errorf("clipped text %q", plain)
	}
	if strings.Count(got, "\x1b[") < 1 || strings.Contains(ansi.Strip(got), "[") {
		t.Errorf("escape code split: %q", got)
	}
	if got := clip(text, 20); got != text[:19]+"…" {
		t.Errorf("plain clip changed: %q", got)
	}
}
