package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/llmtop/llmtop/model"
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

// A llama.cpp KV whose layout is unknown (no log, no command line) shows its range, from the
// split floor to the unified top, coloured by the top; the numbers are a real llama-server
// b1-de3ff81's without -np (testdata/engines/llamacpp-b1-de3ff81-slots-auto.json).
func TestKVGaugeShowsAFloorsRange(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: "dark"})
	sm := model.NewSample(testURL, "m", t0, model.FromScrape)
	sm.Gauges[model.KVUsage], sm.Gauges[model.KVCapacityTokens] = 1835.0/8192, 8192
	sm.Gauges[model.SlotHeld], sm.Gauges[model.SlotCtx], sm.Gauges[model.MaxRunning] = 1835, 2048, 4
	m.Update(model.Scrape{Endpoint: testURL, Time: t0, Samples: []model.Sample{sm},
		Identity: model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}})
	p := &schedulerPane{}
	plain := ansi.Strip(p.kvLine(m.d, m.d.State(), 60))
	if ansi.StringWidth(plain) != 60 || !strings.HasSuffix(plain, " 22%–90%?") {
		t.Fatalf("%q", plain)
	}
}

// The gauge's bar is kept while its filled cells, width and colours are
// the same: every line the kept bar gives is the line a pane drawing it
// for the first time gives, through usages within a cell and across
// cells, across the KV thresholds within a cell (84.9 % and 85.1 %), at
// other widths and in other themes; each walk starts where the last ended.
func TestKVGaugeKeptBarIsDrawnFromScratch(t *testing.T) {
	kept := &schedulerPane{}
	usages := []float64{0, 0.028, 0.0281, 0.029, 0.5, 0.501, 0.51, 0.849, 0.851, 0.9, 0.949, 0.951, 0.96, 0.99, 1, 1.2, -0.1, 0}
	redrawn := 0
	for _, theme := range []string{"dark", "light", "mono", "dark"} {
		d := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: theme}).d
		for _, w := range []int{60, 61, 40, 60} {
			for _, u := range usages {
				st := model.State{KVUsage: model.Some(u)}
				was := kept.bar
				got := kept.kvLine(d, st, w)
				if kept.bar != was {
					redrawn++
				}
				if want := (&schedulerPane{}).kvLine(d, st, w); got != want {
					t.Fatalf("%s at width %d, KV %v: kept bar gives %q, drawn from scratch %q", theme, w, u, got, want)
				}
			}
		}
	}
	if all := 4 * 4 * len(usages); redrawn == 0 || redrawn >= all {
		t.Fatalf("the bar was drawn %d times in %d lines: want it kept where nothing it shows changed", redrawn, all)
	}
}
