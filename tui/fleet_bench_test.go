package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// fleetBenchModel is the fleet view over 500 replicas that have had a
// minute of 5 s refreshes, at 200×60 in colour.
func fleetBenchModel(b *testing.B) (*Model, time.Time) { return fleetBenchModelN(b, 500) }

// fleetBenchModelN is fleetBenchModel with n replicas.
func fleetBenchModelN(b *testing.B, n int) (*Model, time.Time) {
	b.Helper()
	m := New(Options{Now: t0, Fleet: true, Sources: map[string]string{"prometheus": ""}})
	at := t0
	for s := 0; s <= 60; s += 5 {
		at = t0.Add(time.Duration(s) * time.Second)
		// one batch per refresh, as the Prometheus source sends it (one
		// message at a time, the first refresh ran the rules once per new
		// endpoint: minutes of set-up at 2 000)
		m.Update(BatchMsg(fleetMsgs(n, at, s == 0)))
	}
	m.Update(tickMsg(at.Add(time.Second)))
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	_ = m.View()
	return m, at
}

// BenchmarkFleetFrame500 is one frame of the fleet view at 500 replicas
// after the data changed: every row read again from the store and the
// report, sorted, and the visible rows laid out (the frame after each
// refresh).
func BenchmarkFleetFrame500(b *testing.B) {
	m, _ := fleetBenchModel(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.d.invalidate()
		_ = m.View()
	}
}

// BenchmarkFleetFrame2000 is BenchmarkFleetFrame500 at 2 000 replicas:
// the frame drawn after each refresh (sources/prometheus
// BenchmarkFleetCost2000 holds its frames until the frame timer, which it
// does not send, so this is what it leaves out).
func BenchmarkFleetFrame2000(b *testing.B) {
	m, _ := fleetBenchModelN(b, 2000)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		m.d.invalidate()
		_ = m.View()
	}
}

// BenchmarkFleetFrame500Idle is a frame with no new data (a key, the
// clock): the rows are cached.
func BenchmarkFleetFrame500Idle(b *testing.B) {
	m, _ := fleetBenchModel(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		_ = m.View()
	}
}

// BenchmarkFleetRefresh500 is what one 5 s refresh of a 500-replica fleet
// costs the screen: the batch of 500 scrapes applied, the rules run once
// (the tick a second later finds nothing new), one frame drawn. With the source's cost
// (sources/prometheus BenchmarkRefresh500, which also applies and runs the
// rules) this is the monitor's share of a core at a 5 s refresh
// (cpu-ms/op ÷ 5 000 ms). BenchmarkFleetRefresh2000 is the same at 2 000:
// a refresh that grows faster than the fleet shows there.
//
//	go test ./tui -run '^$' -bench 'FleetRefresh(500|2000)$' -benchtime 10x
func BenchmarkFleetRefresh500(b *testing.B)  { benchFleetRefresh(b, 500) }
func BenchmarkFleetRefresh2000(b *testing.B) { benchFleetRefresh(b, 2000) }

func benchFleetRefresh(b *testing.B, n int) {
	m, at := fleetBenchModelN(b, n)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		at = at.Add(5 * time.Second)
		b.StopTimer()
		msgs := fleetMsgs(n, at, false)
		b.StartTimer()
		m.Update(BatchMsg(msgs)) // as the Prometheus source sends a refresh
		m.Update(tickMsg(at.Add(time.Second)))
		_ = m.View()
	}
}
