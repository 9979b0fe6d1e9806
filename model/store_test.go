package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func sample(sec int) Sample { return NewSample("http://e", "m", at(sec), FromScrape) }

func hist(bounds []float64, counts []float64, sum float64) Histogram {
	h := Histogram{Sum: sum}
	for i, ub := range bounds {
		h.Buckets = append(h.Buckets, Bucket{ub, counts[i]})
	}
	h.Count = counts[len(counts)-1]
	return h
}

var inf = math.Inf(1)

func TestCounterRateAndRestart(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	feed := func(sec int, v float64) []Event {
		sm := sample(sec)
		sm.Counters[GenTokens] = v
		return s.Add(sm)
	}
	feed(0, 1000)
	feed(10, 2000) // 100 tok/s
	if st := s.State(k, time.Minute); !st.GenTPS.OK || st.GenTPS.V != 100 {
		t.Fatalf("rate = %+v, want 100", st.GenTPS)
	}
	ev := feed(20, 300) // restart: 300 tokens since
	if len(ev) != 1 || ev[0].Kind != KindRestart {
		t.Fatalf("events = %+v, want one restart", ev)
	}
	st := s.State(k, time.Minute)
	// A window never spans two runs: one sample into the new run there is
	// no rate yet (not the old run's, not a mix of both).
	if st.GenTPS.OK {
		t.Fatalf("rate across restart = %+v, want none until the new run has two samples", st.GenTPS)
	}
	if len(st.Restarts) != 1 || !st.Restarts[0].Equal(at(20)) || !st.RunStart.Equal(at(20)) {
		t.Fatalf("restarts = %v, run start %v", st.Restarts, st.RunStart)
	}
	feed(30, 800) // 50 tok/s in the new run
	if st := s.State(k, time.Minute); !st.GenTPS.OK || st.GenTPS.V != 50 || st.RateWindow != 10*time.Second {
		t.Fatalf("rate in the new run = %+v over %v, want 50 over 10s", st.GenTPS, st.RateWindow)
	}
	// The sparkline marks the restart with a gap, and no point is drawn
	// from an interval that spans the two runs.
	var got []string
	for _, p := range s.Series(k, SeriesGenTPS) {
		switch {
		case p.Restart:
			got = append(got, "restart")
		case p.OK:
			got = append(got, fmt.Sprint(p.V))
		}
	}
	if strings.Join(got, " ") != "100 restart 50" {
		t.Fatalf("sparkline = %v, want [100 restart 50]", got)
	}
	// The diagnosis' series hold the current run only.
	if pts := s.RunSeries(k, SeriesGenTPS); len(pts) != 1 || pts[0].V != 50 {
		t.Fatalf("run series = %+v, want the new run's one point", pts)
	}
}

