package diagnosis

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// dpFull is a vLLM server with two data-parallel engines: engine 0 nearly
// idle, engine 1 at 99.9 % KV and preempting (the case: the mean,
// 50 %, hid it). The adapter gives the fullest engine's KV as the
// endpoint's (sources/engine TestVLLMDataParallel).
func dpFull(e *Endpoint) {
	e.State.Engines = []model.EngineShare{
		{ID: "0", Running: model.Some(2), Waiting: model.Some(0), KVUsage: model.Some(0.001)},
		{ID: "1", Running: model.Some(40), Waiting: model.Some(12), KVUsage: model.Some(0.999)},
	}
	e.State.KVUsage = model.Some(0.999)
	e.State.Running, e.State.Waiting = model.Some(42), model.Some(12)
	e.State.PreemptionsPS, e.State.Preemptions = model.Some(2), model.Some(120)
	e.State.Info["engines"] = "2"
}

// Issue 14 item 1: per-engine evidence, advice per engine, and a
// data-parallel size that knows the server already runs two.
func TestDataParallelKVFullestEngine(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "kv full cites engine 1", in: input(ep(dpFull)), want: "kv_full", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "on engine 1") || !hasEvidence(f, "engine 0: KV 0.1 %, running 2") || !hasEvidence(f, "engine 1: KV 100 %, running 40, waiting 12") {
				t.Errorf("evidence %+v", f.Evidence)
			}
			// 40 running hold 99.9 %: 36 fit in 90 % of engine 1's pool
			// (the endpoint's 42 over the fullest KV would say 37).
			if !hasAction(f, "--max-num-seqs 36") {
				t.Errorf("actions %+v", f.Actions)
			}
		}},
		{name: "preemption evidence per engine", in: input(ep(dpFull)), want: "kv_preemption", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "engine 1: KV") {
				t.Errorf("evidence %+v", f.Evidence)
			}
		}},
	})
	// The scale-out advice names the size after the one running.
	a := replicas(ep(dpFull))
	if !strings.Contains(a.Change, "--data-parallel-size 3, from the 2 engines it runs now") {
		t.Errorf("replicas: %q", a.Change)
	}
	if a := replicas(ep(nil)); !strings.Contains(a.Change, "--data-parallel-size 2 (") {
		t.Errorf("one engine: %q", a.Change)
	}
}

// Issue 14 item 10: a queue at the cap with per-token latency unknown gets
// no bigger cap (the issue's --max-running-requests 324 on a server whose
// lifetime TPOT averaged 117 ms).
func TestQueueAtCapITLUnknownNoRaise(t *testing.T) {
	sg := func(e *Endpoint) {
		e.Identity.Engine = model.SGLang
		e.State.Info = map[string]string{"max_running_requests": "162"}
		e.State.Running, e.State.Waiting, e.State.KVUsage = model.Some(162), model.Some(600), model.Some(0.4)
		e.State.Latency = map[model.Latency]model.Dist{model.TTFT: dist(20, 40, 79, 25), model.ITL: {Exposed: true}}
		e.State.SinceStart = map[model.Latency]model.Dist{model.TPOT: {Mean: model.Some(0.117), Count: 5000, Exposed: true, SinceStart: true}}
	}
	runCases(t, []ruleCase{{name: "SGLang at cap, ITL no data", in: input(ep(sg)), want: "queue_backlog", check: func(t *testing.T, f *Finding) {
		for _, a := range f.Actions {
			if strings.Contains(a.Change, "--max-running-requests 3") {
				t.Errorf("raises the cap with ITL unknown: %+v", a)
			}
		}
		if !strings.Contains(f.Cause, "not known") {
			t.Errorf("cause %q", f.Cause)
		}
		// Issue 14 item 5: the lifetime figure, labelled, never the window's.
		if !hasEvidence(f, "TPOT since the engine started (not this window): mean 117 ms, already over the 50 ms SLO") {
			t.Errorf("evidence %+v", f.Evidence)
		}
	}}})
}

// Issue 14 item 9: beside an endpoint with metrics, one whose /metrics
// failed is not covered by "checked": each metric check says which
// endpoint it did not judge.
func TestCheckedNamesEndpointsWithoutMetrics(t *testing.T) {
	down := Endpoint{URL: "http://b:8000", Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp},
		Scrape: model.Scrape{Endpoint: "http://b:8000", Time: t0, Err: "metrics endpoint returned 404", ErrKind: model.ErrNotFound}}
	rep := Evaluate(input(ep(nil), down), DefaultConfig())
	sawMetricCheck := false
	for _, c := range rep.Checked {
		if strings.Contains(c, "TTFT p99 within the SLO") || strings.Contains(c, "KV cache below") {
			sawMetricCheck = true
			if !strings.Contains(c, "not checked on http://b:8000: no metrics") {
				t.Errorf("checked %q claims the endpoint without metrics", c)
			}
		}
		if strings.Contains(c, "every endpoint answers") && strings.Contains(c, "not checked") {
			t.Errorf("a rule that needs no metrics qualified: %q", c)
		}
	}
	if !sawMetricCheck {
		t.Fatalf("checked %v", rep.Checked)
	}
}

// Issue 14 item 8: a finding cites the metric the adapter read (an older
// vLLM's vllm:time_per_output_token_seconds), not the current name.
func TestEvidenceCitesTheMetricRead(t *testing.T) {
	old := ep(func(e *Endpoint) {
		e.Identity.Version = "0.6.3"
		e.State.Running = model.Some(2)
		e.State.Latency[model.ITL] = dist(0.06, 0.07, 0.08, 0.065)
		e.State.From = map[string]string{"itl": "vllm:time_per_output_token_seconds"}
	})
	f := byID(Evaluate(input(old), DefaultConfig()), "itl_bandwidth")
	if f == nil {
		t.Fatal("no itl_bandwidth")
	}
	if f.Evidence[0].Source != "vllm:time_per_output_token_seconds" {
		t.Errorf("cites %q", f.Evidence[0].Source)
	}
	// Without a record (an origin that does not say what it read) no
	// metric name is guessed: the concept is named.
	if got := metricSource(ep(nil), "itl"); got != "itl" {
		t.Errorf("without a record: %q", got)
	}
}

// Issue 31 item 15: the endpoint's KV is read from the fullest engine's
// series; each engine's evidence line cites its own series once
// (was `vllm:kv_cache_usage_perc{engine="1"}{engine="0"}`).
func TestDataParallelEvidenceCitesEachEngineOnce(t *testing.T) {
	cited := func(e *Endpoint) {
		dpFull(e)
		e.State.From = map[string]string{string(model.KVUsage): `vllm:kv_cache_usage_perc{engine="1"}`}
	}
	runCases(t, []ruleCase{{name: "kv full", in: input(ep(cited)), want: "kv_full", check: func(t *testing.T, f *Finding) {
		got := map[string]bool{}
		for _, e := range f.Evidence {
			if strings.HasPrefix(e.Text, "engine ") {
				got[e.Source] = true
			}
		}
		if !got[`vllm:kv_cache_usage_perc{engine="0"}`] || !got[`vllm:kv_cache_usage_perc{engine="1"}`] || len(got) != 2 {
			t.Errorf("per-engine sources %v", got)
		}
	}}})
}
