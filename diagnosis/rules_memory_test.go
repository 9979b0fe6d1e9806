package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func gpuSnap(used, total float64) *model.GPUSnapshot {
	return &model.GPUSnapshot{Time: t0, GPUs: []model.GPU{{Index: 0, Name: "H100", Util: model.Some(90),
		MemUsed: model.Some(used), MemTotal: model.Some(total),
		Processes: []model.GPUProcess{{PID: 10, Name: "python3", Engine: "vllm", UsedMem: model.Some(used)}}}}}
}

func pressured(e *Endpoint) {
	e.State.KVUsage = model.Some(0.98)
	e.State.Running, e.State.Waiting = model.Some(64), model.Some(12)
	e.State.PreemptionsPS, e.State.Preemptions = model.Some(3.2), model.Some(192)
}

const gb = 1 << 30

func TestMemoryRules(t *testing.T) {
	withGPU := func(used float64) Input {
		in := input(ep(pressured))
		in.GPU = gpuSnap(used, 80*gb)
		return in
	}
	runCases(t, []ruleCase{
		{name: "KV full", in: input(ep(pressured)), want: "kv_full", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || !hasEvidence(f, "KV usage 98 %") {
				t.Errorf("%+v", *f)
			}
		}},
		{name: "KV at threshold counts", in: input(ep(func(e *Endpoint) { e.State.KVUsage = model.Some(0.95) })), want: "kv_full"},
		{name: "KV just under", in: input(ep(func(e *Endpoint) { e.State.KVUsage = model.Some(0.949) })), none: "kv_full"},
		{name: "preemptions critical, headroom ranks memory fraction first", in: withGPU(60 * gb), want: "kv_preemption",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit || !hasEvidence(f, "preemptions 3.2/s") {
					t.Errorf("%+v", *f)
				}
				// 20 of 80 GiB free (25 %): 0.90 + 0.25 − 0.02 → capped 0.97.
				if !strings.Contains(f.Actions[0].Change, "--gpu-memory-utilization 0.97 (from 0.9)") {
					t.Errorf("first action %+v", f.Actions[0])
				}
			}},
		{name: "small headroom computes a modest raise", in: withGPU(74 * gb), want: "kv_preemption",
			check: func(t *testing.T, f *Finding) {
				// 6/80 = 7.5 % free → 0.90 + 0.075 − 0.02 = 0.955 → 0.95
				if !strings.Contains(f.Actions[0].Change, "--gpu-memory-utilization 0.95") {
					t.Errorf("first action %+v", f.Actions[0])
				}
			}},
		{name: "no headroom: fp8 first, no memory-fraction raise", in: withGPU(79 * gb), want: "kv_preemption",
			check: func(t *testing.T, f *Finding) {
				if !strings.Contains(f.Actions[0].Change, "--kv-cache-dtype fp8") || hasAction(f, "--gpu-memory-utilization") {
					t.Errorf("%+v", f.Actions)
				}
				// 0.98/64 per request → 58 fit in 90 %.
				if !hasAction(f, "--max-num-seqs 58") || !hasAction(f, "--max-model-len 16384") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "no GPU readings: memory fraction last and conditional", in: input(ep(pressured)), want: "kv_preemption",
			check: func(t *testing.T, f *Finding) {
				last := f.Actions[len(f.Actions)-1]
				if !strings.Contains(last.Change, "only if nvidia-smi shows free VRAM") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "fp8 already: not suggested again", in: input(ep(func(e *Endpoint) {
			pressured(e)
			e.State.Info["cache_dtype"] = "fp8"
		})), want: "kv_preemption", check: func(t *testing.T, f *Finding) {
			if hasAction(f, "--kv-cache-dtype") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "preemptions at 1/s is not over", in: input(ep(func(e *Endpoint) { e.State.PreemptionsPS = model.Some(1) })), none: "kv_preemption"},
		{name: "sglang says retractions and its flags", in: input(ep(func(e *Endpoint) {
			pressured(e)
			e.Identity.Engine = model.SGLang
		})), want: "kv_preemption", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "retractions") || !hasAction(f, "--kv-cache-dtype fp8_e5m2") || !hasAction(f, "--max-running-requests") {
				t.Errorf("%+v %+v", f.Evidence, f.Actions)
			}
		}},
	})
}

func TestKVAbsentIsSaid(t *testing.T) {
	e := ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		e.State.KVUsage = model.None
	})
	rep := Evaluate(input(e), DefaultConfig())
	if !strings.Contains(strings.Join(rep.Missing, "\n"), "KV-cache usage (llama.cpp does not expose it)") {
		t.Fatalf("%v", rep.Missing)
	}
}

// Issue 27 item 5: a long output tail while the KV pool fills advises
// max_tokens near the p95, with the figures.
func TestOutputTailRule(t *testing.T) {
	tail := func(kv float64) Input {
		return input(ep(func(e *Endpoint) {
			e.State.Latency[model.OutputLen] = model.Dist{P50: model.Some(180), P90: model.Some(900), P95: model.Some(1400), P99: model.Some(3900),
				Count: 400, Window: time.Minute, Estimate: true, Exposed: true}
			e.State.KVUsage = model.Some(kv)
		}))
	}
	runCases(t, []ruleCase{
		{name: "tail and a full pool", in: tail(0.92), want: "output_tail", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "max_tokens near the p95, about 1400") || !hasEvidence(f, "p99≈3900") || !hasEvidence(f, "KV cache 92 % used") {
				t.Errorf("%+v", f)
			}
		}},
		{name: "tail that costs nothing", in: tail(0.3), none: "output_tail"},
	})
}
