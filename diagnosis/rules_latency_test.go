package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// queued is TTFT over SLO with the queue taking most of it.
func queued(e *Endpoint) {
	e.State.Latency[model.TTFT] = dist(1.8, 2.4, 3.0, 2.0)
	e.State.Latency[model.Queue] = dist(1.5, 1.9, 2.5, 1.6)
	e.State.Latency[model.Prefill] = dist(0.2, 0.3, 0.4, 0.3)
	e.State.Waiting = model.Some(37)
}

// prefilled is TTFT over SLO with prefill taking most of it.
func prefilled(e *Endpoint) {
	e.State.Latency[model.TTFT] = dist(0.9, 1.5, 2.0, 1.0)
	e.State.Latency[model.Queue] = dist(0.01, 0.02, 0.05, 0.02)
	e.State.Latency[model.Prefill] = dist(0.8, 1.3, 1.8, 0.9)
	e.State.PromptTPS, e.State.RequestsPS = model.Some(24000), model.Some(4)
}

func TestTTFTRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "queueing with the evidence split", in: input(ep(queued)), want: "ttft_queueing", none: "ttft_prefill",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "TTFT p99≈3.0 s") || !hasEvidence(f, "queue time 1.6 s of the mean 2.0 s (80 %)") || !hasEvidence(f, "waiting 37") {
					t.Errorf("%+v", f.Evidence)
				}
				if f.Category != Queueing {
					t.Errorf("category %s", f.Category)
				}
			}},
		{name: "queueing at the cap with KV to spare raises the cap from KV share", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.State.MaxRunning, e.State.Running, e.State.KVUsage = model.Some(64), model.Some(64), model.Some(0.4)
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			// 0.4/64 per request → 144 fit in 90 %; capped at 2×64.
			if !hasAction(f, "--max-num-seqs 128") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "cap not exposed: inferred from a pinned batch with KV free", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.State.Running, e.State.KVUsage = model.Some(31), model.Some(0.25)
			e.Batch = []BatchPoint{{Running: 32, ITL: 0.02}, {Running: 30, ITL: 0.02}}
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			// cap 32 inferred; 0.25/31 per request → 111 fit, capped at 2×32.
			if !hasAction(f, "--max-num-seqs 64") || !strings.Contains(f.Cause, "stays at 32") {
				t.Errorf("%s %+v", f.Cause, f.Actions)
			}
		}},
		{name: "cap not exposed and KV busy: no inference", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.State.KVUsage = model.Some(0.85)
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-seqs N") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "queueing at the cap, sglang flag", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.Identity.Engine = model.SGLang
			e.State.MaxRunning, e.State.Running, e.State.KVUsage = model.Some(48), model.Some(48), model.Some(0.6)
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-running-requests 72") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "queueing with a full KV pool points at memory", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.State.KVUsage = model.Some(0.97)
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			if !strings.Contains(f.Cause, "KV cache is full") || !hasAction(f, "--kv-cache-dtype fp8") {
				t.Errorf("%s %+v", f.Cause, f.Actions)
			}
		}},
		{name: "queue share dominates though nobody waits now (bursts): queueing, not prefill", in: input(ep(func(e *Endpoint) {
			queued(e)
			e.State.Waiting = model.Some(0)
		})), want: "ttft_queueing", none: "ttft_prefill"},
		{name: "prefill dominated", in: input(ep(prefilled)), want: "ttft_prefill", none: "ttft_queueing",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "prompt ≈6000 tokens") || !hasAction(f, "--max-num-batched-tokens 8192") {
					t.Errorf("%+v %+v", f.Evidence, f.Actions)
				}
			}},
		{name: "prefill with low hit rate and caching off", in: input(ep(func(e *Endpoint) {
			prefilled(e)
			e.State.PrefixHit = model.Some(0.05)
			e.State.Info["enable_prefix_caching"] = "False"
		})), want: "ttft_prefill", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--enable-prefix-caching") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "prefill low hit rate with caching on: client advice", in: input(ep(func(e *Endpoint) {
			prefilled(e)
			e.State.PrefixHit = model.Some(0.05)
		})), want: "ttft_prefill", check: func(t *testing.T, f *Finding) {
			if hasAction(f, "--enable-prefix-caching") || !hasAction(f, "shared part of prompts") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "TTFT at the SLO exactly is fine", in: input(ep(func(e *Endpoint) { e.State.Latency[model.TTFT] = dist(0.1, 0.15, 0.2, 0.1) })), none: "ttft_prefill"},
		{name: "TTFT just over the SLO", in: input(ep(func(e *Endpoint) { e.State.Latency[model.TTFT] = dist(0.1, 0.15, 0.201, 0.1) })), want: "ttft_prefill"},
		{name: "SLO from config", in: input(ep(prefilled)), cfg: func(c *Config) { c.SLOTTFT = 3 * time.Second }, none: "ttft_prefill"},
		{name: "TGI: mean-only approximated TTFT", in: input(ep(func(e *Endpoint) {
			e.Identity.Engine = model.TGI
			e.State.Latency[model.TTFT] = model.Dist{Mean: model.Some(0.9), Exposed: true, Approx: "validation+queue+prefill means", Window: time.Minute}
			e.State.Latency[model.Queue] = dist(0.7, 0.8, 0.9, 0.8)
			e.State.Waiting = model.Some(5)
		})), want: "ttft_queueing", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "TTFT mean (approx.") || !hasAction(f, "TGI") && !hasAction(f, "replica") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "backlog over 50", in: input(ep(func(e *Endpoint) { e.State.Waiting = model.Some(51) })), want: "queue_backlog",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit {
					t.Errorf("sev %v", f.Severity)
				}
			}},
		{name: "backlog with running not exposed says --, not 0", in: input(ep(func(e *Endpoint) {
			e.State.Waiting, e.State.Running = model.Some(60), model.None
		})), want: "queue_backlog", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "waiting 60 > 50 (running --)") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "backlog at 50 is not over", in: input(ep(func(e *Endpoint) { e.State.Waiting = model.Some(50) })), none: "queue_backlog"},
		{name: "llama.cpp backlog says -np", in: input(ep(func(e *Endpoint) {
			e.Identity.Engine = model.LlamaCpp
			e.State.Waiting = model.Some(80)
		})), want: "queue_backlog", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "-np") {
				t.Errorf("%+v", f.Actions)
			}
		}},
	})
}