func TestMissingIsNotZero(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for i := 0; i < 3; i++ {
		sm := sample(i)
		sm.Gauges[Running] = 0 // exposed and zero
		s.Add(sm)
	}
	st := s.State(k, time.Minute)
	if !st.Running.OK || st.Running.V != 0 {
		t.Fatalf("running = %+v, want exposed 0", st.Running)
	}
	if st.KVUsage.OK || st.Waiting.OK || st.GenTPS.OK || st.PrefixHit.OK {
		t.Fatalf("unexposed values must be absent: %+v", st)
	}
	if d := st.Latency[TTFT]; d.Exposed || d.P50.OK {
		t.Fatalf("unexposed TTFT = %+v", d)
	}
	b, _ := json.Marshal(MetricsOf(st))
	for _, want := range []string{`"running":0`, `"kv_cache_usage_ratio":null`, `"ttft_ms":{"p50":null,"p90":null,"p99":null,"mean":null,"count":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

func TestHistogramWindowFromBucketDeltas(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	bounds := []float64{0.1, 0.5, 1, inf}
	add := func(sec int, counts []float64, sum float64) {
		sm := sample(sec)
		sm.Latencies[TTFT] = hist(bounds, counts, sum)
		s.Add(sm)
	}
	add(0, []float64{100, 100, 100, 100}, 5) // history before the window: all fast
	add(60, []float64{100, 100, 100, 100}, 5)
	if d := s.State(k, time.Minute).Latency[TTFT]; d.P50.OK || d.Mean.OK || !d.Exposed || d.Count != 0 {
		t.Fatalf("no new observations must be no data, got %+v", d)
	}
	// 10 new observations, all in (0.5, 1].
	add(120, []float64{100, 100, 110, 110}, 12)
	d := s.State(k, time.Minute).Latency[TTFT]
	if !d.Estimate || d.Count != 10 || d.Window != time.Minute {
		t.Fatalf("dist = %+v", d)
	}
	if math.Abs(d.P50.V-0.75) > 1e-9 || math.Abs(d.Mean.V-0.7) > 1e-9 {
		t.Fatalf("p50 %v mean %v, want 0.75 and 0.7 (old fast requests are outside the window)", d.P50, d.Mean)
	}
	// The 15-minute window includes nothing older either, since all
	// previous observations predate the first sample.
	if d := s.State(k, 15*time.Minute).Latency[TTFT]; d.Count != 10 || d.Window != 2*time.Minute {
		t.Fatalf("long window = %+v, want 10 obs over 2m", d)
	}
}

func TestHistogramBucketsChangeStartsNewWindow(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	sm := sample(0)
	sm.Latencies[ITL] = hist([]float64{0.01, inf}, []float64{5, 10}, 1)
	s.Add(sm)
	sm = sample(10)
	sm.Latencies[ITL] = hist([]float64{0.01, inf}, []float64{10, 20}, 2)
	s.Add(sm)
	sm = sample(20) // upgraded engine: new layout, counters continued
	sm.Latencies[ITL] = hist([]float64{0.01, 0.05, inf}, []float64{12, 24, 24}, 2.2)
	ev := s.Add(sm)
	if len(ev) != 1 || ev[0].Kind != KindBucketsChanged {
		t.Fatalf("events = %+v", ev)
	}
	if d := s.State(k, time.Minute).Latency[ITL]; d.P50.OK {
		t.Fatalf("a window must not span two layouts: %+v", d)
	}
	sm = sample(30)
	sm.Latencies[ITL] = hist([]float64{0.01, 0.05, inf}, []float64{12, 34, 34}, 2.5)
	s.Add(sm)
	d := s.State(k, time.Minute).Latency[ITL]
	if d.Count != 10 || d.Window != 10*time.Second || !d.P50.OK || d.P50.V <= 0.01 || d.P50.V > 0.05 {
		t.Fatalf("after change = %+v", d)
	}
	// The JSON carries the distribution's own window.
	if w := MetricsOf(s.State(k, time.Minute)).ITLms.WindowS; w != 10 {
		t.Fatalf("JSON itl window_s %v, want 10", w)
	}
}

func TestHistogramResetMidWindow(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	b := []float64{1, inf}
	for i, c := range [][]float64{{50, 50}, {60, 60}, {5, 5}, {9, 9}} { // restart at the third
		sm := sample(i * 10)
		sm.Latencies[E2E] = hist(b, c, c[1]*0.25)
		s.Add(sm)
	}
	// The window covers the new run only: 4 observations, not the old
	// run's 10 added to them.
	d := s.State(k, time.Minute).Latency[E2E]
	if d.Count != 4 || math.Abs(d.Mean.V-0.25) > 1e-9 || d.Window != 10*time.Second {
		t.Fatalf("window after reset = %+v, want the new run's 4 observations over 10s, mean 0.25", d)
	}
}

func TestStartRunFromLog(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	feed := func(sec int, v float64) []Event {
		sm := sample(sec)
		sm.Counters[GenTokens] = v
		sm.Gauges[Running] = v / 100
		return s.Add(sm)
	}
	feed(0, 1000)
	feed(10, 2000)
	// The log says a new process started; its counters happen to be
	// higher than the old one's last value (no reset to see).
	s.StartRun("http://e", at(15))
	if st := s.State(k, time.Minute); st.Samples != 0 || st.Running.OK || st.GenTPS.OK {
		t.Fatalf("state between the banner and the new run's first sample = %+v, want nothing", st)
	}
	if ev := feed(20, 2500); len(ev) != 0 {
		t.Fatalf("events = %+v: the log's banner is the restart's event, not the store's", ev)
	}
	feed(30, 3500)
	st := s.State(k, time.Minute)
	if !st.GenTPS.OK || st.GenTPS.V != 100 || !st.RunStart.Equal(at(20)) {
		t.Fatalf("rate in the new run = %+v (run start %v), want 100 from 20s", st.GenTPS, st.RunStart)
	}
}

func TestProcessStartTimeIsARestart(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	for i, started := range []int{-100, -100, 5} {
		sm := sample(i * 10)
		sm.Counters[GenTokens] = float64(1000 * (i + 1)) // never goes back
		sm.Started = at(started)
		ev := s.Add(sm)
		if want := i == 2; (len(ev) == 1 && ev[0].Kind == KindRestart) != want {
			t.Fatalf("sample %d: events %+v, restart wanted: %v", i, ev, want)
		}
	}
}

func TestMeanOnlyAndComposite(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for i, v := range []float64{0, 100} {
		sm := sample(i * 10)
		// llama.cpp style: seconds / tokens counters.
		sm.Latencies[TPOT] = Histogram{Sum: v * 0.02, Count: v}
		// TGI style: TTFT ≈ validation + queue + prefill means.
		sm.Latencies[TTFT] = Histogram{Approx: "validation+queue+prefill", Parts: []Histogram{
			{Sum: v * 0.001, Count: v}, {Sum: v * 0.1, Count: v}, {Sum: v * 0.05, Count: v},
		}}
		s.Add(sm)
	}
	st := s.State(k, time.Minute)
	if d := st.Latency[TPOT]; d.Estimate || d.P50.OK || math.Abs(d.Mean.V-0.02) > 1e-12 {
		t.Fatalf("mean-only TPOT = %+v", d)
	}
	if d := st.Latency[TTFT]; d.Approx == "" || math.Abs(d.Mean.V-0.151) > 1e-12 || d.P99.OK {
		t.Fatalf("composite TTFT = %+v", d)
	}
}

func TestPrefixHitFromCountersAndFinishShare(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for i, v := range []float64{0, 1} {
		sm := sample(i * 10)
		sm.Counters[PrefixQueries] = 1000 + v*1000
		sm.Counters[PrefixHits] = 100 + v*250
		sm.FinishReasons["stop"] = 10 + v*30
		sm.FinishReasons["length"] = 5 + v*10
		s.Add(sm)
	}
	st := s.State(k, time.Minute)
	if st.PrefixHit.V != 0.25 {
		t.Fatalf("prefix hit = %+v, want 0.25 over the window", st.PrefixHit)
	}
	if st.FinishShare["stop"] != 0.75 || st.FinishShare["length"] != 0.25 || st.Reasons()[0] != "stop" {
		t.Fatalf("finish share = %+v", st.FinishShare)
	}
}

func TestStoreMemoryIsBounded(t *testing.T) {
	cfg := StoreConfig{MaxWindow: time.Minute, Points: 16}
	s := NewStore(cfg)
	k := Key{"http://e", "m"}
	for i := 0; i < 10000; i++ {
		sm := NewSample("http://e", "m", t0.Add(time.Duration(i)*250*time.Millisecond), FromScrape)
		sm.Gauges[Running] = float64(i % 7)
		sm.Counters[GenTokens] = float64(i * 10)
		sm.Latencies[TTFT] = hist([]float64{1, inf}, []float64{float64(i), float64(i)}, float64(i))
		s.Add(sm)
	}
	if n := len(s.Series(k, string(Running))); n > 16 {
		t.Fatalf("series holds %d points, cap 16", n)
	}
	es := s.series[srcKey{k, FromScrape}]
	if es.hists[TTFT][0].hist.Len() > 16 || es.counters[GenTokens].hist.Len() > 16 {
		t.Fatal("window history exceeds its cap")
	}
	// Spaced points still cover the whole window.
	st := s.State(k, time.Minute)
	if st.RateWindow < 55*time.Second || math.Abs(st.GenTPS.V-40) > 1e-9 {
		t.Fatalf("rate window %v rate %v, want ≈1m and 40/s", st.RateWindow, st.GenTPS)
	}
}

func TestOutOfOrderSampleIgnored(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for _, sec := range []int{0, 10, 5} {
		sm := sample(sec)
		sm.Counters[Requests] = float64(sec)
		s.Add(sm)
	}
	if st := s.State(k, time.Minute); st.RequestsPS.V != 1 || len(st.Restarts) != 0 {
		t.Fatalf("state = %+v", st)
	}
}

func TestScrapeWinsOverLog(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	lg := NewSample("http://e", "m", at(0), FromLog)
	lg.Gauges[Running] = 3
	s.Add(lg)
	if st := s.State(k, time.Minute); st.Running.V != 3 || st.Source != FromLog {
		t.Fatalf("log-only state = %+v", st)
	}
	sc := sample(1)
	sc.Gauges[Running] = 4
	s.Add(sc)
	if st := s.State(k, time.Minute); st.Running.V != 4 || st.Source != FromScrape {
		t.Fatalf("scraped state = %+v", st)
	}
	if st := s.StateFrom(k, FromLog, time.Minute); st.Running.V != 3 {
		t.Fatalf("log state for cross-check = %+v", st)
	}
	if len(s.Keys()) != 1 {
		t.Fatalf("keys = %v", s.Keys())
	}
}

func TestOptJSON(t *testing.T) {
	var o struct{ A, B Opt }
	o.A = Some(1.5)
	o.B = Some(math.NaN())
	b, _ := json.Marshal(o)
	if string(b) != `{"A":1.5,"B":null}` {
		t.Fatalf("json = %s", b)
	}
	var back struct{ A, B Opt }
	if err := json.Unmarshal(b, &back); err != nil || back.A != o.A || back.B.OK {
		t.Fatalf("round trip = %+v %v", back, err)
	}
}

func TestRing(t *testing.T) {
	r := NewRing[int](3)
	for i := 1; i <= 5; i++ {
		r.Push(i)
	}
	if got := r.Slice(); len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Fatalf("ring = %v", got)
	}
	if v, ok := r.Last(); !ok || v != 5 {
		t.Fatal("last")
	}
	r.SetLast(9)
	if r.At(2) != 9 {
		t.Fatal("setlast")
	}
}

func TestAllBelowLowestBucket(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	b := []float64{0.3, 0.5, inf}
	for i, c := range [][]float64{{0, 0, 0}, {10, 10, 10}} {
		sm := sample(i * 10)
		sm.Latencies[Queue] = hist(b, c, c[2]*0.015)
		s.Add(sm)
	}
	d := s.State(k, time.Minute).Latency[Queue]
	if !d.AllBelow.OK || d.AllBelow.V != 0.3 || math.Abs(d.Mean.V-0.015) > 1e-12 {
		t.Fatalf("dist = %+v, want all below 0.3 with mean 15ms", d)
	}
	j, _ := json.Marshal(DistMS(d))
	if !strings.Contains(string(j), `"p50":null,"p90":null,"p99":null,"mean":15,`) || !strings.Contains(string(j), `"all_below_ms":300`) {
		t.Fatalf("json = %s", j)
	}
	sm := sample(20)
	sm.Latencies[Queue] = hist(b, []float64{10, 11, 11}, 10*0.015+0.4)
	s.Add(sm)
	if d := s.State(k, 15*time.Second).Latency[Queue]; d.AllBelow.OK {
		t.Fatalf("an observation above the lowest bucket must clear AllBelow: %+v", d)
	}
}

func TestSeverityJSONRoundTrip(t *testing.T) {
	for _, sev := range []Severity{SevInfo, SevWarn, SevCrit} {
		b, _ := json.Marshal(sev)
		var back Severity
		if err := json.Unmarshal(b, &back); err != nil || back != sev {
			t.Fatalf("%s: %s → %v (%v)", sev, b, back, err)
		}
	}
	var s Severity
	if err := json.Unmarshal([]byte(`"fatal"`), &s); err == nil {
		t.Fatal("an unknown severity must be an error")
	}
}

func TestAppendSeriesSince(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for i := 0; i < 10; i++ {
		sm := sample(i)
		sm.Gauges[Waiting] = float64(i)
		s.Add(sm)
	}
	buf := make([]Point, 0, 16)
	got := s.AppendSeries(buf[:0], k, string(Waiting), at(6))
	if len(got) != 3 || got[0].V != 7 || got[2].V != 9 || &got[0] != &buf[:1][0] {
		t.Fatalf("got %+v (must reuse the buffer)", got)
	}
	if got := s.SeriesSince(k, "nope", at(0)); got != nil {
		t.Fatalf("unknown series = %v", got)
	}
	allocs := testing.AllocsPerRun(100, func() { buf = s.AppendSeries(buf[:0], k, string(Waiting), at(0)) })
	if allocs != 0 {
		t.Fatalf("AppendSeries into a big enough buffer allocated %v times", allocs)
	}
}

// An endpoint whose scrape carries no numbers (Ollama: loaded models only)
// shows its log's stats instead, keeping the scrape's facts; a scrape with
// numbers keeps precedence over the log.
func TestScrapeWithoutNumbersYieldsToTheLog(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "tiny:latest"}
	for i := 0; i < 3; i++ {
		sc := NewSample("http://e", "tiny:latest", at(i*10), FromScrape)
		sc.Info["size_vram"] = "0"
		s.Add(sc)
		lg := NewSample("http://e", "", at(i*10), FromLog) // log samples carry no model name
		lg.Counters[Requests] = float64(20 * i)
		s.Add(lg)
	}
	st := s.State(k, time.Minute)
	if st.Source != FromLog || !st.RequestsPS.OK || st.RequestsPS.V != 2 || st.Info["size_vram"] != "0" {
		t.Fatalf("source %v requests/s %v info %v", st.Source, st.RequestsPS, st.Info)
	}
	if pts := s.AppendSeries(nil, k, SeriesRequestsPS, at(0)); len(pts) == 0 {
		t.Fatal("the sparkline does not follow the log")
	}

	sc := NewSample("http://e", "tiny:latest", at(40), FromScrape)
	sc.Gauges[Running] = 3
	s.Add(sc)
	if st := s.State(k, time.Minute); st.Source != FromScrape || st.Running != Some(3) {
		t.Fatalf("a scrape with numbers must win: source %v running %v", st.Source, st.Running)
	}
}

// Issue 14 item 5: an idle window has no latency; the engine's own totals
// since it started are offered beside it, marked SinceStart, never as the
// window's numbers.
func TestIdleWindowFallsBackToSinceStart(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	bounds := []float64{0.1, 0.5, 1, inf}
	for _, sec := range []int{0, 60, 120} { // nothing new after the first scrape
		sm := sample(sec)
		sm.Latencies[TTFT] = hist(bounds, []float64{50, 90, 100, 100}, 20)
		s.Add(sm)
	}
	st := s.State(k, time.Minute)
	if d := st.Latency[TTFT]; d.Count != 0 || d.Mean.OK || d.SinceStart {
		t.Fatalf("window = %+v, want no observations", d)
	}
	ss, ok := st.SinceStart[TTFT]
	if !ok || !ss.SinceStart || ss.Count != 100 || math.Abs(ss.Mean.V-0.2) > 1e-9 || math.Abs(ss.P50.V-0.1) > 1e-9 {
		t.Fatalf("since start = %+v (ok %v), want 100 obs, mean 0.2, p50 0.1", ss, ok)
	}
	// A window with observations offers no fallback.
	sm := sample(180)
	sm.Latencies[TTFT] = hist(bounds, []float64{60, 100, 110, 110}, 22)
	s.Add(sm)
	if st := s.State(k, time.Minute); st.SinceStart != nil || st.Latency[TTFT].Count != 10 {
		t.Fatalf("busy window: since start %+v, window %+v", st.SinceStart, st.Latency[TTFT])
	}
}

// Issue 31 item 12: every TTFT since start past the highest finite bucket
// (30 s; mean 213 654 ms) read "p50 = p99 = 30000 ms". Those percentiles
// are only "> 30 s": the Dist says so (Past, Above) and the JSON has null
// beside above_ms 30000. A p50 inside the buckets stays a value.
func TestPercentilePastLastFiniteBucketIsAFloor(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	bounds := []float64{1, 5, 10, 30, inf}
	for _, sec := range []int{0, 60, 120} {
		sm := sample(sec)
		sm.Latencies[TTFT] = hist(bounds, []float64{0, 0, 0, 0, 38}, 38*213.654)
		sm.Latencies[E2E] = hist(bounds, []float64{10, 60, 90, 95, 100}, 900)
		s.Add(sm)
	}
	ss := s.State(k, time.Minute).SinceStart[TTFT]
	if !ss.Past(0.5) || !ss.Past(0.99) || ss.Above != Some(30) {
		t.Fatalf("since start = %+v: p50 and p99 must be past the 30 s bucket", ss)
	}
	j := DistMS(ss)
	if j.P50.OK || j.P99.OK || j.AboveMS != Some(30000) || math.Abs(j.Mean.V-213654) > 1e-6 {
		t.Errorf("json = %+v, want p50/p99 null, above_ms 30000, mean 213654", j)
	}
	e2e := DistMS(s.State(k, time.Minute).SinceStart[E2E])
	if !e2e.P50.OK || e2e.P99.OK || e2e.AboveMS != Some(30000) {
		t.Errorf("e2e json = %+v, want p50 a value, p99 null past 30000", e2e)
	}
}

// Issue 31 item 13: since_start's token distributions were token counts
// ×1000 under "prompt_len_ms"; they are in tokens, under "_tokens".
func TestSinceStartTokenCountsAreTokens(t *testing.T) {
	st := State{SinceStart: map[Latency]Dist{
		PromptLen: {P50: Some(1024), Mean: Some(1000), Count: 8, Exposed: true, Estimate: true, SinceStart: true},
		TTFT:      {Mean: Some(0.25), Count: 8, Exposed: true, SinceStart: true},
	}}
	m := MetricsOf(st)
	if _, ok := m.SinceStart["prompt_len_ms"]; ok {
		t.Errorf("since_start has prompt_len_ms: %v", m.SinceStart)
	}
	if d := m.SinceStart["prompt_len_tokens"]; d.P50 != Some(1024) || d.Mean != Some(1000) {
		t.Errorf("prompt_len_tokens = %+v, want p50 1024, mean 1000 tokens", d)
	}
	if d := m.SinceStart["ttft_ms"]; d.Mean != Some(250) {
		t.Errorf("ttft_ms = %+v", d)
	}
}

// Issue 31 item 14: JSON numbers kept 6 significant digits, integers too
// (ITL count 7 400 760 for 7 400 757; memory 85 899 300 000 for
// 85 899 345 920). Whole numbers are exact; fractions keep the whole part.
func TestJSONNumbersKeepTheirDigits(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{7400757, "7400757"}, {85899345920, "85899345920"}, {0.123456789, "0.123457"},
		{213654.3219, "213654.322"}, {12.5, "12.5"}, {-3, "-3"}, {0, "0"},
	} {
		b, err := json.Marshal(Some(c.v))
		if err != nil || string(b) != c.want {
			t.Errorf("%v → %s (%v), want %s", c.v, b, err, c.want)
		}
	}
}
