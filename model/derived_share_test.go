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
