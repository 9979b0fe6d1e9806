package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// spiky is ITL with a tail far above its median: decodes stall now and then.
func spiky(e *Endpoint) { e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03) }

// chunkedLine is the event the logs source raises for vLLM's start-up line
// "Chunked prefill is enabled with max_num_batched_tokens=N." at time at.
func chunkedLine(endpoint, n string, at time.Time) model.Event {
	return model.Event{Time: at, Endpoint: endpoint, Source: "log", Kind: kindChunkedPrefill, Severity: model.SevInfo, Category: "config",
		Title: "vLLM chunked prefill on: " + n + " tokens per step", Fields: map[string]string{"max_num_batched_tokens": n}}
}

// wantBudget checks the stall's advice is a smaller step budget, not
// turning chunked prefill on.
func wantBudget(change string) func(t *testing.T, f *Finding) {
	return func(t *testing.T, f *Finding) {
		t.Helper()
		if len(f.Actions) != 1 || f.Actions[0].Change != change || hasAction(f, "--enable-chunked-prefill") {
			t.Errorf("want only %q, got %+v", change, f.Actions)
		}
		if !hasEvidence(f, "max_num_batched_tokens=") {
			t.Errorf("evidence lacks the start-up line: %+v", f.Evidence)
		}
	}
}

func TestPrefillStallWithChunkedPrefillFromLog(t *testing.T) {
	hourAgo := t0.Add(-time.Hour) // past the events window: a start-up fact still holds
	runCases(t, []ruleCase{
		{name: "chunked on at 8192: halve the budget", in: withEvents(ep(spiky), chunkedLine(url, "8192", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 4096")},
		// Prompts shorter than half the budget are prefilled whole either
		// way: half of 8192 splits nothing when the p95 prompt is 1.8k.
		{name: "prompts shorter than half the budget: under them", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			d := dist(700, 1400, 2600, 800)
			d.P95 = model.Some(1804)
			e.State.Latency[model.PromptLen] = d
		}), chunkedLine(url, "8192", hourAgo)),
			want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
				wantBudget("--max-num-batched-tokens 768")(t, f)
				if !hasEvidence(f, "prompt length p95≈1804 tokens: a step budget of 8192 or 4096 prefills such a prompt whole") {
					t.Errorf("%+v", f.Evidence)
				}
				// The cap is not exposed: 768 may be under it (vLLM's
				// default is up to 1024), which vLLM refuses at start.
				if w := f.Actions[0].Why; !strings.Contains(w, "refuses a budget below --max-num-seqs, which is not exposed here and is up to 1024") {
					t.Errorf("why %q", w)
				}
			}},
		// With the batch history, the cap goes down with the budget to no
		// less than the peak batch seen (tune on the sim's lora-starved:
		// 512 alone was refused at start by the default cap of 1024).
		{name: "cap not exposed, batch peaked at 40: the cap goes down with the budget", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			e.Batch = []BatchPoint{{Running: 12, ITL: 0.02}, {Running: 40, ITL: 0.03}, {Running: 31, ITL: 0.025}}
		}), chunkedLine(url, "1024", hourAgo)),
			want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
				wantBudget("--max-num-batched-tokens 512 (with --max-num-seqs 512)")(t, f)
				if w := f.Actions[0].Why; !strings.Contains(w, "so it goes to 512 with it: the running batch peaked at 40 over the 3 refreshes seen") {
					t.Errorf("why %q", w)
				}
				if tr := f.Actions[0].TradeOff; !strings.Contains(tr, "no batch above 512 requests") {
					t.Errorf("trade-off %q", tr)
				}
			}},
		{name: "cap not exposed, batch peaked at 700: the cap and budget stay above it", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			e.Batch = []BatchPoint{{Running: 700, ITL: 0.03}}
		}), chunkedLine(url, "1024", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 768 (with --max-num-seqs 768)")},
		{name: "cap not exposed, batch peaked past the budget: nothing to lower", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			e.Batch = []BatchPoint{{Running: 1000, ITL: 0.03}}
		}), chunkedLine(url, "1024", hourAgo)),
			none: "itl_prefill_stall"},
		{name: "prompts longer than half the budget: half", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			d := dist(3000, 6000, 9000, 4000)
			d.P95 = model.Some(8000)
			e.State.Latency[model.PromptLen] = d
		}), chunkedLine(url, "8192", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 4096")},
		{name: "a log without an endpoint belongs to the only one watched", in: withEvents(ep(spiky), chunkedLine("", "2048", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 1024")},
		{name: "the newest start-up line wins", in: withEvents(ep(spiky), chunkedLine(url, "16384", hourAgo), chunkedLine(url, "4096", t0.Add(-time.Minute))),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 2048")},
		{name: "half of 1024 is the floor exactly", in: withEvents(ep(spiky), chunkedLine(url, "1024", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 512")},
		{name: "half of 800 is below the floor: 512", in: withEvents(ep(spiky), chunkedLine(url, "800", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 512")},
		{name: "not below the concurrency cap", in: withEvents(ep(func(e *Endpoint) { spiky(e); e.State.MaxRunning = model.Some(1536) }), chunkedLine(url, "2048", hourAgo)),
			want: "itl_prefill_stall", check: wantBudget("--max-num-batched-tokens 1536")},
		{name: "already at 512: not a prefill stall", in: withEvents(ep(func(e *Endpoint) { spiky(e); e.State.Running = model.Some(2) }), chunkedLine(url, "512", hourAgo)),
			want: "itl_bandwidth", none: "itl_prefill_stall"},
		{name: "cap at the budget leaves nothing to lower", in: withEvents(ep(func(e *Endpoint) {
			spiky(e)
			e.State.Running, e.State.MaxRunning = model.Some(2), model.Some(2048)
		}), chunkedLine(url, "2048", hourAgo)),
			want: "itl_bandwidth", none: "itl_prefill_stall"},
		{name: "another endpoint's line does not count", in: withEvents(ep(spiky), chunkedLine("http://127.0.0.1:9000", "8192", hourAgo)),
			want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-num-batched-tokens 2048") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "a line from the future (clock skew) does not count", in: withEvents(ep(spiky), chunkedLine(url, "8192", t0.Add(time.Minute))),
			want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-num-batched-tokens 2048") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "an unreadable budget does not count", in: withEvents(ep(spiky), chunkedLine(url, "", hourAgo)),
			want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-num-batched-tokens 2048") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "steady ITL within the SLO: no finding", in: withEvents(ep(nil), chunkedLine(url, "8192", hourAgo)),
			none: "itl_prefill_stall"},
	})
}

// The TUI hands the rules only the events of the last EventWindow; the
// Diagnoser keeps the start-up line so the advice does not fall back to
// "turn chunked prefill on" ten minutes after the engine started.
func TestDiagnoserKeepsStartupLinePastEventWindow(t *testing.T) {
	cfg := DefaultConfig()
	d := NewDiagnoser(cfg)
	started := t0
	line := chunkedLine(url, "8192", started)
	d.Update(Input{Time: started, Events: []model.Event{line}, LogsOn: true})
	later := started.Add(cfg.EventWindow + time.Hour)
	var f *Finding
	for i := 0; i <= int(cfg.Hold/time.Second)+1; i++ {
		now := later.Add(time.Duration(i) * time.Second)
		e := ep(spiky)
		e.State.Time = now
		rep := d.Update(Input{Time: now, Endpoints: []Endpoint{e}, LogsOn: true})
		f = byID(rep, "itl_prefill_stall")
	}
	if f == nil {
		t.Fatal("itl_prefill_stall did not open")
	}
	wantBudget("--max-num-batched-tokens 4096")(t, f)

	// Without the Diagnoser (nothing remembered) the same input gets the old advice.
	e := ep(spiky)
	if g := byID(Evaluate(Input{Time: later, Endpoints: []Endpoint{e}, LogsOn: true}, cfg), "itl_prefill_stall"); g == nil || !hasAction(g, "--max-num-batched-tokens 2048") {
		t.Fatalf("stateless evaluation: %+v", g)
	}
}

// keepFacts must not write into the caller's slice (the TUI reuses it).
func TestKeepFactsLeavesInputAlone(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	d.keepFacts([]model.Event{chunkedLine(url, "4096", t0)})
	other := model.Event{Time: t0.Add(time.Minute), Kind: "python_traceback"}
	evs := make([]model.Event, 1, 8)
	evs[0] = other
	got := d.keepFacts(evs)
	if len(got) != 2 || evs[0].Kind != "python_traceback" || evs[:2][1].Kind != "" {
		t.Fatalf("got %+v, input now %+v", got, evs[:2])
	}
	// Held again in the input: not added twice.
	if got := d.keepFacts([]model.Event{chunkedLine(url, "4096", t0)}); len(got) != 1 {
		t.Fatalf("fact doubled: %+v", got)
	}
}

// A restart that prints no chunked-prefill line (chunked prefill turned
// off) makes the older line stale: the advice goes back to turning it on.
// Restarts come from the counters (State.Restarts), seen after the new
// run's own start-up lines.
func TestStartupLineOfAnOlderRunIsStale(t *testing.T) {
	start := t0.Add(-time.Hour)
	r1 := start.Add(2 * time.Minute) // the counters reset: the run that printed the line is up
	cases := []struct {
		name     string
		seen     time.Time // when the endpoint was first scraped, if before the restarts
		restarts []time.Time
		lines    []model.Event
		want     string // the first action's change
	}{
		{"first seen running, then a start without the line", start.Add(time.Minute), []time.Time{start.Add(5 * time.Minute)},
			[]model.Event{chunkedLine(url, "8192", start)}, "--max-num-batched-tokens 2048 without --no-enable-chunked-prefill"},
		{"first seen running, no restart since", start.Add(time.Minute), nil,
			[]model.Event{chunkedLine(url, "8192", start)}, "--max-num-batched-tokens 4096"},
		{"the line's own run", time.Time{}, []time.Time{r1}, []model.Event{chunkedLine(url, "8192", start)},
			"--max-num-batched-tokens 4096"},
		{"a later start without the line", time.Time{}, []time.Time{r1, r1.Add(10 * time.Minute)}, []model.Event{chunkedLine(url, "8192", start)},
			"--max-num-batched-tokens 2048 without --no-enable-chunked-prefill"},
		{"a later start without the line, within the events window", time.Time{}, []time.Time{r1, r1.Add(time.Minute)}, []model.Event{chunkedLine(url, "8192", start)},
			"--max-num-batched-tokens 2048 without --no-enable-chunked-prefill"},
		{"a later start that printed it again", time.Time{}, []time.Time{r1, r1.Add(10 * time.Minute)},
			[]model.Event{chunkedLine(url, "8192", start), chunkedLine(url, "2048", r1.Add(9*time.Minute))},
			"--max-num-batched-tokens 1024"},
		{"two resets 10 s apart are one start", time.Time{}, []time.Time{r1, r1.Add(10 * time.Second)}, []model.Event{chunkedLine(url, "8192", start)},
			"--max-num-batched-tokens 4096"},
		{"an unattributed line of an older run", time.Time{}, []time.Time{r1, r1.Add(10 * time.Minute)}, []model.Event{chunkedLine("", "8192", start)},
			"--max-num-batched-tokens 2048 without --no-enable-chunked-prefill"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Hold = 0
			d := NewDiagnoser(cfg)
			// The lines arrive as they are printed; later updates no longer hold them.
			d.Update(Input{Time: start, Events: c.lines, LogsOn: true})
			var rep Report
			if !c.seen.IsZero() {
				e := ep(spiky)
				e.State.Time = c.seen
				rep = d.Update(Input{Time: c.seen, Endpoints: []Endpoint{e}, Events: c.lines, LogsOn: true})
			}
			for i := range c.restarts {
				now := c.restarts[i].Add(time.Second)
				e := ep(spiky)
				e.State.Time, e.State.Restarts = now, c.restarts[:i+1]
				var evs []model.Event
				for _, x := range c.lines {
					if x.Time.Before(now) && now.Sub(x.Time) < cfg.EventWindow {
						evs = append(evs, x)
					}
				}
				rep = d.Update(Input{Time: now, Endpoints: []Endpoint{e}, Events: evs, LogsOn: true})
			}
			f := byID(rep, "itl_prefill_stall")
			if f == nil || len(f.Actions) == 0 || f.Actions[0].Change != c.want {
				t.Fatalf("want %q, got %+v", c.want, f)
			}
		})
	}
}
