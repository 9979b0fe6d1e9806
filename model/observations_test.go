package model

import (
	"math"
	"strings"
	"testing"
	"time"
)

// logSample is a log-derived sample (no model name, like the log source's)
// carrying one request's observation.
func logSample(sec float64, vals map[Latency]float64) Sample {
	sm := NewSample("http://e", "", t0.Add(time.Duration(sec*float64(time.Second))), FromLog)
	sm.Observations = []Observation{{Time: sm.Time, Values: vals}}
	return sm
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// 100 requests of 1…100 ms: p50/p90/p99 are numpy's linear interpolation
// (50.5, 90.1, 99.01 ms), exact, with the count, labelled as the log's.
func TestLogObservationsExactPercentiles(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	for i := 1; i <= 100; i++ {
		s.Add(logSample(float64(i)/10, map[Latency]float64{Prefill: float64(i) / 1000}))
	}
	st := s.State(Key{"http://e", ""}, time.Minute)
	d := st.Latency[Prefill]
	if d.Source != FromLog || d.Estimate || d.Count != 100 || !d.Exposed {
		t.Fatalf("dist %+v: want from the log, exact, 100 requests", d)
	}
	if !near(d.P50.V, 0.0505) || !near(d.P90.V, 0.0901) || !near(d.P99.V, 0.09901) || !near(d.Mean.V, 0.0505) {
		t.Errorf("p50 %v p90 %v p99 %v mean %v, want 50.5/90.1/99.01/50.5 ms", d.P50, d.P90, d.P99, d.Mean)
	}
	if _, ok := st.Latency[TTFT]; ok {
		t.Errorf("no TTFT was logged and none may appear: %+v", st.Latency[TTFT])
	}
}

// The window holds only the requests logged within it; an empty window is
// "none finished", not "not exposed".
func TestLogObservationsWindow(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", ""}
	for i := 0; i < 10; i++ { // 10 slow requests, then 5 fast ones 5 min later
		s.Add(logSample(float64(i), map[Latency]float64{E2E: 9}))
	}
	for i := 0; i < 5; i++ {
		s.Add(logSample(300+float64(i), map[Latency]float64{E2E: 1}))
	}
	d := s.State(k, time.Minute).Latency[E2E]
	if d.Count != 5 || d.P99.V != 1 {
		t.Errorf("1m window: %v requests, p99 %v; want the 5 recent ones at 1 s", d.Count, d.P99)
	}
	if d := s.State(k, 15*time.Minute).Latency[E2E]; d.Count != 15 || d.P99.V != 9 {
		t.Errorf("15m window: %v requests, p99 %v; want all 15", d.Count, d.P99)
	}
	// A later sample without requests: the window moves on and empties.
	s.Add(NewSample("http://e", "", at(1000), FromLog))
	if d := s.State(k, time.Minute).Latency[E2E]; !d.Exposed || d.Count != 0 || d.P50.OK {
		t.Errorf("empty window: %+v; want exposed, 0 requests, no percentiles", d)
	}
}

// Lines stamped to the whole second share a time: the store keeps such a
// sample's requests although the sample itself is a duplicate.
func TestLogObservationsSameTimeKept(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	for i := 0; i < 3; i++ {
		s.Add(logSample(5, map[Latency]float64{E2E: float64(i + 1)}))
	}
	if d := s.State(Key{"http://e", ""}, time.Minute).Latency[E2E]; d.Count != 3 || d.P50.V != 2 {
		t.Errorf("%+v: want 3 requests, p50 2 s", d)
	}
}

// A window never mixes two runs: the log's start banner ends the old run's
// requests.
func TestLogObservationsRunBoundary(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", ""}
	s.Add(logSample(1, map[Latency]float64{E2E: 30}))
	s.Add(logSample(2, map[Latency]float64{E2E: 30}))
	s.StartRun("http://e", at(3))
	if d := s.State(k, time.Minute).Latency[E2E]; d.Exposed {
		t.Errorf("after a start banner, before the new run's first sample: %+v, want nothing", d)
	}
	s.Add(logSample(4, map[Latency]float64{E2E: 1}))
	if d := s.State(k, time.Minute).Latency[E2E]; d.Count != 1 || d.P99.V != 1 {
		t.Errorf("new run: %+v, want its one request only", d)
	}
}

// Metrics win where they have quantiles (the log only cross-checks); a
// mean-only metric keeps its mean and gains the log's percentiles; what
// the metrics lack comes from the log.
func TestLogObservationsBesideMetrics(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	b := []float64{0.1, 0.5, 1, inf}
	for i, sec := range []int{0, 10} {
		sm := sample(sec)
		n := float64(i * 10)
		sm.Latencies[Queue] = hist(b, []float64{0, n, n, n}, n*0.3) // 300 ms by the buckets
		sm.Latencies[TPOT] = Histogram{Sum: n * 0.02, Count: n, Approx: "mean only"}
		s.Add(sm)
	}
	for i := 0; i < 10; i++ {
		s.Add(logSample(float64(i+1)-0.5, map[Latency]float64{Queue: 0.01, TPOT: 0.03, Prefill: 0.2}))
	}
	st := s.State(k, time.Minute)
	q := st.Latency[Queue]
	if q.Source == FromLog || !q.Estimate || !strings.Contains(q.LogCheck, "disagree") {
		t.Errorf("queue %+v: the metric's buckets win and the log (10 ms vs ~300 ms) disagrees", q)
	}
	tp := st.Latency[TPOT]
	if tp.Source != FromLog || !near(tp.Mean.V, 0.02) || !near(tp.P50.V, 0.03) || tp.Count != 10 || tp.LogCheck == "" {
		t.Errorf("tpot %+v: mean 20 ms from the metric, p50 30 ms and n=10 from the log, and the disagreement said", tp)
	}
	if pf := st.Latency[Prefill]; pf.Source != FromLog || !near(pf.P50.V, 0.2) {
		t.Errorf("prefill %+v: from the log", pf)
	}
	if st.Source != FromScrape {
		t.Errorf("the picture stays the scrape's: %v", st.Source)
	}
}

// llama.cpp times no queue: with 4 requests waiting and 2 running on
// average, each 0.5 s prefill + 0.5 s decode in its slot, Little's law
// gives a 2 s mean wait, and TTFT's mean is that plus the logged prefill;
// both say they are estimates.
func TestQueueByLittlesLaw(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for sec := 0; sec <= 30; sec++ {
		sm := sample(sec)
		sm.Gauges[Waiting], sm.Gauges[Running] = 4, 2
		s.Add(sm)
	}
	// The log's lines all arrive at once (a backlog without wall-clock
	// stamps): the estimate does not depend on their times.
	for i := 0; i < 60; i++ {
		s.Add(logSample(29+float64(i)/1000, map[Latency]float64{Prefill: 0.4 + float64(i%3)/10, Decode: 0.5}))
	}
	st := s.State(k, 30*time.Second)
	q := st.Latency[Queue]
	if q.Approx != LittleApprox || q.P50.OK || !near(q.Mean.V, 2) {
		t.Errorf("queue %+v: want the Little's law estimate 2 s, mean only", q)
	}
	tt := st.Latency[TTFT]
	if !tt.Exposed || tt.P99.OK || !near(tt.Mean.V, 2.5) || !strings.Contains(tt.Approx, "estimate") {
		t.Errorf("ttft %+v: want 2.5 s = queue + prefill, labelled", tt)
	}
	// Without the running gauge there is no queue estimate.
	s2 := NewStore(DefaultStoreConfig)
	sm := sample(0)
	sm.Gauges[Waiting] = 3
	s2.Add(sm)
	s2.Add(logSample(0.5, map[Latency]float64{Prefill: 0.5, Decode: 1}))
	if st := s2.State(k, time.Minute); st.Latency[Queue].Exposed || st.Latency[TTFT].Exposed {
		t.Errorf("no running gauge: queue %+v ttft %+v, want neither", st.Latency[Queue], st.Latency[TTFT])
	}
}

// Bad values are no request's; memory is bounded.
func TestLogObservationsBounded(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	s.Add(logSample(0, map[Latency]float64{E2E: -1, TPOT: math.NaN(), Prefill: math.Inf(1)}))
	if st := s.State(Key{"http://e", ""}, time.Minute); len(st.Latency) != 0 {
		t.Errorf("bad values became %v", st.Latency)
	}
	for i := 0; i < LogObsCap+500; i++ {
		s.Add(logSample(1+float64(i)/100, map[Latency]float64{E2E: 1}))
	}
	if d := s.State(Key{"http://e", ""}, 15*time.Minute).Latency[E2E]; d.Count != LogObsCap {
		t.Errorf("count %v, want the ring's %d", d.Count, LogObsCap)
	}
}

// Issue 31 item 27: llama-server's metrics count no finished requests, so
// the throughput read "req -- req/s" while its log had timed 8 (the real
// overload run: sources/logs/testdata/loglat/llama-server-2slots-6streams.log,
// 8 print_timing blocks). The requests/s is the log's count over the
// window, marked as the log's; with a metrics count it stays the metrics'.
func TestRequestsPerSecondFromTheLog(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for sec := 0; sec <= 40; sec += 10 {
		sm := sample(sec)
		sm.Gauges[Running] = 2
		s.Add(sm)
	}
	for i := range 8 {
		s.Add(logSample(float64(5*i+2), map[Latency]float64{Prefill: 3.9, Decode: 0.15}))
	}
	st := s.State(k, time.Minute)
	if !st.RequestsPS.OK || !st.RequestsFromLog || !near(st.RequestsPS.V, 8/st.Latency[Prefill].Window.Seconds()) {
		t.Errorf("requests/s %+v from log %v (prefill window %v), want 8 over the window", st.RequestsPS, st.RequestsFromLog, st.Latency[Prefill].Window)
	}
	if m := MetricsOf(st); !m.RequestsPerS.OK || !m.RequestsFromLog {
		t.Errorf("JSON requests_per_s %+v from log %v", m.RequestsPerS, m.RequestsFromLog)
	}
}

// llama-server with --log, watched 51 s, a benchmark in its last 31 s:
// the log's window began at its first timed request, so 185 requests read
// as 4.62 req/s "over 40s" beside rates over 51s. The log was read all
// along: its window starts where the endpoint's scrapes do.
func TestLogWindowStartsWhenTheEndpointWasFirstScraped(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for sec := 0; sec <= 50; sec++ {
		sm := sample(sec)
		sm.Gauges[Running] = 2
		s.Add(sm)
		if sec >= 20 {
			s.Add(logSample(float64(sec), map[Latency]float64{Prefill: 0.1, Decode: 0.2}))
		}
	}
	st := s.State(k, time.Minute)
	if w := st.Latency[Prefill].Window; w != 50*time.Second {
		t.Errorf("log window %v, want the 50 s since the first scrape", w)
	}
	if !st.RequestsPS.OK || !near(st.RequestsPS.V, 31.0/50) {
		t.Errorf("requests/s %+v, want 31 requests over 50 s", st.RequestsPS)
	}
}
