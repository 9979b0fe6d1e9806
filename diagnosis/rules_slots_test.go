package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// llamaBusy is a llama-server with 4 slots of 4096 tokens (-c 16384), all
// busy, n requests deferred, and no TTFT (llama.cpp exposes none).
func llamaBusy(n float64) func(*Endpoint) {
	return func(e *Endpoint) {
		e.Identity = model.Identity{Engine: model.LlamaCpp, Version: "b6000", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m", MaxContext: 4096}}}
		e.State.Latency = map[model.Latency]model.Dist{model.TPOT: {Mean: model.Some(0.02), Exposed: true, Window: time.Minute}}
		e.State.Info = map[string]string{}
		e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(4), model.Some(n), model.Some(4)
		e.State.KVUsage, e.State.KVCapacityTokens = model.Some(0.5), model.Some(16384)
	}
}

func TestConcurrencyCapRule(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "llama.cpp: every slot busy, 2 deferred", in: input(ep(llamaBusy(2))), want: "concurrency_cap",
			check: func(t *testing.T, f *Finding) {
				if f.Title != "all 4 slots taken: 2 requests wait for one" || f.Category != Queueing || f.Severity != model.SevWarn {
					t.Errorf("%q %s %v", f.Title, f.Category, f.Severity)
				}
				if !hasEvidence(f, "4 slots busy of the cap 4") || !hasEvidence(f, "waiting 2") {
					t.Errorf("evidence %+v", f.Evidence)
				}
				// 6 want a slot: -np 6 with -kvu keeps the one 16384-token
				// pool (issue 14 item 16: -np 6 -c 24576 split it 6 ways
				// and grew the KV memory by half).
				if !hasAction(f, "-np 6 -kvu (keep -c 16384)") || hasAction(f, "-c 24576") {
					t.Errorf("actions %+v", f.Actions)
				}
			}},
		{name: "llama.cpp: a long queue raises the cap at most twofold", in: input(ep(llamaBusy(30))), want: "concurrency_cap",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "-np 8 -kvu (keep -c 16384)") {
					t.Errorf("actions %+v", f.Actions)
				}
			}},
		{name: "llama.cpp: pool size unknown, -c kept", in: input(ep(func(e *Endpoint) {
			llamaBusy(1)(e)
			e.Identity.Models = nil
			e.State.KVCapacityTokens = model.None
		})), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "-np 5 -kvu (keep -c as it is)") {
				t.Errorf("actions %+v", f.Actions)
			}
		}},
		{name: "llama.cpp: slow tokens already: a replica, not a bigger batch", in: input(ep(func(e *Endpoint) {
			llamaBusy(2)(e)
			e.State.Latency[model.TPOT] = model.Dist{Mean: model.Some(0.5), Exposed: true, Window: time.Minute}
		})), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
			if hasAction(f, "-np") || len(f.Actions) != 1 {
				t.Errorf("actions %+v", f.Actions)
			}
		}},
		// Boundaries: one request waiting is enough; one free slot or nobody waiting is not.
		{name: "boundary: 1 waiting at the cap", in: input(ep(llamaBusy(1))), want: "concurrency_cap"},
		{name: "boundary: nobody waiting", in: input(ep(llamaBusy(0))), none: "concurrency_cap"},
		{name: "boundary: one slot free", in: input(ep(func(e *Endpoint) {
			llamaBusy(2)(e)
			e.State.Running = model.Some(3)
		})), none: "concurrency_cap"},
		{name: "cap unknown: nothing to compare with", in: input(ep(func(e *Endpoint) {
			e.State.Running, e.State.Waiting = model.Some(8), model.Some(3)
			e.State.Latency = map[model.Latency]model.Dist{model.TTFT: {Exposed: true}}
		})), none: "concurrency_cap"},
		{name: "waiting not exposed", in: input(ep(func(e *Endpoint) {
			llamaBusy(2)(e)
			e.State.Waiting = model.None
		})), none: "concurrency_cap"},
		// Engines with a TTFT: the TTFT rules judge the queue (within the SLO
		// the wait is harmless; over it ttft_queueing names the cap).
		{name: "vLLM at its cap with TTFT within the SLO", in: input(ep(func(e *Endpoint) {
			e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(64), model.Some(3), model.Some(64)
		})), none: "concurrency_cap"},
		{name: "vLLM at its cap with no request finished in the window (no TTFT yet)", in: input(ep(func(e *Endpoint) {
			e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(64), model.Some(3), model.Some(64)
			e.State.Latency = map[model.Latency]model.Dist{model.TTFT: {Exposed: true}}
		})), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
			// Issue 14 item 10: ITL unknown is not room for a bigger batch.
			if f.Title != "all 64 concurrency slots taken: 3 requests wait for one" || hasAction(f, "--max-num-seqs 67") || !hasAction(f, "higher only once ITL/TPOT is seen under its SLO") {
				t.Errorf("%q %+v", f.Title, f.Actions)
			}
		}},
		{name: "vLLM at its cap, ITL known within its SLO", in: input(ep(func(e *Endpoint) {
			e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(64), model.Some(3), model.Some(64)
			e.State.Latency = map[model.Latency]model.Dist{model.TTFT: {Exposed: true}, model.ITL: dist(0.015, 0.02, 0.03, 0.016)}
		})), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-seqs 67") {
				t.Errorf("%q %+v", f.Title, f.Actions)
			}
		}},
		{name: "vLLM with a full KV pool: the KV rules explain it", in: input(ep(func(e *Endpoint) {
			e.State.Running, e.State.Waiting, e.State.MaxRunning, e.State.KVUsage = model.Some(64), model.Some(3), model.Some(64), model.Some(0.95)
			e.State.Latency = map[model.Latency]model.Dist{model.TTFT: {Exposed: true}}
		})), none: "concurrency_cap"},
		{name: "SGLang cap from server info", in: input(ep(func(e *Endpoint) {
			e.Identity.Engine = model.SGLang
			e.State.Latency = map[model.Latency]model.Dist{model.ITL: dist(0.015, 0.02, 0.03, 0.016)}
			e.State.Info = map[string]string{"max_running_requests": "16"}
			e.State.Running, e.State.Waiting = model.Some(16), model.Some(4)
		})), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-running-requests 20") {
				t.Errorf("%+v", f.Actions)
			}
		}},
	})
}

