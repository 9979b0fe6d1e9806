package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// kvPressured is the sim's kv-pressure picture as QA saw it: TTFT p99 39 s,
// the queue 45 % of it, prefill 0.5 %, 2.8 preemptions/s with a full pool.
func kvPressured(e *Endpoint) {
	e.State.Latency[model.TTFT] = dist(9, 30, 39, 13)
	e.State.Latency[model.Queue] = dist(4, 12, 20, 5.9)
	e.State.Latency[model.Prefill] = dist(0.05, 0.1, 0.3, 0.069)
	e.State.Waiting, e.State.Running, e.State.KVUsage = model.Some(40), model.Some(30), model.Some(1)
	e.State.PreemptionsPS, e.State.Preemptions = model.Some(2.8), model.Some(168)
	e.State.PromptTPS, e.State.RequestsPS = model.Some(1600), model.Some(2) // 800-token prompts
}

// The split of TTFT names a phase only by that phase's own share; the rest
// is preemption (pointing at the KV finding) or says no phase dominates.
func TestTTFTSplitByOwnNumbers(t *testing.T) {
	hourAgo := t0.Add(-time.Hour)
	runCases(t, []ruleCase{
		{name: "preemptions: TTFT points at the KV finding, not prefill", in: input(ep(kvPressured)), want: "ttft_preemption", none: "ttft_prefill",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "prefill time 69 ms of it (0.5 %)") || !hasEvidence(f, "preemptions 2.8/s") || !strings.Contains(f.Title, "KV pressure") {
					t.Errorf("%s %+v", f.Title, f.Evidence)
				}
				kv := byID(Evaluate(input(ep(kvPressured)), DefaultConfig()), "kv_preemption")
				if kv == nil || len(f.Actions) == 0 || f.Actions[0].Change != kv.Actions[0].Change {
					t.Errorf("actions %+v differ from the KV finding's %+v", f.Actions, kv)
				}
				if hasAction(f, "--max-num-batched-tokens") || hasAction(f, "--tensor-parallel-size") {
					t.Errorf("prefill advice under preemption: %+v", f.Actions)
				}
			}},
		{name: "preemptions at the threshold are not the cause", in: input(ep(func(e *Endpoint) {
			kvPressured(e)
			e.State.PreemptionsPS = model.Some(1)
		})), none: "ttft_preemption"},
		{name: "neither phase dominates: said so, no prefill finding", in: input(ep(func(e *Endpoint) {
			e.State.Latency[model.TTFT] = dist(0.5, 0.8, 1.0, 0.6)
			e.State.Latency[model.Queue] = dist(0.1, 0.2, 0.3, 0.18)   // 30 %
			e.State.Latency[model.Prefill] = dist(0.1, 0.2, 0.3, 0.12) // 20 %
		})), want: "ttft_high", none: "ttft_prefill", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "(30 %)") || !hasEvidence(f, "(20 %)") || !strings.Contains(f.Title, "no single phase") {
				t.Errorf("%s %+v", f.Title, f.Evidence)
			}
		}},
		{name: "prefill at half of TTFT dominates", in: input(ep(func(e *Endpoint) {
			e.State.Latency[model.TTFT] = dist(0.5, 0.8, 1.0, 0.6)
			e.State.Latency[model.Prefill] = dist(0.2, 0.4, 0.6, 0.3)
		})), want: "ttft_prefill"},
		{name: "prefill not timed: long prompts stand in", in: input(ep(func(e *Endpoint) {
			prefilled(e)
			delete(e.State.Latency, model.Prefill)
		})), want: "ttft_prefill"},
		{name: "prefill not timed and prompts short: no prefill claim", in: input(ep(func(e *Endpoint) {
			prefilled(e)
			delete(e.State.Latency, model.Prefill)
			e.State.PromptTPS = model.Some(800) // 200 tokens
		})), want: "ttft_high", none: "ttft_prefill"},
		{name: "budget known and smaller than a prompt: raise it, and say from what", in: withEvents(ep(prefilled), chunkedLine(url, "2048", hourAgo)),
			want: "ttft_prefill", check: func(t *testing.T, f *Finding) {
				a := f.Actions[0]
				if a.Change != "--max-num-batched-tokens 8192" || !strings.Contains(a.Why, "raises the step budget from 2048") || !strings.Contains(a.Why, "bigger chunks") {
					t.Errorf("%+v", a)
				}
			}},
		{name: "budget known and already holds a prompt: not advised", in: withEvents(ep(prefilled), chunkedLine(url, "8192", hourAgo)),
			want: "ttft_prefill", check: func(t *testing.T, f *Finding) {
				if hasAction(f, "--max-num-batched-tokens") || !hasEvidence(f, "step budget 8192 tokens already holds") {
					t.Errorf("%+v %+v", f.Actions, f.Evidence)
				}
			}},
	})
}

