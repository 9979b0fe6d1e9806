package engines

import (
	"strings"
	"testing"
)

// The routing advice named every router's knob whichever router was in
// front: each router layer's own check and balance name it and no other.
func TestRouteAdviceNamesOneLayer(t *testing.T) {
	n := 0
	for _, l := range Layers() {
		if l.Role != RoleRouter || l.WorkerCheck == "" {
			continue
		}
		n++
		for _, s := range []string{RouteHealth(l), RouteBalanceOf(l)} {
			for _, o := range Layers() {
				if o != l && o.WorkerCheck != "" && strings.Contains(s, o.WorkerCheck) {
					t.Errorf("%s's advice %q names %s's check", l.ID, s, o.ID)
				}
				if o != l && o.BalanceLever != "" && o.BalanceLever != l.BalanceLever && strings.Contains(s, o.BalanceLever) {
					t.Errorf("%s's advice %q names %s's lever", l.ID, s, o.ID)
				}
			}
		}
	}
	if n < 4 {
		t.Errorf("%d router layers say where they list their workers", n)
	}
	// unknown: every router's, each once
	all := RouteHealth(nil) + RouteBalanceOf(nil)
	for _, l := range Layers() {
		if l.WorkerCheck != "" && !strings.Contains(all, l.WorkerCheck) || l.BalanceLever != "" && !strings.Contains(all, l.BalanceLever) {
			t.Errorf("the advice with no router known lacks %s's", l.ID)
		}
	}
}
