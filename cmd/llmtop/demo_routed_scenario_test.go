package main

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/sim"
)

// `demo --routed routed-starved` ran one scenario: the header's clock said
// 0:00 however long it ran. It counts the time run; a cycle still shows its
// segment and where it is in it.
func TestRoutedDemoHeaderClockRuns(t *testing.T) {
	got := routedScenarioMsg(sim.RoutedStarved, false, 43*time.Second)
	if got.Elapsed != 43*time.Second || got.Length != 0 {
		t.Errorf("one scenario after 43 s: %+v", got)
	}
	first := sim.RoutedDemoTimeline[0]
	got = routedScenarioMsg(first.Name, true, 5*time.Second)
	if got.Elapsed != 5*time.Second || got.Length != first.For {
		t.Errorf("a cycle 5 s in: %+v, want 5s of %v", got, first.For)
	}
}
