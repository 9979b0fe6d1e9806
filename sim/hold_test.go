package sim

import (
	"testing"
	"time"
)

// A held timeline stays in its segment past the segment's end (no
// restart), and moves on within a second of being released.
func TestHoldTimeline(t *testing.T) {
	s := newDriven(t, Config{Scenario: "healthy:10s,queue-buildup:10s", Seed: 1})
	segment := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.segIdx
	}
	advance(t, s, 5*time.Second)
	s.HoldTimeline(true)
	advance(t, s, 20*time.Second)
	if got := segment(); got != 0 {
		t.Fatalf("held: segment %d after 25 s of a 10 s segment, want 0", got)
	}
	if ok, _ := s.Accepting(); !ok {
		t.Fatal("held: the engine restarted")
	}
	s.HoldTimeline(false)
	advance(t, s, 1100*time.Millisecond)
	if got := segment(); got != 1 {
		t.Fatalf("released: segment %d, want 1", got)
	}
}
