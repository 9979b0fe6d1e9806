package engine

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func testMeta(modelName string) meta {
	return meta{endpoint: "http://test", t: t0, model: modelName}
}

func mustParse(t testing.TB, body []byte) families {
	t.Helper()
	f, err := parseProm(body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

func fixture(t testing.TB, name string) families {
	t.Helper()
	return mustParse(t, enginetest.Fixture(name))
}

func only(t *testing.T, ss []model.Sample) model.Sample {
	t.Helper()
	if len(ss) != 1 {
		t.Fatalf("got %d samples, want 1: %+v", len(ss), ss)
	}
	return ss[0]
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// want is a table of expected concept values; absent lists concepts that
// must be left out (not exposed), never zero.
type want struct {
	gauges   map[model.Gauge]float64
	counters map[model.Counter]float64
	absentG  []model.Gauge
	absentC  []model.Counter
	absentL  []model.Latency
}

func (w want) check(t *testing.T, s model.Sample) {
	t.Helper()
	for g, x := range w.gauges {
		got, ok := s.Gauges[g]
		if !ok || !near(got, x) {
			t.Errorf("gauge %s = %v (present %v), want %v", g, got, ok, x)
		}
	}
	for c, x := range w.counters {
		got, ok := s.Counters[c]
		if !ok || !near(got, x) {
			t.Errorf("counter %s = %v (present %v), want %v", c, got, ok, x)
		}
	}
	for _, g := range w.absentG {
		if v, ok := s.Gauges[g]; ok {
			t.Errorf("gauge %s = %v, want absent (not exposed)", g, v)
		}
	}
	for _, c := range w.absentC {
		if v, ok := s.Counters[c]; ok {
			t.Errorf("counter %s = %v, want absent (not exposed)", c, v)
		}
	}
	for _, l := range w.absentL {
		if _, ok := s.Latencies[l]; ok {
			t.Errorf("latency %s present, want absent (not exposed)", l)
		}
	}
}

// checkHist asserts a histogram's count, sum and one bucket.
func checkHist(t *testing.T, s model.Sample, l model.Latency, count, sum, le, cum float64) {
	t.Helper()
	h, ok := s.Latencies[l]
	if !ok {
		t.Errorf("latency %s absent", l)
		return
	}
	if !near(h.Count, count) || !near(h.Sum, sum) {
		t.Errorf("%s count/sum = %v/%v, want %v/%v", l, h.Count, h.Sum, count, sum)
	}
	if le == 0 {
		return
	}
	for _, b := range h.Buckets {
		if b.UpperBound == le {
			if !near(b.Count, cum) {
				t.Errorf("%s bucket le=%v = %v, want %v", l, le, b.Count, cum)
			}
			return
		}
	}
	t.Errorf("%s has no bucket le=%v", l, le)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
