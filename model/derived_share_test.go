package model

import (
	"testing"
	"time"
)

// A derived (Prometheus) sample's distributions are one map shared by the
// States read from it; the log's timings merged into one State must not
// reach the others (nor the sample).
func TestDerivedLatencySharedButNotWrittenThrough(t *testing.T) {
	s := NewStore(StoreConfig{MaxWindow: 5 * time.Minute, Points: 64})
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	k := Key{Endpoint: "http://a:8000", Model: "m"}
	for i := range 3 {
		ts := at.Add(time.Duration(i) * 5 * time.Second)
		sm := NewSample(k.Endpoint, k.Model, ts, FromScrape)
		sm.Gauges[Running] = 3
		sm.Derived = &Derived{By: "prometheus", Window: time.Minute, Latency: map[Latency]Dist{TTFT: {Mean: Some(0.2), P99: Some(0.5)}}}
		s.Add(sm)
		lg := NewSample(k.Endpoint, "", ts, FromLog)
		lg.Observations = []Observation{{Time: ts, Values: map[Latency]float64{Queue: 0.3}}}
		s.Add(lg)
	}
	merged := s.State(k, time.Minute)
	if d := merged.Latency[Queue]; !d.Exposed || d.Source != FromLog {
		t.Fatalf("the log's queue time is not in the merged state: %+v", d)
	}
	if got := merged.Latency[TTFT]; !got.Exposed || got.Approx == "" {
		t.Fatalf("the derived TTFT lost its label: %+v", got)
	}
	scraped := s.StateFrom(k, FromScrape, time.Minute)
	if d, ok := scraped.Latency[Queue]; ok {
		t.Fatalf("the log's queue time leaked into the scrape's own state: %+v", d)
	}
	again := s.State(k, time.Minute)
	if len(again.Latency) != len(merged.Latency) {
		t.Fatalf("a second read differs: %d latencies, then %d", len(merged.Latency), len(again.Latency))
	}
}

// A window-free State (a Prometheus-evaluated sample) is worked out once
// per change of its endpoint's history and read over any window; a new
// sample, a run announced, the log's timings are read anew.
func TestWindowFreeStateKeptUntilItsEndpointChanges(t *testing.T) {
	s := NewStore(StoreConfig{MaxWindow: 15 * time.Minute, Points: 64})
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	k := Key{Endpoint: "http://a:8000", Model: "m"}
	add := func(i int, gen float64) {
		sm := NewSample(k.Endpoint, k.Model, at.Add(time.Duration(i)*5*time.Second), FromScrape)
		sm.Gauges[Running] = 2
		sm.Derived = &Derived{By: "prometheus", Window: time.Minute, Rates: map[Counter]float64{GenTokens: gen},
			Latency: map[Latency]Dist{TTFT: {Mean: Some(0.2)}}}
		s.Add(sm)
	}
	add(0, 100)
	a, b := s.State(k, time.Minute), s.State(k, 15*time.Minute)
	if a.Window != time.Minute || b.Window != 15*time.Minute || a.GenTPS != b.GenTPS || !a.GenTPS.OK || a.GenTPS.V != 100 {
		t.Fatalf("over 1m %v %v, over 15m %v %v", a.Window, a.GenTPS, b.Window, b.GenTPS)
	}
	add(1, 250)
	if got := s.State(k, time.Minute).GenTPS; got.V != 250 {
		t.Fatalf("after a new sample GenTPS %v, want 250", got)
	}
	// the log's timings: merged, not the kept picture
	lg := NewSample(k.Endpoint, "", at.Add(11*time.Second), FromLog)
	lg.Observations = []Observation{{Time: lg.Time, Values: map[Latency]float64{Queue: 0.3}}}
	s.Add(lg)
	if d := s.State(k, time.Minute).Latency[Queue]; !d.Exposed {
		t.Fatalf("the log's queue time is not read: %+v", d)
	}
	// a run announced: the old run's numbers are not shown as now
	k2 := Key{Endpoint: "http://b:8000", Model: "m"}
	sm := NewSample(k2.Endpoint, k2.Model, at, FromScrape)
	sm.Gauges[Running] = 7
	s.Add(sm)
	if st := s.State(k2, time.Minute); st.Samples != 1 {
		t.Fatalf("samples %d", st.Samples)
	}
	s.StartRun(k2.Endpoint, at.Add(time.Second))
	if st := s.State(k2, time.Minute); st.Samples != 0 || st.Running.OK {
		t.Fatalf("after a start banner the ended run's state is still read: %+v", st.Running)
	}
}

// An endpoint's change mark moves with its history, leaves with it, and
// an endpoint seen again after it was forgotten never reads as unchanged.
func TestChangesFollowAnEndpointAndLeaveWithIt(t *testing.T) {
	s := NewStore(StoreConfig{MaxWindow: time.Minute, Points: 16})
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	add := func(ep string, i int) {
		sm := NewSample(ep, "m", at.Add(time.Duration(i)*time.Second), FromScrape)
		sm.Gauges[Running] = 1
		s.Add(sm)
	}
	add("http://a", 0)
	add("http://b", 0)
	a0, b0 := s.Changes("http://a"), s.Changes("http://b")
	add("http://a", 1)
	if s.Changes("http://a") == a0 || s.Changes("http://b") != b0 {
		t.Fatalf("a sample of a moved %v → %v, b %v → %v", a0, s.Changes("http://a"), b0, s.Changes("http://b"))
	}
	seen := map[uint64]bool{a0: true, s.Changes("http://a"): true}
	s.Forget(Key{Endpoint: "http://a", Model: "m"})
	if _, kept := s.changes["http://a"]; kept || s.Changes("http://a") != 0 {
		t.Fatalf("a forgotten endpoint still has a change mark: %v", s.Changes("http://a"))
	}
	s.StartRun("http://a", at) // a banner for what the store no longer holds
	if _, kept := s.changes["http://a"]; kept {
		t.Fatal("a banner for a forgotten endpoint left a change mark")
	}
	add("http://a", 9)
	if seen[s.Changes("http://a")] {
		t.Fatalf("seen again, a reads as one of its old marks: %v", s.Changes("http://a"))
	}
}
