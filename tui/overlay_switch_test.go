package tui

import (
	"strings"
	"testing"
	"time"
)

// In the fleet view the banner said "(+7: d)" and d did nothing: another
// screen's key opens that screen from an overlay.
func TestAnotherScreensKeyOpensItFromAnOverlay(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	if v := screen(t, m, 120, 40); !strings.Contains(v, "━ Fleet ━") {
		t.Fatalf("the fleet is not the first screen:\n%s", v)
	}
	m.Update(press("d"))
	v := screen(t, m, 120, 40)
	if !strings.Contains(v, "━ Diagnosis ━") || strings.Contains(v, "━ Fleet ━") {
		t.Errorf("d in the fleet view did not open the diagnosis list:\n%s", v)
	}
	// esc goes back to the fleet, whose filter still takes every letter
	// while it is typed
	m.Update(press("esc"))
	for _, k := range []string{"/", "d"} {
		m.Update(press(k))
	}
	if v := screen(t, m, 120, 40); !strings.Contains(v, "filter: d") {
		t.Errorf("d while typing the filter left the fleet:\n%s", v)
	}
}

// fleet view → d → esc came back to the main screen, not the fleet view
// the diagnosis was opened from. esc (or the screen's own key) goes back
// to the screen under it; from the main screen it comes back there.
func TestEscGoesBackToTheScreenItCameFrom(t *testing.T) {
	m := routedModel()
	m.Update(tickMsg(t0.Add(63 * time.Second)))
	on := func(step, title string) {
		t.Helper()
		if v := screen(t, m, 120, 40); !strings.Contains(v, "━ "+title+" ━") {
			t.Fatalf("%s: not on %s:\n%s", step, title, v)
		}
	}
	on("start", "Fleet")
	m.Update(press("d"))
	on("fleet → d", "Diagnosis")
	m.Update(press("esc"))
	on("fleet → d → esc", "Fleet")
	m.Update(press("d"))
	m.Update(press("d"))
	on("fleet → d → d", "Fleet")
	m.Update(press("d"))
	m.Update(press("f"))
	on("fleet → d → f", "Fleet")
	m.Update(press("esc"))
	if v := screen(t, m, 120, 40); strings.Contains(v, "━ Fleet ━") || strings.Contains(v, "━ Diagnosis ━") {
		t.Fatalf("fleet → d → f → esc: not the main screen:\n%s", v)
	}
	m.Update(press("d"))
	m.Update(press("esc"))
	if v := screen(t, m, 120, 40); strings.Contains(v, "━ Fleet ━") || strings.Contains(v, "━ Diagnosis ━") {
		t.Errorf("main → d → esc: not the main screen:\n%s", v)
	}
}
