package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// The demo's routed fleet filtered "/decode" showed one idle worker (its
// finding said "decode") under "decode · 1/1 serving · KV hand-over: no
// verdict yet": the filter missed the pool's role, and the pool's heading
// summed only the rows left.
func TestFleetFilterKeepsThePoolHeadingWhole(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	// (by its name: its URL is in the starved pool's finding, which the
	// other idle worker's row shows too)
	for _, k := range []string{"/", "d", "e", "c", "o", "d", "e", "-", "3", "enter"} {
		m.Update(press(k))
	}
	v := ansi.Strip(screen(t, m, 160, 40))
	if !strings.Contains(v, "decode · 5/5 serving (1 shown) · KV handed over") {
		t.Errorf("the filtered pool's heading is not the pool's:\n%s", v)
	}
	// named by their URLs (no origin names), the decode workers are found
	// by their role
	m = fleetAfterMinute(func(at time.Time, _ bool) []model.Input { return routedMsgs(at, false) })
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	for _, k := range []string{"/", "d", "e", "c", "o", "d", "e", "enter"} {
		m.Update(press(k))
	}
	v = ansi.Strip(screen(t, m, 160, 40))
	for _, u := range []string{"10.0.2.1:8000", "10.0.2.2:8000", "10.0.2.3:8000", "10.0.2.4:8000", "10.0.2.5:8000"} {
		if !strings.Contains(v, u) {
			t.Errorf("filter decode lacks the decode worker %s:\n%s", u, v)
		}
	}
	if strings.Contains(strings.Join(tableRows(v), "\n"), "10.0.1.1:8000") {
		t.Errorf("filter decode shows a prefill worker:\n%s", v)
	}
}
