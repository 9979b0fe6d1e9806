package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func TestPercentileMatchesNumpy(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	cases := []struct {
		v    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5}, // np.median
		{[]float64{1, 2, 3, 4}, 90, 3.7}, // np.percentile(…, 90)
		{ten, 99, 9.91},                  // np.percentile(range(1,11), 99)
		{ten, 95, 9.55},
		{ten, 0, 1},
		{ten, 100, 10},
		{[]float64{7}, 99, 7},
	}
	for _, c := range cases {
		if got := Percentile(c.v, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("p%v of %v = %v, want %v", c.p, c.v, got, c.want)
		}
	}
	s := summarize([]float64{0.004, 0.001, 0.003, 0.002})
	if math.Abs(s.Std.V-1.118033988749895) > 1e-9 || s.Median.V != 2.5 || s.Mean.V != 2.5 {
		t.Errorf("summary %+v (np.std is the population std)", s)
	}
	if s := summarize(nil); s.Mean.OK || s.P99.OK {
		t.Error("no values must be null, not 0")
	}
}

func rec(start time.Time, ttft time.Duration, gaps []time.Duration, out int) Record {
	r := Record{Start: start, TTFT: ttft, ITL: gaps, OK: true, Chunks: len(gaps) + 1,
		PromptTokens: 100, PromptFromUsage: true, OutputTokens: out, OutputFromUsage: true}
	r.E2EL = ttft
	for _, g := range gaps {
		r.E2EL += g
	}
	return r
}

func TestComputeDefinitions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	recs := []Record{
		// TTFT 100 ms, then 4 tokens 10 ms apart: TPOT = 40/4 = 10 ms.
		rec(t0, 100*ms, []time.Duration{10 * ms, 10 * ms, 10 * ms, 10 * ms}, 5),
		// TTFT 300 ms, 2 tokens 30 ms apart: TPOT 30 ms.
		rec(t0.Add(50*ms), 300*ms, []time.Duration{30 * ms}, 2),
		// A single-token answer has no TPOT.
		rec(t0.Add(2*time.Second), 50*ms, nil, 1),
		{Err: ErrHTTP, Status: 503, Detail: "HTTP 503: overloaded"},
		{Err: ErrRateLimited, Status: 429, RetryAfter: 3 * time.Second, Detail: "HTTP 429"},
		{Err: ErrCancelled},
	}
	m := Compute(recs, 2*time.Second, SLO{TTFT: 200 * ms, TPOT: 20 * ms})
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if m.Completed != 3 || m.Failed != 2 || m.Cancelled != 1 {
		t.Fatalf("completed/failed/cancelled = %d/%d/%d", m.Completed, m.Failed, m.Cancelled)
	}
	check("total_output_tokens", float64(m.TotalOutputTokens), 8)
	check("total_input_tokens", float64(m.TotalInputTokens), 300)
	check("request_throughput", m.RequestThroughput, 1.5)
	check("output_throughput", m.OutputThroughput, 4)
	check("total_token_throughput", m.TotalTokenThroughput, 154)
	// Requests 1 and 3 meet TTFT ≤ 200 ms and TPOT ≤ 20 ms (3 has TPOT 0).
	check("request_goodput", m.RequestGoodput.V, 1)
	check("mean_ttft_ms", m.MeanTTFT.V, 150)
	check("median_ttft_ms", m.MedianTTFT.V, 100)
	check("mean_tpot_ms", m.MeanTPOT.V, 20) // (10+30)/2: TPOT excludes the first token
	check("mean_itl_ms", m.MeanITL.V, 14)   // (4×10+30)/5
	check("p99_e2el_ms", m.P99E2EL.V, 330-0.02*(330-140))
	check("max_retry_after_s", m.MaxRetryAfterS.V, 3)
	if m.ErrorsByKind["http_503"] != 1 || m.ErrorsByKind["rate_limited"] != 1 || m.ErrorsByKind["cancelled"] != 1 {
		t.Errorf("errors by kind %v", m.ErrorsByKind)
	}
	if m.MaxConcurrent != 2 {
		t.Errorf("max_concurrent_requests %d, want 2 (the first two overlap)", m.MaxConcurrent)
	}
	// Chunks in the first second: 1+4 from request 1, 1+1 from request 2.
	check("max_output_tokens_per_s", m.MaxOutputTokensPerS, 7)

	none := Compute(recs[3:], time.Second, SLO{})
	if none.RequestGoodput.OK || none.MeanTTFT.OK || none.Completed != 0 {
		t.Errorf("all failed: goodput %v ttft %v", none.RequestGoodput, none.MeanTTFT)
	}
}

