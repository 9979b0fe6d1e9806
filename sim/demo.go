package sim

import "time"

// DemoRouted is the routed stretch of `llmtop demo`'s cycle (issue 26): in
// the timeline's first segment (Segment, healthy), from After on for For,
// a routed fleet's Scenario is watched beside the demo's engine.
var DemoRouted = struct {
	Segment       string
	After, For    time.Duration
	Scenario      string
	SegmentLength time.Duration
}{Segment: Healthy, After: 50 * time.Second, For: 90 * time.Second, Scenario: RoutedStarved, SegmentLength: 140 * time.Second}

// DemoSegment is what the demo's header says of where the engine's
// timeline is (name, elapsed, length from Sim.Scenario): the first
// segment reads as the engine's healthy stretch, then as the routed
// fleet's (routed true), each with its own clock.
func DemoSegment(name string, elapsed, length time.Duration) (string, time.Duration, time.Duration, bool) {
	r := DemoRouted
	if name != r.Segment || length != r.SegmentLength {
		return name, elapsed, length, false
	}
	if elapsed < r.After {
		return name, elapsed, r.After, false
	}
	return r.Scenario, elapsed - r.After, r.For, true
}
