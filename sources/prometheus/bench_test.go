package prometheus

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/tui"
)

// BenchmarkRefresh500 is one refresh of a 500-replica vLLM fleet against a
// fake Prometheus (its answers precomputed, so the cost measured is
// llmtop's: building the queries, the HTTP round trips, decoding the JSON,
// turning it into scrapes) and feeding it into the core. At a 5 s refresh
// the CPU share is ns/op ÷ 5e9. BenchmarkRefresh2000 is the same at 2 000.
// Every replica's numbers change at every refresh (a busy fleet: each
// answer is one of four precomputed sets of values).
//
//	go test ./sources/prometheus -run '^$' -bench 'Refresh(500|2000)$' -count 5
func BenchmarkRefresh500(b *testing.B)  { benchRefresh(b, 500) }
func BenchmarkRefresh2000(b *testing.B) { benchRefresh(b, 2000) }

func benchRefresh(b *testing.B, n int) {
	fl := newBenchFleet(b, n, 1)
	mon := core.New(core.Options{Window: 5 * time.Minute, Store: StoreConfig(5 * time.Second)})
	fl.warmUp(func(msgs []model.Input) {
		mon.Apply(model.Batch(msgs))
		mon.Tick(fl.t)
	})
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	var r Refresh
	for i := 0; i < b.N; i++ {
		r = fl.refresh(i)
		for _, m := range r.Msgs {
			mon.Apply(m)
		}
		mon.Tick(fl.t)
	}
	b.StopTimer()
	// CPU time, not wall time: the machine is shared, and the share of a
	// core is what the target is about.
	reportShare(b, cpuTime()-cpu0)
	b.ReportMetric(float64(r.Queries), "queries/refresh")
}

// BenchmarkFleetCost500 is everything llmtop spends on one 5 s refresh of
// a 500-replica fleet with the fleet screen open: the source's queries and
// their decoding, the core applying the batch and running the rules, the
// frame drawn after it at 200×60 and the four the clock draws in the
// seconds without data — the figure the fleet's cost target is about
// (%core@5s). BenchmarkFleetCost2000 is the same at 2 000.
//
//	go test ./sources/prometheus -run '^$' -bench 'FleetCost(500|2000)$' -count 5
//
// BenchmarkFleetCost500Steady and BenchmarkFleetCost2000Steady are the same
// fleets at rest: one replica in twenty changes its numbers at each
// refresh, the rest answer what they answered before (a fleet's usual
// refresh). judged/refresh is how many replicas the rules judged again.
//
//	go test ./sources/prometheus -run '^$' -bench 'FleetCost(500|2000)Steady$' -count 5
func BenchmarkFleetCost500(b *testing.B)        { benchFleetCost(b, 500, 1, warmRefreshes) }
func BenchmarkFleetCost2000(b *testing.B)       { benchFleetCost(b, 2000, 1, warmRefreshes) }
func BenchmarkFleetCost500Steady(b *testing.B)  { benchFleetCost(b, 500, 20, warmRefreshes) }
func BenchmarkFleetCost2000Steady(b *testing.B) { benchFleetCost(b, 2000, 20, warmRefreshes) }

// BenchmarkFleetCost2000SteadyLong is BenchmarkFleetCost2000Steady after
// six minutes of refreshes instead of one: past the five-minute window the
// source's rates cover, as a monitor that has run a while (a steady
// replica's history then reads the same over the whole window).
//
//	go test ./sources/prometheus -run '^$' -bench 'FleetCost2000SteadyLong$' -benchtime 10x
func BenchmarkFleetCost2000SteadyLong(b *testing.B) { benchFleetCost(b, 2000, 20, 72) }

// warmRefreshes is how many refreshes the benchmarks apply before they
// measure: a minute's.
const warmRefreshes = 12

// benchFleetCost measures n replicas of which one in every changes its
// numbers at each refresh, after warm refreshes.
func benchFleetCost(b *testing.B, n, every, warm int) {
	fl := newBenchFleet(b, n, every)
	mon := core.New(core.Options{Window: 5 * time.Minute, Store: StoreConfig(5 * time.Second)})
	m := tui.New(tui.Options{Now: fl.t, Fleet: true, Window: 5 * time.Minute, Core: mon,
		Sources: map[string]string{"prometheus": ""}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	fl.warmUpFor(warm, func(msgs []model.Input) {
		m.Update(tui.BatchMsg(msgs))
		m.Update(tui.Frame())
		_ = m.View()
	})
	b.ReportAllocs()
	judged := 0
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := fl.refresh(i)
		m.Update(tui.BatchMsg(r.Msgs))
		_ = m.View() // held: the data waits for the frame timer
		m.Update(tui.Frame())
		_ = m.View() // the refresh's frame
		judged += mon.Judged()
		for s := range 4 {
			// the clock's frames, one a second until the next refresh (no
			// new data: the rules do not run again, the rows are cached)
			m.Update(tui.ClockAt(fl.t.Add(time.Duration(s+1) * time.Second)))
			_ = m.View()
		}
	}
	b.StopTimer()
	reportShare(b, cpuTime()-cpu0)
	b.ReportMetric(float64(judged)/float64(b.N), "judged/refresh")
}

// BenchmarkFleetSource500 is the source's share of BenchmarkFleetCost500:
// the refresh alone (queries, decoding, the messages built), its messages
// handed to nobody. BenchmarkFleetSource2000 is the same at 2 000.
//
//	go test ./sources/prometheus -run '^$' -bench 'FleetSource(500|2000)$' -count 5
func BenchmarkFleetSource500(b *testing.B)  { benchFleetSource(b, 500) }
func BenchmarkFleetSource2000(b *testing.B) { benchFleetSource(b, 2000) }

func benchFleetSource(b *testing.B, n int) {
	fl := newBenchFleet(b, n, 1)
	fl.warmUp(func([]model.Input) {})
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fl.refresh(i)
	}
	b.StopTimer()
	reportShare(b, cpuTime()-cpu0)
}