// The JSON must carry `vllm bench serve`'s names, with null for no data.
func TestJSONFieldNames(t *testing.T) {
	r := Result{Info: Info{RequestRate: Inf}, Metrics: Compute(nil, time.Second, SLO{})}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	names := []string{"duration", "completed", "failed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
		"max_output_tokens_per_s", "max_concurrent_requests", "max_concurrency", "request_rate", "burstiness",
		"model_id", "backend", "date", "num_prompts"}
	for _, metric := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std", "p90", "p95", "p99"} {
			names = append(names, stat+"_"+metric+"_ms")
		}
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			t.Errorf("missing %q", n)
		}
	}
	if m["request_rate"] != "inf" || m["mean_ttft_ms"] != nil || m["request_goodput"] != nil {
		t.Errorf("rate %v ttft %v goodput %v", m["request_rate"], m["mean_ttft_ms"], m["request_goodput"])
	}
	if strings.Contains(string(b), "api_key") {
		t.Error("a result must never carry the API key")
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || !back.RequestRate.IsInf() {
		t.Errorf("round trip: %v %v", err, back.RequestRate)
	}
}

func step(load, thr, ttft float64) Step {
	return Step{Load: load, Result: Result{Metrics: Metrics{OutputThroughput: thr, MedianTTFT: model.Some(ttft), Completed: 1}}}
}

func TestKneeAndSaturation(t *testing.T) {
	steps := []Step{step(1, 100, 20), step(2, 195, 21), step(4, 400, 23), step(8, 420, 60), step(16, 425, 150), step(32, 430, 320)}
	sw := Sweep{Steps: steps}
	sw.FindKnee()
	if sw.Knee != 2 {
		t.Errorf("knee %d (%s), want 4 streams", sw.Knee, sw.KneeRule)
	}
	if Saturated(steps[:4], nil) {
		t.Error("one flat step is not saturation yet")
	}
	if !Saturated(steps[:5], nil) {
		t.Error("TTFT ×2.6 then ×2.5 with flat throughput is saturation")
	}
	if Saturated(steps[:5], []float64{0, 0, 0, 5, 5}) {
		t.Error("a server queue that stopped climbing is not saturation")
	}
	// Linear scaling all the way: no knee within the loads tried (issue 14
	// item 13: the last step, still rising, was called the knee).
	lin := Sweep{Steps: []Step{step(1, 100, 20), step(2, 200, 20), step(4, 400, 21)}}
	lin.FindKnee()
	if lin.Knee != -1 || !strings.Contains(lin.KneeRule, "still rising at 4 streams") {
		t.Errorf("knee %d (%s)", lin.Knee, lin.KneeRule)
	}
	// Flattened: the lowest load reaching 90 % of the peak.
	flat := Sweep{Steps: []Step{step(1, 100, 20), step(2, 200, 20), step(4, 400, 21), step(8, 410, 22)}}
	if flat.FindKnee(); flat.Knee != 2 {
		t.Errorf("flat: knee %d (%s)", flat.Knee, flat.KneeRule)
	}
	// With SLOs: the highest load meeting them.
	yes, no := true, false
	slo := Sweep{Steps: []Step{step(1, 1, 1), step(2, 1, 1), step(4, 1, 1)}}
	slo.Steps[0].MeetsSLO, slo.Steps[1].MeetsSLO, slo.Steps[2].MeetsSLO = &yes, &yes, &no
	slo.FindKnee()
	if slo.Knee != 1 || !MissedSLOTwice(append(slo.Steps, Step{MeetsSLO: &no})) {
		t.Errorf("knee %d", slo.Knee)
	}
}