// Two findings never advise different --max-num-batched-tokens values: with
// ITL spiking over its SLO the stall finding lowers the budget and the
// prefill finding does not raise it.
func TestOneStepBudgetAcrossFindings(t *testing.T) {
	both := withEvents(ep(func(e *Endpoint) {
		prefilled(e)
		e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03)
	}), chunkedLine(url, "8192", t0.Add(-time.Hour)))
	rep := Evaluate(both, DefaultConfig())
	if byID(rep, "ttft_prefill") == nil || byID(rep, "itl_prefill_stall") == nil {
		t.Fatalf("want both findings, got %v", ids(rep.Findings))
	}
	values := map[string]bool{}
	for _, f := range rep.Findings {
		for _, a := range f.Actions {
			if i := strings.Index(a.Change, "--max-num-batched-tokens "); i >= 0 {
				values[strings.Fields(a.Change[i:])[1]] = true
			}
		}
	}
	if len(values) != 1 || !values["4096"] {
		t.Errorf("step budgets advised: %v, want only 4096", values)
	}
}

// The decode-batch finding's replica advice gives a decode reason, not the
// queue's ("the queue grows while the batch is full" with nothing waiting).
func TestDecodeBatchReplicaReason(t *testing.T) {
	past := func(e *Endpoint) { // ITL grows with the batch, over the SLO at 96
		e.State.Running = model.Some(96)
		e.State.Latency[model.ITL] = dist(0.05, 0.06, 0.065, 0.055)
		for _, b := range []struct{ r, itl float64 }{{8, 0.012}, {32, 0.022}, {64, 0.042}, {96, 0.055}} {
			e.Batch = append(e.Batch, BatchPoint{Running: b.r, ITL: b.itl})
		}
	}
	f := byID(Evaluate(input(ep(past)), DefaultConfig()), "itl_decode_batch")
	if f == nil || len(f.Actions) < 2 {
		t.Fatalf("%+v", f)
	}
	if why := f.Actions[1].Why; strings.Contains(why, "queue grows") || !strings.Contains(why, "batch") {
		t.Errorf("replica why %q", why)
	}
}

// Issue 31 item 12: a TTFT p99 past the highest finite bucket is a floor,
// cited as "over 30 s", not as the estimate "p99≈30 s".
func TestTTFTPastLastBucketIsCitedAsAFloor(t *testing.T) {
	var ep Endpoint
	ep.State.Latency = map[model.Latency]model.Dist{model.TTFT: {P50: model.Some(30), P99: model.Some(30), Mean: model.Some(213.654),
		Count: 38, Estimate: true, Exposed: true, Above: model.Some(30), AboveQ: 0.5}}
	v, label, over := ttftOver(ep, 2)
	if !over || v != 30 || label+secs(v) != "TTFT p99 over 30 s" {
		t.Errorf("ttftOver = %v %q %v", v, label+secs(v), over)
	}
}
