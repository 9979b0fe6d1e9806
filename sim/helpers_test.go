package sim

import (
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

// newDriven builds a sim on a FakeClock.
func newDriven(t testing.TB, cfg Config) *Sim {
	t.Helper()
	cfg.Clock = NewFakeClock(t0)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func advance(t testing.TB, s *Sim, d time.Duration) {
	t.Helper()
	if err := s.Advance(d); err != nil {
		t.Fatal(err)
	}
}

// families gathers the current engine's registry by name.
func families(t testing.TB, s *Sim) map[string]*dto.MetricFamily {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	fams, err := s.eng.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value sums a counter or gauge family over its children matching label=v
// (label "" = all).
func value(f map[string]*dto.MetricFamily, name, label, v string) float64 {
	var sum float64
	fam, ok := f[name]
	if !ok {
		return math.NaN()
	}
	for _, m := range fam.Metric {
		if label != "" {
			match := false
			for _, l := range m.Label {
				if l.GetName() == label && l.GetValue() == v {
					match = true
				}
			}
			if !match {
				continue
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

func hist(f map[string]*dto.MetricFamily, name string) *dto.Histogram {
	return f[name].Metric[0].Histogram
}

func histMean(h *dto.Histogram) float64 {
	if h.GetSampleCount() == 0 {
		return math.NaN()
	}
	return h.GetSampleSum() / float64(h.GetSampleCount())
}

// histQuantile interpolates linearly inside the bucket, as Prometheus does.
func histQuantile(h *dto.Histogram, q float64) float64 {
	n := float64(h.GetSampleCount())
	rank := q * n
	lower, prev := 0.0, 0.0
	for _, b := range h.Bucket {
		c := float64(b.GetCumulativeCount())
		if c >= rank {
			if c == prev {
				return b.GetUpperBound()
			}
			return lower + (b.GetUpperBound()-lower)*(rank-prev)/(c-prev)
		}
		lower, prev = b.GetUpperBound(), c
	}
	return math.Inf(1)
}
