package diagnosis

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// drive feeds the Diagnoser one endpoint per second for n seconds, KV usage
// from kv(i), and records when kv_full opens and closes.
func drive(d *Diagnoser, start time.Time, n int, kv func(i int) float64) (opens, closes []time.Time) {
	wasOpen := false
	for i := 0; i < n; i++ {
		now := start.Add(time.Duration(i) * time.Second)
		e := ep(func(e *Endpoint) { e.State.KVUsage = model.Some(kv(i)) })
		e.State.Time = now
		rep := d.Update(Input{Time: now, Endpoints: []Endpoint{e}})
		open := byID(rep, "kv_full") != nil
		if open && !wasOpen {
			opens = append(opens, now)
		}
		if !open && wasOpen {
			closes = append(closes, now)
		}
		wasOpen = open
	}
	return opens, closes
}

func TestHysteresisNoisySignalAtThreshold(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	rng := rand.New(rand.NewPCG(7, 7))
	// 10 minutes hovering around 95 %: each second a coin flip between just
	// above and just below, never more than 10 s below in a row; then 3
	// minutes clearly fine.
	below := 0
	var firstTrue, lastTrue time.Time
	noisy := func(i int) float64 {
		v := 0.5
		switch {
		case i >= 600:
		case rng.IntN(2) == 0 && below < 10:
			below++
			v = 0.95 - 0.03*rng.Float64() - 0.001
		default:
			below = 0
			v = 0.95 + 0.03*rng.Float64()
		}
		if v >= 0.95 {
			lastTrue = t0.Add(time.Duration(i) * time.Second)
			if firstTrue.IsZero() {
				firstTrue = lastTrue
			}
		}
		return v
	}
	opens, closes := drive(d, t0, 780, noisy)
	if len(opens) != 1 || len(closes) != 1 {
		t.Fatalf("flapped: opens %v closes %v", opens, closes)
	}
	// It opens on the first sample over the threshold once 5 m have passed.
	if got := opens[0].Sub(firstTrue); got < 5*time.Minute || got > 5*time.Minute+10*time.Second {
		t.Errorf("opened %v after the condition first held (%v), want 5m (KV rule's hold)", got, firstTrue)
	}
	if got := closes[0].Sub(lastTrue); got != time.Minute {
		t.Errorf("closed %v after the condition last held, want 1m", got)
	}
	h := d.History()
	if len(h) != 1 || !h[0].Opened.Equal(opens[0]) || !h[0].Closed.Equal(closes[0]) || h[0].Active() {
		t.Fatalf("history %+v", h)
	}
}

func TestHysteresisBriefSpikesNeverOpen(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	// Mostly fine with a 2 s spike every 20 s: each spike is alone (gap 18 s
	// > 15 s grace), so the 5-minute hold never completes.
	opens, _ := drive(d, t0, 900, func(i int) float64 {
		if i%20 < 2 {
			return 0.99
		}
		return 0.8
	})
	if len(opens) != 0 {
		t.Fatalf("opened at %v", opens)
	}
}

func TestHysteresisBoundaryHold(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	// Exactly 5 minutes of samples: opens on the sample at t0+5m, not before.
	opens, _ := drive(d, t0, 301, func(int) float64 { return 0.97 })
	if len(opens) != 1 || !opens[0].Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("opens %v", opens)
	}
	d2 := NewDiagnoser(DefaultConfig())
	if opens, _ := drive(d2, t0, 300, func(int) float64 { return 0.97 }); len(opens) != 0 {
		t.Fatalf("opened before the hold: %v", opens)
	}
}

func TestMaxHoldShortensHolds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxHold = 15 * time.Second
	d := NewDiagnoser(cfg)
	opens, _ := drive(d, t0, 20, func(int) float64 { return 0.97 })
	if len(opens) != 1 || !opens[0].Equal(t0.Add(15*time.Second)) {
		t.Fatalf("opens %v", opens)
	}
}

func TestOpenFindingCarriesHoldEvidenceAndLatestNumbers(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	drive(d, t0, 320, func(i int) float64 { return 0.96 + float64(i%2)*0.02 })
	f := d.Open()[0]
	if !hasEvidence(&f, "condition holding for") || !hasEvidence(&f, "(opens after 5 m)") {
		t.Fatalf("%+v", f.Evidence)
	}
	if !hasEvidence(&f, "KV usage 98 %") { // i = 319 is odd: 0.98
		t.Fatalf("not the newest numbers: %+v", f.Evidence)
	}
}