// Hysteresis: the finding opens once the slots have stayed full with
// requests waiting for the hold, not on a moment's peak, and closes once
// they have been free for Clear.
func TestConcurrencyCapHolds(t *testing.T) {
	cfg := DefaultConfig()
	d := NewDiagnoser(cfg)
	open := func(at time.Duration, waiting float64) bool {
		in := input(ep(llamaBusy(waiting)))
		in.Time = t0.Add(at)
		in.Endpoints[0].State.Time = in.Time
		d.Update(in)
		for _, f := range d.Open() {
			if f.ID == "concurrency_cap" {
				return true
			}
		}
		return false
	}
	var step = time.Second
	at := time.Duration(0)
	for ; at < cfg.Hold; at += step {
		if open(at, 2) {
			t.Fatalf("open after %v, before the %v hold", at, cfg.Hold)
		}
	}
	if !open(at, 2) {
		t.Fatalf("not open after the %v hold", cfg.Hold)
	}
	lastTrue := at // the queue empties after this refresh
	for at = lastTrue + step; at < lastTrue+cfg.Clear; at += step {
		if !open(at, 0) {
			t.Fatalf("closed %v after the queue emptied, before Clear %v", at-lastTrue, cfg.Clear)
		}
	}
	if open(lastTrue+cfg.Clear, 0) {
		t.Errorf("still open %v after the condition last held", cfg.Clear)
	}
}

// An engine that exposes neither running nor waiting requests (Ollama) is
// not "checked" for the concurrency cap: diagnose listed "running requests
// below the concurrency cap while requests wait" among what it checked,
// beside "waiting requests (not exposed)".
func TestConcurrencyCapNotCheckedWithoutQueues(t *testing.T) {
	in := input(ep(func(e *Endpoint) {
		e.Identity = model.Identity{Engine: model.Ollama, Version: "0.17.4", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}
		e.State.Running, e.State.Waiting = model.None, model.None
	}))
	rep := Evaluate(in, DefaultConfig())
	for _, c := range rep.Checked {
		if strings.Contains(c, "concurrency cap") {
			t.Errorf("checked %q without running or waiting", c)
		}
	}
	if !strings.Contains(strings.Join(rep.Missing, "\n"), "concurrency cap") {
		t.Errorf("missing %q lacks the concurrency cap", rep.Missing)
	}
}
