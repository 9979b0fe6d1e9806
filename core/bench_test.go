package core

import (
	"testing"
	"time"
)

// BenchmarkApplyScrapeAndTick is the core's cost per refresh of one
// endpoint: one scrape applied (store, lifecycle, run summary) and the
// clock ticked a second later (the rules run), in steady state.
func BenchmarkApplyScrapeAndTick(b *testing.B) {
	m := newMonitor()
	e := newEngine("0.11.0", t0, 0.02)
	for s := 0; s < 900; s++ { // a full 15-minute history first
		m.Apply(e.scrape(at(float64(s)), 5, 100))
		m.Tick(at(float64(s)))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := at(float64(900 + i))
		m.Apply(e.scrape(t, 5, 100))
		m.Tick(t.Add(time.Second / 2))
	}
}