func TestRankCriticalFirstThenCategory(t *testing.T) {
	fs := []Finding{
		{ID: "b", Category: Behaviour, Severity: model.SevWarn},
		{ID: "q", Category: Queueing, Severity: model.SevWarn},
		{ID: "p", Category: Memory, Severity: model.SevCrit},
		{ID: "i", Category: Availability, Severity: model.SevInfo},
		{ID: "d", Category: Availability, Severity: model.SevCrit},
	}
	Rank(fs)
	got := ids(fs)
	want := []string{"d", "p", "q", "b", "i"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}

func TestAllClearSaysWhatWasChecked(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	in := input(ep(finishes(map[string]float64{"stop": 95, "length": 5})))
	in.GPU = gpuSnap(40*gb, 80*gb)
	in.LogsOn = true
	rep := d.Update(in)
	if len(rep.Findings) != 0 {
		t.Fatalf("healthy state has findings: %v", ids(rep.Findings))
	}
	if len(rep.Checked) < 15 {
		t.Fatalf("checked only %v", rep.Checked)
	}
	// Only benchmark, replicas, host readings and the behaviour probe are
	// absent, and what the weights, number-format and speculative-decoding
	// checks read: no load line, no model files, no compute capability, no
	// dtype, no speculation (an input missing is not checked, never
	// "checked"). A router's word is not missing on one plain engine: no
	// router is there to ask.
	if len(rep.Missing) != 8 {
		t.Fatalf("missing %v", rep.Missing)
	}
	for _, m := range rep.Missing {
		if strings.Contains(m, "router") {
			t.Errorf("a router's input listed as missing on one engine with no router: %q", m)
		}
	}
	for _, c := range rep.Checked {
		if strings.Contains(c, "weights") || strings.Contains(c, "number formats") || strings.Contains(c, "speculative") {
			t.Errorf("checked %q without its input", c)
		}
	}
}

func TestEmptyInputDoesNotPanic(t *testing.T) {
	rep := NewDiagnoser(DefaultConfig()).Update(Input{})
	if len(rep.Findings) != 0 || len(rep.Missing) == 0 {
		t.Fatalf("%+v", rep)
	}
}

func BenchmarkDiagnoserUpdate(b *testing.B) {
	d := NewDiagnoser(DefaultConfig())
	e := ep(pressured)
	in := Input{Endpoints: []Endpoint{e, replica("http://b", 4, 0)}, GPU: gpuSnap(79*gb, 80*gb), LogsOn: true}
	for i := 0; b.Loop(); i++ {
		in.Time = t0.Add(time.Duration(i) * time.Second)
		d.Update(in)
	}
}

func TestPendingShowsConditionsBeforeTheyOpen(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var rep Report
	for i := 0; i <= 60; i++ {
		e := ep(func(e *Endpoint) { e.State.KVUsage = model.Some(0.97) })
		rep = d.Update(Input{Time: t0.Add(time.Duration(i) * time.Second), Endpoints: []Endpoint{e}})
	}
	if len(rep.Findings) != 0 {
		t.Fatalf("opened early: %v", ids(rep.Findings))
	}
	if len(rep.Pending) != 1 || rep.Pending[0].ID != "kv_full" || rep.Pending[0].Held != time.Minute || rep.Pending[0].Hold != 5*time.Minute {
		t.Fatalf("pending %+v", rep.Pending)
	}
}

func TestClearingFindingSaysSo(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	drive(d, t0, 320, func(int) float64 { return 0.97 })
	e := ep(func(e *Endpoint) { e.State.KVUsage = model.Some(0.5) })
	rep := d.Update(Input{Time: t0.Add(340 * time.Second), Endpoints: []Endpoint{e}})
	f := byID(rep, "kv_full")
	if f == nil || !hasEvidence(f, "condition clear for 21 s (closes after 1 m)") || hasEvidence(f, "condition holding") {
		t.Fatalf("%+v", f)
	}
}

// A finding whose condition cleared ranks below one that holds now, even
// when it is the more severe: a backlog that drained a minute ago must not
// hide the TTFT breach building now.
func TestClearingFindingRanksBelowHoldingOnes(t *testing.T) {
	fs := []Finding{
		{ID: "queue_backlog", Severity: model.SevCrit, Category: Queueing, ClearSince: t0},
		{ID: "ttft_queueing", Severity: model.SevWarn, Category: Prefill},
	}
	Rank(fs)
	if fs[0].ID != "ttft_queueing" {
		t.Fatalf("a clearing finding ranks first: %v", ids(fs))
	}
}

// A finding whose condition is read directly (the endpoint answers again,
// /metrics parses, the engine serves) closes as soon as the scrape says so,
// not a minute later: "endpoint down" or "engine starting" on top of an
// engine that serves is wrong (issue 31, item 2). Back within the grace
// it reopens at once; back later it forms again.
func TestSettledConditionClosesAtOnce(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var rep Report
	step := func(i int, isDown bool) {
		now := t0.Add(time.Duration(i) * time.Second)
		e := ep(nil)
		if isDown {
			e = ep(down(model.ErrRefused, "connection refused"))
		}
		e.State.Time = now
		rep = d.Update(Input{Time: now, Endpoints: []Endpoint{e}})
	}
	for i := 0; i < 15; i++ {
		step(i, true)
	}
	if byID(rep, "endpoint_down") == nil {
		t.Fatalf("endpoint_down did not open: %v", ids(rep.Findings))
	}
	step(15, false)
	if f := byID(rep, "endpoint_down"); f != nil {
		t.Fatalf("endpoint_down still open once the endpoint answers: %+v", f)
	}
	h := d.History()
	if len(h) == 0 || h[0].ID != "endpoint_down" || !h[0].Closed.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("history %+v", h)
	}
	step(18, true) // back within the grace: the same outage, open again at once
	if byID(rep, "endpoint_down") == nil {
		t.Fatalf("a flap within the grace did not reopen: %v", ids(rep.Findings))
	}
	for i := 19; i < 60; i++ {
		step(i, false)
	}
	for i := 60; i < 66; i++ { // a new outage, 45 s later: it forms again
		step(i, true)
	}
	if byID(rep, "endpoint_down") != nil || len(rep.Pending) == 0 || rep.Pending[0].ID != "endpoint_down" {
		t.Fatalf("a new outage should be forming: open %v, pending %+v", ids(rep.Findings), rep.Pending)
	}
}

