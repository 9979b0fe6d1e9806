package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func replica(u string, running, waiting float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.URL, e.State.Key.Endpoint = u, u
		e.State.Running, e.State.Waiting = model.Some(running), model.Some(waiting)
	})
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
