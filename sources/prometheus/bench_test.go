package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// BenchmarkRefresh500 is one refresh of a 500-replica vLLM fleet against a
// fake Prometheus (its answers precomputed, so the cost measured is
// llmtop's: building the queries, the HTTP round trips, decoding the JSON,
// turning it into scrapes) and feeding it into the core. At a 5 s refresh
// the CPU share is ns/op ÷ 5e9.
func BenchmarkRefresh500(b *testing.B) {
	f := &fakeProm{up: map[string]float64{}, cache: map[string][]byte{}}
	for i := range 500 {
		// Each replica publishes one release's names, as a real one does
		// (one that published every older name beside the new would
		// double the answer: 1.6x the CPU, measured 2026-11-24).
		e := currentVLLM(vllmEP(i, "prod", []string{"llama-3-8b", "qwen2.5-7b"}[i%2], 0.3, 1, 0.2))
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	// The answers come from memory, not a socket: the server's work is
	// Prometheus's, not llmtop's.
	s, err := New(Config{URL: "http://prometheus:9090", Window: 5 * time.Minute, transport: inProcess{f}})
	if err != nil {
		b.Fatal(err)
	}
	mon := core.New(core.Options{Window: 5 * time.Minute})
	t := time.Now()
	r := s.Refresh(context.Background(), t) // warm the answers' cache and the core's rings
	if r.Targets != 500 || r.Err != "" {
		b.Fatalf("targets %d err %q", r.Targets, r.Err)
	}
	for _, m := range r.Msgs {
		mon.Apply(m)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t = t.Add(5 * time.Second)
		r = s.Refresh(context.Background(), t)
		for _, m := range r.Msgs {
			mon.Apply(m)
		}
		mon.Tick(t)
	}
	b.StopTimer()
	// CPU time, not wall time: the machine is shared, and the share of a
	// core is what the target is about.
	cpu := float64(cpuTime()-cpu0) / float64(b.N)
	b.ReportMetric(cpu, "cpu-ns/op")
	b.ReportMetric(cpu/5e9*100, "%core@5s")
	b.ReportMetric(float64(r.Queries), "queries/refresh")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// inProcess answers requests with the fake's handler, without a network.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// BenchmarkMemoryPerTarget is what a target read through Prometheus costs
// the core once its histories are full: 100 vLLM targets refreshed every
// 5 s for 20 minutes of fake time (the longest sparkline, 15 min, fills in
// less). bytes/target is the live heap over the targets; the source
// follows at most DefaultMaxTargets, so that times bytes/target bounds the
// monitor's fleet memory. "default-store" sizes the histories for a point
// a second, as before StoreConfig.
func BenchmarkMemoryPerTarget(b *testing.B) {
	for _, c := range []struct {
		name  string
		store model.StoreConfig
	}{{"store-for-5s", StoreConfig(5 * time.Second)}, {"default-store", model.DefaultStoreConfig}} {
		b.Run(c.name, func(b *testing.B) { memoryPerTarget(b, c.store) })
	}
}

func memoryPerTarget(b *testing.B, store model.StoreConfig) {
	const n = 100
	f := &fakeProm{up: map[string]float64{}, cache: map[string][]byte{}}
	for i := range n {
		e := currentVLLM(vllmEP(i, "prod", "llama-3-8b", 0.3, 1, 0.2))
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	for b.Loop() {
		s, err := New(Config{URL: "http://prometheus:9090", Window: 5 * time.Minute, transport: inProcess{f}})
		if err != nil {
			b.Fatal(err)
		}
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		mon := core.New(core.Options{Window: 5 * time.Minute, Store: store})
		t := time.Now()
		for range 20 * 60 / 5 {
			t = t.Add(5 * time.Second)
			r := s.Refresh(context.Background(), t)
			for _, m := range r.Msgs {
				mon.Apply(m)
			}
			mon.Tick(t)
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/target")
		runtime.KeepAlive(mon)
	}
}