// A threshold condition that returns while its finding is still open
// (clearing) keeps the finding open, says it holds again, and counts from
// its return.
func TestConditionReturningWhileOpenCountsFromItsReturn(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var rep Report
	for i := 0; i < 400; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		kv := 0.97
		if i >= 320 && i < 350 { // full, clear for 30 s, full again
			kv = 0.5
		}
		e := ep(func(e *Endpoint) { e.State.KVUsage = model.Some(kv) })
		e.State.Time = now
		rep = d.Update(Input{Time: now, Endpoints: []Endpoint{e}})
	}
	f := byID(rep, "kv_full")
	if f == nil || !f.ClearSince.IsZero() {
		t.Fatalf("kv_full: %+v", f)
	}
	if !hasEvidence(f, "condition holding for 49 s") {
		t.Fatalf("evidence %+v", f.Evidence)
	}
}

// A rule that could not judge (no ITL or TPOT in the window, right after a
// start) is not listed as checked: its lack line says why, and "all is
// well" does not cover it.
func TestRuleLackingInputIsNotChecked(t *testing.T) {
	rep, _ := evaluate(input(ep(func(e *Endpoint) {
		delete(e.State.Latency, model.ITL)
		delete(e.State.Latency, model.TPOT)
	})), DefaultConfig())
	for _, c := range rep.Checked {
		if strings.HasPrefix(c, "ITL/TPOT p99") {
			t.Fatalf("checked %q while the ITL rule lacked its input; missing %v", c, rep.Missing)
		}
	}
	if !strings.Contains(strings.Join(rep.Missing, "\n"), "ITL/TPOT (not exposed or no tokens in the window)") {
		t.Fatalf("missing %v", rep.Missing)
	}
}

