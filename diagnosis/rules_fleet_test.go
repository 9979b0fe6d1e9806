package diagnosis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// replica's window generated tokens in proportion to its batch, as a
// replica that held it for the window would.
func replica(u string, running, waiting float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.State.Key.Endpoint = u, u
		e.State.Running, e.State.Waiting = model.Some(running), model.Some(waiting)
		e.State.GenTPS = model.Some(25 * math.Max(running, 0.2))
	})
}

// slowReplica is a replica with TTFT p90 ttft seconds.
func slowReplica(u string, running, ttft float64) Endpoint {
	e := replica(u, running, 0)
	e.State.Latency[model.TTFT] = dist(ttft*0.8, ttft, ttft*1.2, ttft*0.85)
	return e
}

func TestRoutingSkew(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "one replica loaded, the other idle", in: input(replica("http://a", 30, 10), replica("http://b", 4, 0)), want: "routing_skew",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "http://a" || !hasEvidence(f, "http://a: running+waiting 40; http://b: 4") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "balanced", in: input(replica("http://a", 30, 0), replica("http://b", 28, 0)), none: "routing_skew"},
		{name: "ratio high but tiny absolute", in: input(replica("http://a", 3, 0), replica("http://b", 0, 0)), none: "routing_skew"},
		{name: "same load, one replica three times as slow", in: input(slowReplica("http://a", 20, 0.9), slowReplica("http://b", 19, 0.3)), want: "routing_skew",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "http://a" || !strings.HasPrefix(f.Title, "TTFT skewed across 2 replicas") ||
					!hasEvidence(f, "TTFT p90≈900 ms on http://a vs 300 ms on http://b") || !hasEvidence(f, "running+waiting 20 vs 19") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "latency ratio high but tiny absolute", in: input(slowReplica("http://a", 20, 0.04), slowReplica("http://b", 20, 0.015)), none: "routing_skew"},
		{name: "latency within the ratio", in: input(slowReplica("http://a", 20, 0.5), slowReplica("http://b", 20, 0.3)), none: "routing_skew"},
		{name: "ITL skew", in: input(func() Endpoint {
			e := slowReplica("http://a", 20, 0.3)
			e.State.Latency[model.ITL] = dist(0.04, 0.06, 0.08, 0.045)
			return e
		}(), func() Endpoint {
			e := slowReplica("http://b", 20, 0.3)
			e.State.Latency[model.ITL] = dist(0.015, 0.02, 0.03, 0.016)
			return e
		}()), want: "routing_skew",
			check: func(t *testing.T, f *Finding) {
				if f.Endpoint != "http://a" || !hasEvidence(f, "ITL p90≈60 ms on http://a vs 20 ms on http://b") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "different models are not replicas", in: input(replica("http://a", 30, 10), func() Endpoint {
			e := replica("http://b", 1, 0)
			e.State.Key.Model = "other"
			return e
		}()), none: "routing_skew"},
	})
}

func TestRegressionThroughDiagnoser(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	before := ep(func(e *Endpoint) {
		e.State.Latency[model.TTFT] = dist(0.08, 0.1, 0.15, 0.09)
		e.State.Latency[model.ITL] = dist(0.015, 0.02, 0.03, 0.016)
	})
	for i := 0; i < 5; i++ {
		x := before
		x.State.Time = t0.Add(time.Duration(i) * time.Second)
		d.Update(Input{Time: x.State.Time, Endpoints: []Endpoint{x}})
	}
	restart := t0.Add(10 * time.Second)
	after := ep(func(e *Endpoint) {
		e.Identity.Version = "0.12.0"
		e.State.Info["block_size"] = "32"
		e.State.Restarts = []time.Time{restart}
		e.State.Latency[model.ITL] = func() model.Dist { x := dist(0.03, 0.04, 0.045, 0.031); x.Window = 50 * time.Second; return x }()
		e.State.Latency[model.TTFT] = func() model.Dist { x := dist(0.1, 0.15, 0.18, 0.11); x.Window = 50 * time.Second; return x }()
	})
	now := restart.Add(time.Minute)
	rep := d.Update(Input{Time: now, Endpoints: []Endpoint{after}})
	f := byID(rep, "release_regression")
	if f == nil {
		t.Fatalf("no regression finding: %v", ids(rep.Findings))
	}
	if f.Severity != model.SevWarn || !hasEvidence(f, "version 0.11.0 → 0.12.0") || !hasEvidence(f, "block_size 16 → 32") ||
		!hasEvidence(f, "ITL p50≈30 ms after vs 15 ms before (×2.00)") {
		t.Fatalf("%+v", f.Evidence)
	}
}

