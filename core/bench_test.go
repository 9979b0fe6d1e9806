package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
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

// BenchmarkFleetHistory is one 5 s refresh of 500 replicas evaluated by
// Prometheus (every number changes every refresh) applied and judged,
// after a minute of history and after twenty (every history full: 15
// minutes at a point per 5 s). A refresh's work should follow what it
// brought, not how much the store holds: compare the two.
//
//	go test ./core -run '^$' -bench FleetHistory -count 5
func BenchmarkFleetHistory(b *testing.B) {
	for _, c := range []struct {
		name string
		warm int
	}{{"1m", 12}, {"20m", 240}} {
		b.Run(c.name, func(b *testing.B) { benchFleetHistory(b, 500, c.warm) })
	}
}

func benchFleetHistory(b *testing.B, n, warm int) {
	m := New(Options{Window: 5 * time.Minute, Store: model.StoreConfig{MaxWindow: 15 * time.Minute, Points: 182}})
	refresh := func(r int) (model.Batch, time.Time) {
		t := t0.Add(time.Duration(r) * 5 * time.Second)
		batch := make(model.Batch, 0, n)
		for i := range n {
			url := fmt.Sprintf("http://10.0.%d.%d:8000", i/250, i%250)
			f := 1 + float64((r+i)%4)/50
			sm := model.NewSample(url, "llama-3-8b", t, model.FromScrape)
			sm.Gauges[model.Running], sm.Gauges[model.Waiting], sm.Gauges[model.KVUsage] = 8*f, 2*f, 0.4*f
			sm.Derived = &model.Derived{By: "prometheus", Window: 5 * time.Minute,
				Rates: map[model.Counter]float64{model.Requests: 3 * f, model.GenTokens: 300 * f, model.PromptTokens: 900 * f},
				Latency: map[model.Latency]model.Dist{
					model.TTFT: {P50: model.Some(0.2 * f), P99: model.Some(0.9 * f), Mean: model.Some(0.3 * f), Count: 100},
					model.ITL:  {P50: model.Some(0.02 * f), P99: model.Some(0.05 * f), Mean: model.Some(0.025 * f), Count: 5000}}}
			batch = append(batch, model.Scrape{Endpoint: url, Time: t, Samples: []model.Sample{sm},
				Identity: model.Identity{Engine: model.VLLM, Version: "0.11.0", Health: model.HealthUp,
					Models: []model.ModelInfo{{ID: "llama-3-8b", MaxContext: 8192}}}})
		}
		return batch, t
	}
	for r := range warm {
		batch, t := refresh(r)
		m.Apply(batch)
		m.Tick(t)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch, t := refresh(warm + i) // the source's cost, not the core's
		b.StartTimer()
		m.Apply(batch)
		m.Tick(t)
	}
}