// Issue 31, item 2, the demo's metrics-broken segment: "metrics endpoint
// error: malformed" stayed on top up to 60 s after /metrics answered
// again. The scrape that parses closes it.
func TestMetricsErrorClosesWhenTheScrapeParses(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var rep Report
	for i := 0; i < 16; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		e := ep(nil)
		if i < 15 {
			e.Scrape.Err, e.Scrape.ErrKind = "metrics body is not Prometheus text (line 1: unexpected '<')", model.ErrMalformed
		}
		e.State.Time = now
		rep = d.Update(Input{Time: now, Endpoints: []Endpoint{e}})
		if i == 14 && byID(rep, "metrics_unavailable") == nil {
			t.Fatalf("malformed metrics did not open: %v", ids(rep.Findings))
		}
	}
	if f := byID(rep, "metrics_unavailable"); f != nil {
		t.Fatalf("still open once /metrics parses: %+v", f)
	}
}

// Issue 31, item 2: "engine starting" stayed on top after the engine
// served. The first scrape that finds it serving closes it.
func TestEngineStartingClosesWhenItServes(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	var rep Report
	for i := 0; i < 12; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		e := ep(nil)
		if i < 11 {
			e = ep(down(model.ErrRefused, "connection refused"))
			e.Life, e.LifeSince, e.LifeDetail = model.LifeStarting, t0, "process started"
		} else {
			e.Life = model.LifeServing
		}
		e.State.Time = now
		rep = d.Update(Input{Time: now, Endpoints: []Endpoint{e}})
		if i == 10 && byID(rep, "cold_start") == nil {
			t.Fatalf("no 'engine starting' while starting: %v", ids(rep.Findings))
		}
	}
	if f := byID(rep, "cold_start"); f != nil {
		t.Fatalf("'engine starting' still open once the engine serves: %+v", f)
	}
}

// Findings that close at the same Update enter the history in one order
// (by endpoint, then finding), not the order a map hands them out: a
// replay rebuilt from a checkpoint must keep the history the monitor kept.
func TestFindingsClosingTogetherKeepOneOrder(t *testing.T) {
	urls := []string{"http://e3:8000", "http://e0:8000", "http://e5:8000", "http://e1:8000", "http://e4:8000", "http://e2:8000"}
	for try := range 5 {
		d := NewDiagnoser(DefaultConfig())
		for i := range 600 { // 7 minutes over (kv_full holds 5), 3 under (it clears after 1)
			now := t0.Add(time.Duration(i) * time.Second)
			kv := 0.99
			if i >= 420 {
				kv = 0.5
			}
			var eps []Endpoint
			for _, u := range urls {
				e := ep(func(e *Endpoint) { e.State.KVUsage = model.Some(kv) })
				e.URL, e.Scrape.Endpoint, e.State.Key.Endpoint = u, u, u
				e.State.Time, e.Scrape.Time, e.LastOK = now, now, now
				eps = append(eps, e)
			}
			d.Update(Input{Time: now, Endpoints: eps})
		}
		var got []string
		for _, f := range d.closed.Slice() {
			if f.ID == "kv_full" {
				got = append(got, f.Endpoint)
			}
		}
		want := []string{"http://e0:8000", "http://e1:8000", "http://e2:8000", "http://e3:8000", "http://e4:8000", "http://e5:8000"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("try %d: kv_full closed in the order %v, want %v", try, got, want)
		}
	}
}

// The same for the findings an engine run's end closes (EndRun).
func TestFindingsAnEndedRunClosesKeepOneOrder(t *testing.T) {
	ids := []string{"ttft_queueing", "queue_backlog", "restarts", "kv_full", "cold_start", "gpu_lost"}
	for try := range 5 {
		d := NewDiagnoser(DefaultConfig())
		for _, id := range ids {
			d.track[trackKey{id, url}] = &tracker{open: true, f: Finding{ID: id, Endpoint: url, Opened: t0}}
		}
		d.EndRun(url, t0.Add(time.Minute), nil)
		var got []string
		for _, f := range d.closed.Slice() {
			got = append(got, f.ID)
		}
		if want := "cold_start gpu_lost kv_full queue_backlog restarts ttft_queueing"; strings.Join(got, " ") != want {
			t.Fatalf("try %d: closed in the order %v, want %s", try, got, want)
		}
	}
}