func TestTTFTAbsentIsSaid(t *testing.T) {
	e := ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		delete(e.State.Latency, model.TTFT)
	})
	rep := Evaluate(input(e), DefaultConfig())
	if !strings.Contains(strings.Join(rep.Missing, "\n"), "TTFT (llama.cpp does not expose it)") {
		t.Fatalf("missing: %v", rep.Missing)
	}
}

func TestDecodeRules(t *testing.T) {
	knee := func(e *Endpoint) {
		e.State.Running = model.Some(96)
		e.State.Latency[model.ITL] = dist(0.05, 0.06, 0.065, 0.055)
		for _, b := range []struct{ r, itl float64 }{{8, 0.012}, {16, 0.015}, {32, 0.022}, {48, 0.03}, {52, 0.033}, {64, 0.042}, {96, 0.055}} {
			e.Batch = append(e.Batch, BatchPoint{Running: b.r, ITL: b.itl}, BatchPoint{Running: b.r, ITL: b.itl})
		}
	}
	runCases(t, []ruleCase{
		{name: "knee from history: cap just under where ITL crossed", in: input(ep(knee)), want: "itl_decode_batch",
			check: func(t *testing.T, f *Finding) {
				// limit for means = min(50 × 55/65, 50 − (65 − 55)) = 40 ms:
				// batch 52 met it (33 ms), 64 did not (42 ms).
				if !hasAction(f, "--max-num-seqs 52") || !hasEvidence(f, "batch 52") {
					t.Errorf("%+v %+v", f.Actions, f.Evidence)
				}
			}},
		{name: "knee by fit when every batch seen is over", in: input(ep(func(e *Endpoint) {
			knee(e)
			e.Batch = []BatchPoint{{64, 0.042}, {80, 0.05}, {96, 0.058}}
		})), want: "itl_decode_batch", check: func(t *testing.T, f *Finding) {
			// ITL = 0.010 + 0.0005·r → 0.040 at r = 60
			if !hasAction(f, "--max-num-seqs 60") || !hasEvidence(f, "fit over 3 batch sizes") {
				t.Errorf("%+v %+v", f.Actions, f.Evidence)
			}
		}},
		{name: "knee proportional without history", in: input(ep(func(e *Endpoint) {
			knee(e)
			e.Batch = nil
		})), want: "itl_decode_batch", check: func(t *testing.T, f *Finding) {
			// 96 × 40/55 = 69.8
			if !hasAction(f, "--max-num-seqs 69") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "short prompts in slow decode steps: TTFT folded into the decode finding", in: input(ep(func(e *Endpoint) {
			knee(e)
			e.State.Latency[model.TTFT] = dist(0.2, 0.3, 0.4, 0.25)
			e.State.Latency[model.Prefill] = dist(0.15, 0.25, 0.35, 0.2)
			e.State.PromptTPS, e.State.RequestsPS = model.Some(4000), model.Some(20) // 200-token prompts
		})), want: "itl_decode_batch", none: "ttft_prefill", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "TTFT p99≈400 ms also over its SLO") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "long prompts keep their own TTFT finding beside a slow decode", in: input(ep(func(e *Endpoint) {
			knee(e)
			prefilled(e)
		})), want: "ttft_prefill"},
		// Issue 14 item 15: vLLM V1 always chunks prefill; the lever is the
		// step budget, and --enable-chunked-prefill is advised to V0 only.
		{name: "spiky ITL on V1: the step budget", in: input(ep(func(e *Endpoint) {
			e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03)
		})), want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-batched-tokens 2048") || hasAction(f, "--enable-chunked-prefill") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "spiky ITL on V1 started with --no-enable-chunked-prefill", in: input(ep(func(e *Endpoint) {
			e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03)
			e.State.Info["enable_chunked_prefill"] = "False"
		})), want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-batched-tokens 2048 without --no-enable-chunked-prefill") || !strings.Contains(f.Actions[0].Why, "chunked prefill is off") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "spiky ITL on V0 without chunked prefill", in: input(ep(func(e *Endpoint) {
			e.Identity.Version = "0.6.3.post1"
			e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03)
		})), want: "itl_prefill_stall", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--enable-chunked-prefill --max-num-batched-tokens 2048") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "spiky ITL with chunked prefill on is not a stall", in: input(ep(func(e *Endpoint) {
			e.State.Latency[model.ITL] = dist(0.015, 0.03, 0.4, 0.03)
			e.State.Info["enable_chunked_prefill"] = "True"
			e.State.Running = model.Some(2)
		})), want: "itl_bandwidth", none: "itl_prefill_stall"},
		{name: "small batch slow is bandwidth", in: input(ep(func(e *Endpoint) {
			e.State.Running = model.Some(2)
			e.State.Latency[model.ITL] = dist(0.06, 0.07, 0.08, 0.065)
		})), want: "itl_bandwidth", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--quantization fp8") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "ITL at SLO is fine", in: input(ep(func(e *Endpoint) { e.State.Latency[model.ITL] = dist(0.02, 0.03, 0.05, 0.02) })), none: "itl_bandwidth"},
		{name: "TPOT used when ITL absent (TGI)", in: input(ep(func(e *Endpoint) {
			e.Identity.Engine = model.TGI
			delete(e.State.Latency, model.ITL)
			e.State.Running = model.Some(1)
			e.State.Latency[model.TPOT] = dist(0.06, 0.07, 0.08, 0.065)
		})), want: "itl_bandwidth", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "TPOT p99≈80 ms") || !hasAction(f, "--quantize") {
				t.Errorf("%+v %+v", f.Evidence, f.Actions)
			}
		}},
		{name: "spec acceptance low", in: input(ep(func(e *Endpoint) { e.State.SpecAccept = model.Some(0.3) })), want: "spec_accept_low",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevInfo {
					t.Errorf("ITL fine → info, got %v", f.Severity)
				}
			}},
		{name: "spec acceptance at threshold", in: input(ep(func(e *Endpoint) { e.State.SpecAccept = model.Some(0.5) })), none: "spec_accept_low"},
	})
}

func TestBatchFromSeries(t *testing.T) {
	pt := func(s int, v float64, ok bool) model.Point {
		return model.Point{T: t0.Add(time.Duration(s) * time.Second), V: v, OK: ok}
	}
	got := BatchFromSeries(
		[]model.Point{pt(1, 4, true), pt(2, 8, true), pt(3, 16, false), pt(4, 32, true)},
		[]model.Point{pt(1, 0.01, true), pt(2, 0.02, false), pt(3, 0.03, true), pt(4, 0.04, true)})
	want := []BatchPoint{{4, 0.01}, {32, 0.04}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %v", got)
	}
}
