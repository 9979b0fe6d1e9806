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
	// the fleet's filter still takes every letter while it is typed
	m.Update(press("esc"))
	m.Update(press("f"))
	for _, k := range []string{"/", "d"} {
		m.Update(press(k))
	}
	if v := screen(t, m, 120, 40); !strings.Contains(v, "filter: d") {
		t.Errorf("d while typing the filter left the fleet:\n%s", v)
	}
}