// benchFleet is a source reading n vLLM replicas from a fake Prometheus
// whose answers are precomputed in four sets of values that differ for
// every replica (a busy fleet: each refresh changes every number), or for
// one replica in every (a fleet at rest: the others' numbers stay); warm
// is the first refresh's messages (the targets' Origins).
type benchFleet struct {
	s      *Source
	f      *fakeProm
	caches []map[string][]byte
	warm   []model.Input
	t      time.Time
}

func newBenchFleet(b *testing.B, n, every int) *benchFleet {
	b.Helper()
	f := &fakeProm{up: map[string]float64{}}
	for i := range n {
		// Each replica publishes one release's names, as a real one does
		// (one that published every older name beside the new would
		// double the answer: 1.6x the CPU, measured 2026-11-24).
		e := currentVLLM(vllmEP(i, "prod", []string{"llama-3-8b", "qwen2.5-7b"}[i%2], 0.3, 1, 0.2))
		f.eps = append(f.eps, e)
		f.up[e.labels["instance"]] = 1
	}
	// The answers come from memory, not a socket: the server's work is
	// Prometheus's, not llmtop's.
	s, err := New(Config{URL: "http://prometheus:9090", Window: 5 * time.Minute, MaxTargets: n, transport: memAnswers{f}})
	if err != nil {
		b.Fatal(err)
	}
	fl := &benchFleet{s: s, f: f, t: time.Now()}
	base := make([]map[string]float64, n)
	for i, e := range f.eps {
		base[i] = e.values
	}
	for v := range 4 {
		for i := range f.eps {
			vals := make(map[string]float64, len(base[i]))
			for k, x := range base[i] {
				if i%every == 0 {
					vals[k] = x * (1 + float64((v+i)%4)/50)
				} else {
					vals[k] = x * (1 + float64(i%4)/50)
				}
			}
			f.eps[i].values = vals
		}
		f.cache = map[string][]byte{}
		fl.t = fl.t.Add(5 * time.Second)
		r := s.Refresh(context.Background(), fl.t) // fills this set's answers (and both rounds of queries)
		r = s.Refresh(context.Background(), fl.t.Add(time.Second))
		if r.Targets != n || r.Err != "" {
			b.Fatalf("targets %d err %q", r.Targets, r.Err)
		}
		if v == 0 {
			fl.warm = r.Msgs
			fl.warm = append(fl.warm[:0:0], s.Refresh(context.Background(), fl.t).Msgs...)
		}
		fl.caches = append(fl.caches, f.cache)
	}
	return fl
}

// warmUp hands apply the first refresh and a minute of refreshes after
// it: the histories, the findings and their events are there before the
// refreshes measured.
func (fl *benchFleet) warmUp(apply func([]model.Input)) { fl.warmUpFor(warmRefreshes, apply) }

// warmUpFor is warmUp with n refreshes after the first.
func (fl *benchFleet) warmUpFor(n int, apply func([]model.Input)) {
	apply(fl.warm)
	for i := range n {
		apply(fl.refresh(i).Msgs)
	}
}

// refresh is the i-th refresh, 5 s after the one before, reading the
// answers of one of the four sets.
func (fl *benchFleet) refresh(i int) Refresh {
	fl.t = fl.t.Add(5 * time.Second)
	fl.f.mu.Lock()
	fl.f.cache = fl.caches[i%len(fl.caches)]
	fl.f.mu.Unlock()
	return fl.s.Refresh(context.Background(), fl.t)
}

// reportShare reports the CPU a refresh took and its share of a core at a
// 5 s refresh.
func reportShare(b *testing.B, cpu time.Duration) {
	per := float64(cpu) / float64(b.N)
	b.ReportMetric(per/1e6, "cpu-ms/op")
	b.ReportMetric(per/5e9*100, "%core@5s")
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

// memAnswers hands back the fake's answers from its cache as the body of
// the response, without a recorder copying them (the copy is the fake's
// cost, not llmtop's); what is not cached yet goes to the fake.
type memAnswers struct{ f *fakeProm }

func (t memAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	t.f.mu.Lock()
	b, ok := t.f.cache[form.Get("query")]
	t.f.mu.Unlock()
	if !ok {
		r.Body = io.NopCloser(bytes.NewReader(body))
		return inProcess{t.f}.RoundTrip(r)
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: r}, nil
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
		runtime.KeepAlive(s) // what the source keeps between refreshes counts too
	}
}