func TestTextShowsMissingAsDashes(t *testing.T) {
	r := Result{Info: Info{BaseURL: "http://h:8000", Endpoint: "/v1/chat/completions", ModelID: "m", RequestRate: Inf},
		Metrics: Compute([]Record{{Err: ErrConnect, Detail: "cannot connect: refused"}}, time.Second, SLO{})}
	r.Server = &model.MetricsJSON{TTFTms: model.DistJSON{P50: model.Some(12), Estimate: true}}
	out := Text(r)
	for _, want := range []string{"Mean TTFT (ms):                          --", "connect:", "cannot connect", "Server TTFT p50/p99≈ (ms):", "12.00 / --"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	sw := Sweep{Mode: "concurrency", Steps: []Step{step(1, 100, 20), step(2, 190, 22)}, Knee: 1, KneeRule: "x", Stopped: "cap"}
	if s := SweepText(sw); !strings.Contains(s, "knee (*): 2 streams") || !strings.Contains(s, "output tok/s") {
		t.Errorf("sweep text:\n%s", s)
	}
}

// Answer judgements are counted over successful requests only, and the
// text report shows them only when there are some.
func TestComputeCountsBadAnswers(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	ok := func(blank, echoed, rep bool) Record {
		return Record{Start: start, TTFT: time.Millisecond, E2EL: 2 * time.Millisecond, Chunks: 2, OutputTokens: 2, OK: true,
			Blank: blank, Echoed: echoed, Repetitive: rep}
	}
	failed := Record{Start: start, Err: ErrDisconnect, Echoed: true, Repetitive: true, Blank: true}
	recs := []Record{ok(false, false, false), ok(true, false, false), ok(false, true, true), ok(false, false, true), failed}
	m := Compute(recs, time.Second, SLO{})
	if m.BlankResponses != 1 || m.EchoedResponses != 1 || m.RepetitiveResponses != 2 {
		t.Fatalf("blank/echoed/repetitive = %d/%d/%d, want 1/1/2", m.BlankResponses, m.EchoedResponses, m.RepetitiveResponses)
	}
	res := Result{Metrics: m}
	res.IgnoreEOS = true
	if txt := Text(res); !strings.Contains(txt, "Echoing the prompt:") || !strings.Contains(txt, "text past the model's own end is forced") {
		t.Errorf("text report:\n%s", txt)
	}
	if txt := Text(Result{Metrics: Compute(recs[:1], time.Second, SLO{})}); strings.Contains(txt, "Answers") {
		t.Errorf("no bad answers, yet an Answers section:\n%s", txt)
	}
}

// A TTFT that doubles at low load by one engine step (a request arriving
// mid-step waits for it) is not queueing; the slot-bound jump past
// --max-num-seqs is. The steps are a real sweep of the simulator with
// --max-num-seqs 4 on a loaded machine, which once put the knee at 1 stream.
func TestKneeIgnoresOneStepWaits(t *testing.T) {
	withITL := func(s Step, itl float64) Step { s.Result.MedianITL = model.Some(itl); return s }
	steps := []Step{
		withITL(step(1, 131, 8.2), 7.6), withITL(step(2, 221, 16.5), 8.9), withITL(step(4, 458, 17.2), 8.7),
		withITL(step(8, 472, 213.1), 8.5), withITL(step(16, 449, 598.1), 8.9),
	}
	sw := Sweep{Steps: steps}
	sw.FindKnee()
	if sw.Knee != 2 {
		t.Errorf("knee %d (%s), want 4 streams", sw.Knee, sw.KneeRule)
	}
	if !Saturated(steps, nil) {
		t.Error("TTFT ×12 then ×2.8 at flat throughput is saturation")
	}
	if Saturated(steps[:3], nil) {
		t.Error("a one-step TTFT rise at 2 streams is not saturation")
	}
	// Without an ITL to size an engine step, the ratio alone decides.
	for i := range steps {
		steps[i].Result.MedianITL = model.Opt{}
	}
	// Without an ITL to size an engine step, the ratio alone marks 1→2
	// streams as queueing, but throughput rose 3.6× past 1 stream: that is
	// no knee, and the slot-bound jump at 8 is.
	sw = Sweep{Steps: steps}
	if sw.FindKnee(); sw.Knee != 2 {
		t.Errorf("without ITL: knee %d (%s), want 4 streams", sw.Knee, sw.KneeRule)
	}
}

// Finish reasons are counted over successful answers only, and the text
// report lists them.
func TestComputeCountsFinishReasons(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	ok := func(reason string) Record {
		return Record{Start: start, TTFT: time.Millisecond, E2EL: 2 * time.Millisecond, Chunks: 2, OutputTokens: 2, OK: true, FinishReason: reason}
	}
	recs := []Record{ok("length"), ok("length"), ok("stop"), ok(""), {Start: start, Err: ErrDisconnect, FinishReason: "abort"}}
	m := Compute(recs, time.Second, SLO{})
	if len(m.FinishReasons) != 2 || m.FinishReasons["length"] != 2 || m.FinishReasons["stop"] != 1 {
		t.Fatalf("finish reasons %v", m.FinishReasons)
	}
	r := Result{Info: Info{RequestRate: Inf}, Metrics: m}
	if out := Text(r); !strings.Contains(out, "Finish reasons:") || !strings.Contains(out, "length 2, stop 1") {
		t.Errorf("text:\n%s", out)
	}
}

// Issue 14 item 13: the reported sweep's table rose 1688 → 2659 → 4767
// output tok/s at 32/64/128 streams while the knee was put at 32 (TTFT
// jumped at 64); a cancelled sweep after 2 of 8 levels saved "knee": 1.
// Neither shows a knee, and the text says why.
func TestKneeOnlyWhereTheDataShowsOne(t *testing.T) {
	rising := Sweep{Mode: "concurrency", Stopped: "cap", Planned: 8, Steps: []Step{
		step(8, 520, 40), step(16, 950, 45), step(32, 1688, 52), step(64, 2659, 190), step(128, 4767, 420)}}
	rising.FindKnee()
	if rising.Knee != -1 || !strings.Contains(rising.KneeRule, "still rising at 128 streams") {
		t.Errorf("rising: knee %d (%s)", rising.Knee, rising.KneeRule)
	}
	if s := SweepText(rising); strings.Contains(s, "knee (*)") || !strings.Contains(s, "knee: none: output throughput still rising") {
		t.Errorf("text:\n%s", s)
	}
	cut := Sweep{Mode: "concurrency", Stopped: "cancelled", Planned: 8, Steps: []Step{step(1, 100, 20), step(2, 190, 21)}}
	cut.FindKnee()
	if cut.Knee != -1 || !strings.Contains(cut.KneeRule, "cut short (cancelled) after 2 of 8 levels") {
		t.Errorf("cancelled: knee %d (%s)", cut.Knee, cut.KneeRule)
	}
	b, _ := json.Marshal(cut)
	if !strings.Contains(string(b), `"knee":-1`) {
		t.Errorf("saved %s", b)
	}
	// With SLOs that every level met: no knee claimed.
	yes := true
	met := Sweep{Mode: "concurrency", Stopped: "cancelled", Planned: 8, Steps: []Step{step(1, 100, 20), step(2, 190, 21)}}
	met.Steps[0].MeetsSLO, met.Steps[1].MeetsSLO = &yes, &yes
	if met.FindKnee(); met.Knee != -1 || !strings.Contains(met.KneeRule, "every level up to 2 streams met the SLOs") {
		t.Errorf("all met: knee %d (%s)", met.Knee, met.KneeRule)
	}
}

// Issue 31 item 23: where the server's buckets give only a bound, bench
// prints it as the screen does ("<10ms"), not "-- / --"; past the highest
// bucket, "> bound".
func TestTextShowsServerBucketBounds(t *testing.T) {
	r := Result{Info: Info{BaseURL: "http://h:8000", Endpoint: "/v1/completions", ModelID: "m", RequestRate: Inf}}
	r.Server = &model.MetricsJSON{
		TTFTms:  model.DistJSON{P50: model.Some(4000), AboveMS: model.Some(30000), Estimate: true},
		Queuems: model.DistJSON{AllBelowMS: model.Some(10), Estimate: true},
		ITLms:   model.DistJSON{AllBelowMS: model.Some(10), Estimate: true},
	}
	out := Text(r)
	for _, want := range []string{"4000.00 / >30000.00", "Server queue time p50/p99 (ms):          <10.00 / <10.00", "Server ITL p50/p99≈ (ms):                <10.00 / <10.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// `llmtop bench` against llama-server printed "Server TPOT p50/p99 (ms):
// -- / --" and left the reader to guess: llama-server has no TTFT metric
// and its TPOT is a mean (seconds per predicted token). Each line says so.
func TestTextSaysWhyAServerLatencyIsMissing(t *testing.T) {
	r := Result{Info: Info{BaseURL: "http://h:8080", Endpoint: "/v1/chat/completions", ModelID: "m", RequestRate: Inf},
		Metrics: Compute([]Record{{Err: ErrConnect, Detail: "cannot connect: refused"}}, time.Second, SLO{}), ServerEngine: "llama.cpp"}
	r.Server = &model.MetricsJSON{TPOTms: model.DistJSON{Mean: model.Some(23.1), Count: model.Some(512)},
		ITLms: model.DistJSON{Count: model.Some(0)}, E2Ems: model.DistJSON{P50: model.Some(900), Count: model.Some(4)}}
	out := Text(r)
	for _, want := range []string{
		"Server TTFT p50/p99 (ms):                -- / -- (not reported by llama.cpp)",
		"Server TPOT p50/p99 (ms):                -- / -- (llama.cpp reports a mean only: 23.10 ms)",
		"Server ITL p50/p99 (ms):                 -- / -- (no request in the run's window)",
		"Server E2EL p50/p99 (ms):                900.00 / --\n",
		"Server queue time p50/p99 (ms):          -- / -- (not reported by llama.cpp)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	r.ServerEngine = ""
	if out := Text(r); !strings.Contains(out, "-- / -- (not reported by the server)") {
		t.Errorf("no engine known:\n%s", out)
	}
}

// The `b` view on a real llama-server with its log attached read "server
// TTFT: llama.cpp reports a mean only: 8.68s" and "server queue: llama.cpp
// reports a mean only: 8.08s": llama.cpp reports neither; both are
// llmtop's Little's-law estimates from the log. Its TPOT mean (seconds ÷
// tokens from its counters) is the engine's.
func TestServerWhyNamesLlmtopsEstimate(t *testing.T) {
	msFmt := func(o model.Opt) string { return ms(o) + " ms" }
	ttft := model.DistJSON{Mean: model.Some(8680), Count: model.Some(40),
		Approx: "mean queue wait (Little's law estimate) + mean prefill (from the log); no percentiles"}
	got := ServerWhy(ttft, "llama.cpp", msFmt)
	if strings.Contains(got, "llama.cpp reports") || !strings.Contains(got, "not reported by llama.cpp") || !strings.Contains(got, "llmtop's estimate") || !strings.Contains(got, "8680") {
		t.Errorf("TTFT: %q", got)
	}
	tpot := model.DistJSON{Mean: model.Some(23.1), Count: model.Some(400), Approx: "aggregate: generation seconds ÷ tokens generated"}
	if got := ServerWhy(tpot, "llama.cpp", msFmt); got != "llama.cpp reports a mean only: 23.10 ms" {
		t.Errorf("TPOT: %q", got)
	}
}
