package model

import (
	"math"
	"strings"
	"testing"
)

func TestRejectImplausible(t *testing.T) {
	s := NewSample("e", "m", t0, FromScrape)
	s.Gauges[Waiting], s.Gauges[Running], s.Gauges[KVUsage] = -5, 3, math.NaN()
	s.Gauges[GenTPSGauge] = -2547
	s.Counters[GenTokens], s.Counters[Requests] = math.Inf(1), 10
	s.FinishReasons["stop"], s.FinishReasons["length"] = 4, -1
	s.Latencies[TTFT] = Histogram{Sum: -3, Count: 1}
	s.Latencies[E2E] = Histogram{Sum: 3, Count: 1, Buckets: []Bucket{{UpperBound: math.Inf(1), Count: 1}}}
	s.Latencies[Queue] = Histogram{Parts: []Histogram{{Sum: 1, Count: -1}}}
	RejectImplausible(&s)
	if len(s.Gauges) != 1 || s.Gauges[Running] != 3 || len(s.Counters) != 1 || len(s.FinishReasons) != 1 || len(s.Latencies) != 1 {
		t.Fatalf("kept %v %v %v %v", s.Gauges, s.Counters, s.FinishReasons, s.Latencies)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "waiting = -5") || !strings.Contains(s.Notes[0], "ttft (sum -3, count 1)") {
		t.Errorf("notes %q", s.Notes)
	}
}
