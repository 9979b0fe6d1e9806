package sim

import (
	"strings"
	"testing"
	"time"
)

// `make run`'s cycle gives a stretch of its first segment to a routed
// fleet (issue 26): the header reads the engine's healthy stretch, then the
// routed scenario with its own clock; other segments read as they are.
func TestDemoSegmentSplitsTheFirstSegment(t *testing.T) {
	segs, err := parseTimeline(DemoTimeline)
	if err != nil {
		t.Fatal(err)
	}
	first := segs[0]
	if strings.Join(first.names, "+") != DemoRouted.Segment || first.dur != DemoRouted.SegmentLength ||
		DemoRouted.After+DemoRouted.For != first.dur {
		t.Fatalf("the timeline's first segment %v %v does not hold the routed stretch %+v", first.names, first.dur, DemoRouted)
	}
	if _, ok := routedScenarios[DemoRouted.Scenario]; !ok {
		t.Fatalf("the routed stretch's scenario %q is not a routed scenario", DemoRouted.Scenario)
	}
	for _, c := range []struct {
		name            string
		at              time.Duration
		want            string
		elapsed, length time.Duration
		routed          bool
	}{
		{Healthy, 10 * time.Second, Healthy, 10 * time.Second, DemoRouted.After, false},
		{Healthy, DemoRouted.After, DemoRouted.Scenario, 0, DemoRouted.For, true},
		{Healthy, DemoRouted.After + 30*time.Second, DemoRouted.Scenario, 30 * time.Second, DemoRouted.For, true},
		{QueueBuildup, 70 * time.Second, QueueBuildup, 70 * time.Second, 60 * time.Second, false},
	} {
		length := first.dur
		if c.name != Healthy {
			length = 60 * time.Second
		}
		name, el, l, routed := DemoSegment(c.name, c.at, length)
		if name != c.want || el != c.elapsed || l != c.length || routed != c.routed {
			t.Errorf("%s at %v: %s %v/%v routed=%v, want %s %v/%v routed=%v", c.name, c.at, name, el, l, routed, c.want, c.elapsed, c.length, c.routed)
		}
	}
	// `llmtop demo --scenario healthy` (forever) is not the cycle
	if _, _, _, routed := DemoSegment(Healthy, 70*time.Second, 0); routed {
		t.Error("a healthy segment of another timeline reads as the routed stretch")
	}
	var total time.Duration
	for _, s := range segs {
		total += s.dur
	}
	if total > 9*time.Minute {
		t.Errorf("the demo's cycle is %v: too long to watch", total)
	}
}