func TestRegressionNeedsSimilarLoadAndCleanWindow(t *testing.T) {
	base := &Baseline{Version: "0.11.0", Model: "m", Running: model.Some(8), TTFT: model.Some(0.05), ITL: model.Some(0.015), Info: ep(nil).State.Info}
	mk := func(running float64, window time.Duration) Input {
		return input(ep(func(e *Endpoint) {
			e.Before = base
			e.State.Restarts = []time.Time{t0.Add(-time.Minute)}
			e.State.Running = model.Some(running)
			x := dist(0.04, 0.05, 0.06, 0.04)
			x.Window = window
			e.State.Latency[model.ITL] = x
		}))
	}
	if byID(Evaluate(mk(8, 50*time.Second), DefaultConfig()), "release_regression") == nil {
		t.Error("similar load, clean window: want finding")
	}
	if byID(Evaluate(mk(30, 50*time.Second), DefaultConfig()), "release_regression") != nil {
		t.Error("load 30 vs 8 is not comparable")
	}
	if byID(Evaluate(mk(8, 2*time.Minute), DefaultConfig()), "release_regression") != nil {
		t.Error("window spans the restart: not comparable")
	}
}

// Two restarts with the same version, model and cache config, and the same
// latency, raise no regression finding, whatever the start times (QA #3:
// process_start_time_seconds was diffed as configuration).
func TestRestartsWithIdenticalConfigAreNoRegression(t *testing.T) {
	d := NewDiagnoser(DefaultConfig())
	run := func(started, restart time.Time, from, to time.Duration) Report {
		var rep Report
		for s := from; s <= to; s += time.Second {
			now := t0.Add(s)
			x := ep(func(e *Endpoint) {
				e.State.Time = now
				e.State.Info["kv_cache_size_tokens"] = "457904"
				if !restart.IsZero() {
					e.State.Restarts = []time.Time{restart}
					e.State.Latency[model.ITL] = func() model.Dist { x := dist(0.015, 0.02, 0.03, 0.016); x.Window = now.Sub(restart); return x }()
					e.State.Latency[model.TTFT] = func() model.Dist { x := dist(0.05, 0.08, 0.1, 0.06); x.Window = now.Sub(restart); return x }()
				}
			})
			x.State.Started = started // the engine's start: not configuration
			rep = d.Update(Input{Time: now, Endpoints: []Endpoint{x}})
			if f := byID(rep, "release_regression"); f != nil {
				t.Fatalf("at %v: %s %+v", s, f.Title, f.Evidence)
			}
		}
		return rep
	}
	first := t0.Add(-time.Hour)
	run(first, time.Time{}, 0, 30*time.Second)
	r1 := t0.Add(40 * time.Second)
	run(r1.Add(-12*time.Second), r1, 41*time.Second, 2*time.Minute)
	r2 := t0.Add(3 * time.Minute)
	run(r2.Add(-12*time.Second), r2, 3*time.Minute+time.Second, 5*time.Minute)
	for _, f := range d.History() {
		if f.ID == "release_regression" {
			t.Fatalf("in history: %+v", f)
		}
	}
	// Volatile labels (an Ollama expires_at, a start time in Info) are no
	// configuration either; a real change still is.
	a := map[string]string{"block_size": "16", "expires_at": "2026-11-22T05:00:00Z", "process_start_time_seconds": "1795325819.63"}
	b := map[string]string{"block_size": "16", "expires_at": "2026-11-22T05:05:00Z", "process_start_time_seconds": "1795325891.63"}
	if got := infoDiff(a, b); len(got) != 0 {
		t.Errorf("volatile keys diffed: %v", got)
	}
	b["block_size"] = "32"
	if got := infoDiff(a, b); len(got) != 1 || got[0] != "block_size 16 → 32" {
		t.Errorf("real change: %v", got)
	}
}

