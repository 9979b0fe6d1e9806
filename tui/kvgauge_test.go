package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The KV gauge (bubbles/progress) is filled to the value and coloured by
// the KV thresholds.
func TestKVGaugeFillAndColour(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(int) load
		lvl  Level
		pct  string
	}{{"healthy", healthy, LevelOK, "51%"}, {"stressed", stressed, LevelCrit, "97%"}} {
		m := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: "dark"})
		for _, s := range scrapes(10, tc.f) {
			m.Update(s)
		}
		p := &schedulerPane{}
		line := p.kvLine(m.d, m.d.State(), 60)
		plain := ansi.Strip(line)
		if ansi.StringWidth(plain) != 60 || !strings.HasSuffix(plain, tc.pct) {
			t.Fatalf("%s: %q", tc.name, plain)
		}
		full, empty := strings.Count(plain, "█"), strings.Count(plain, "░")
		gw := full + empty
		if want := int(m.d.State().KVUsage.V*float64(gw) + 0.5); full != want {
			t.Errorf("%s: %d of %d cells filled, want %d", tc.name, full, gw, want)
		}
		c := lipgloss.NewStyle().Foreground(levelColor(m.d.Styles, tc.lvl)).Render("█")
		if prefix := c[:strings.Index(c, "█")]; prefix == "" || !strings.Contains(line, prefix+"██") {
			t.Errorf("%s: gauge not in the %v colour %q: %q", tc.name, tc.lvl, prefix, line)
		}
	}
}