// Issue 31, item 6: the same benchmark against --max-num-seqs 8 took TTFT
// p99 from 492 ms to 9.76 s and output tok/s down 77 %; finished
// requests/s fell with the capacity (7.2 → 1.7), so the verdict said "load
// differs … not comparable". The load offered (arrivals: finished plus
// the queue's growth) was the same: a capacity regression, compared.
func TestRunsComparedAtTheLoadOffered(t *testing.T) {
	before := model.Run{N: 1, Config: map[string]string{"args.max_num_seqs": "256"}, Summary: model.RunSummary{ServedS: 60,
		RequestsPS: model.Some(7.2), OfferedPS: model.Some(7.2), TTFTp99ms: model.Some(492), GenTPS: model.Some(1840)}}
	after := model.Run{N: 2, Config: map[string]string{"args.max_num_seqs": "8"}, Summary: model.RunSummary{ServedS: 60,
		RequestsPS: model.Some(1.66), OfferedPS: model.Some(7.1), TTFTp99ms: model.Some(9760), GenTPS: model.Some(423)}}
	c := CompareRuns(before, after, DefaultConfig())
	if !c.Similar || !c.Offered {
		t.Fatalf("same offered load judged not comparable: %+v", c)
	}
	for _, want := range []string{"args.max_num_seqs 256 → 8", "TTFT p99 +1884 %", "output tok/s −77 %", "at 7.1 req/s offered"} {
		if !strings.Contains(c.Verdict, want) {
			t.Errorf("verdict %q lacks %q", c.Verdict, want)
		}
	}
	// The same arrivals with prompts four times as long are not the same
	// load (the demo's long-prompts segment read "latency regressed").
	b2, a2 := before, after
	b2.Summary.PromptTPS, a2.Summary.PromptTPS = model.Some(7.2*500), model.Some(1.66*2000)
	if c := CompareRuns(b2, a2, DefaultConfig()); c.Similar {
		t.Errorf("500- vs 2000-token prompts judged the same load: %+v", c)
	}
	// Without the arrivals, finished requests/s is all there is: then the
	// loads do differ, and the verdict says so.
	before.Summary.OfferedPS, after.Summary.OfferedPS = model.None, model.None
	if c := CompareRuns(before, after, DefaultConfig()); c.Similar || !strings.Contains(c.Verdict, "load differs") {
		t.Errorf("without arrivals: %+v", c)
	}
}

// Issue 26: a prefill instance and a decode instance of one model do
// different work: a queue on the prefill side against an idle-looking
// decode side is not routing skew between replicas. Two prefill
// instances are still compared.
func TestPrefillAndDecodeAreNotReplicas(t *testing.T) {
	role := func(e Endpoint, r model.PDRole) Endpoint { e.Identity.Role = r; return e }
	runCases(t, []ruleCase{
		{name: "prefill vs decode", in: input(role(replica("http://p", 30, 10), model.RolePrefill), role(replica("http://d", 4, 0), model.RoleDecode)), none: "routing_skew"},
		{name: "two prefill", in: input(role(replica("http://p1", 30, 10), model.RolePrefill), role(replica("http://p2", 4, 0), model.RolePrefill)), want: "routing_skew",
			check: func(t *testing.T, f *Finding) {
				if !strings.Contains(f.Title, "m (prefill)") {
					t.Errorf("title %q does not name the pool", f.Title)
				}
			}},
		{name: "role from the command line", in: input(role(replica("http://p", 30, 10), model.RolePrefill), func() Endpoint {
			e := replica("http://d", 4, 0)
			e.Runs = []model.Run{{Config: map[string]string{"cmdline": `vllm serve m --kv-transfer-config {"kv_connector":"NixlConnector","kv_role":"kv_consumer"}`}}}
			return e
		}()), none: "routing_skew"},
	})
}

// A balanced pool's instant gauges churn: one replica reads twice another's
// running for a refresh while over the window both generated the same. Not
// skew (a healthy routed fleet raised routing_skew at 196 s before).
func TestSkewNeedsTheWindowToAgree(t *testing.T) {
	a, b := replica("http://a", 14, 0), replica("http://b", 6, 0)
	b.State.GenTPS = a.State.GenTPS
	runCases(t, []ruleCase{{name: "instant gap, even window", in: input(a, b), none: "routing_skew"}})
}

// A real llama-server restarted with another -np: `r` compared the loaded
// run with the new one 8 s old and idle and said "output tok/s −100 %
// (load unknown)". A run that generated nothing is not compared.
func TestRunsNotComparedWithAnIdleRun(t *testing.T) {
	before := model.Run{N: 1, Config: map[string]string{"cmdline": "-np 4"}, Summary: model.RunSummary{ServedS: 197,
		TPOTp99ms: model.Some(24), GenTPS: model.Some(67.7)}}
	after := model.Run{N: 2, Config: map[string]string{"cmdline": "-np 2"}, Summary: model.RunSummary{ServedS: 8, GenTPS: model.Some(0)}}
	c := CompareRuns(before, after, DefaultConfig())
	if strings.Contains(c.Verdict, "−100 %") || !strings.Contains(c.Verdict, "not comparable: run 2 generated no tokens") {
		t.Fatalf("verdict %q", c.Verdict)
	}
	// Once it serves, it is compared.
	after.Summary.GenTPS = model.Some(60)
	if c := CompareRuns(before, after, DefaultConfig()); strings.Contains(c.Verdict, "not comparable") || !strings.Contains(c.Verdict, "output tok/s") {
		t.Fatalf("serving: verdict %q", c.Verdict)
	}
}
