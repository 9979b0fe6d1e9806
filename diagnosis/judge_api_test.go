package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// tgiEP is a TGI endpoint whose window finished requests with counts (the
// adapter's finish reasons: "success" and tgi_request_failure's err labels).
func tgiEP(counts map[string]float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.Identity.Engine, e.Identity.Version = model.TGI, "3.3.6"
		e.State.Info = map[string]string{}
		finishes(counts)(e)
	})
}

// Issue 14 items 17 and 19: TGI's failures count as errors, its 429s as
// rejections naming --max-concurrent-requests; --max-batch-size (a flag
// for hardware without unpadded inference) is never TGI's batch knob.
func TestTGIErrorsAndRejections(t *testing.T) {
	runCases(t, []ruleCase{
		// shared/fixtures/metrics/tgi.txt's shape: validation 7, generation 2
		// of 821; here generation failures are 10 %.
		{name: "generation failures are errors", in: input(tgiEP(map[string]float64{"success": 180, "generation": 20})), want: "finish_errors",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit || !hasEvidence(f, "error 10 %") {
					t.Errorf("%v %+v", f.Severity, f.Evidence)
				}
			}},
		{name: "the fixture's 1 % failures are not a finding", in: input(tgiEP(map[string]float64{"success": 812, "validation": 7, "generation": 2})), none: "finish_errors"},
		{name: "429 overloaded", in: input(tgiEP(map[string]float64{"success": 190, "overloaded": 10})), want: "api_rejections",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-concurrent-requests higher (default 128)") || !strings.Contains(f.Cause, "HTTP 429") {
					t.Errorf("%s %+v", f.Cause, f.Actions)
				}
				if !hasEvidence(f, "10 of 200 requests rejected as overloaded") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "overloaded is not an engine error", in: input(tgiEP(map[string]float64{"success": 190, "overloaded": 10})), none: "finish_errors"},
	})
	for _, n := range []int{0, 16} {
		if c := capChange(model.TGI, n); strings.Contains(c, "--max-batch-size") || !strings.Contains(c, "--max-batch-total-tokens") {
			t.Errorf("TGI cap %q", c)
		}
	}
}

// Issue 14 item 12: 1193 waiting with TTFT p99 ≈ 79 s is critical, and the
// backlog opens after a short hold instead of WaitingFor's three minutes;
// a breach just over the threshold keeps its long hold and WARN.
func TestSeverityEscalatesWithTheBreach(t *testing.T) {
	huge := func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(256), model.Some(1193), model.Some(256)
		e.State.Latency[model.TTFT] = dist(40, 70, 79, 45)
		e.State.Latency[model.Queue] = dist(39, 69, 78, 44)
	}
	mild := func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(256), model.Some(60), model.Some(256)
		e.State.Latency[model.TTFT] = dist(0.3, 0.4, 0.5, 0.3)
		e.State.Latency[model.Queue] = dist(0.25, 0.35, 0.45, 0.25)
	}
	cfg := DefaultConfig()
	openAfter := func(mut func(*Endpoint), id string) (time.Duration, model.Severity) {
		d := NewDiagnoser(cfg)
		for at := time.Duration(0); at <= 5*time.Minute; at += time.Second {
			in := input(ep(mut))
			in.Time = t0.Add(at)
			in.Endpoints[0].State.Time = in.Time
			d.Update(in)
			for _, f := range d.Open() {
				if f.ID == id {
					return at, f.Severity
				}
			}
		}
		return -1, 0
	}
	if at, sev := openAfter(huge, "queue_backlog"); at < 0 || at > 10*time.Second || sev != model.SevCrit {
		t.Errorf("1193 waiting: queue_backlog opened after %v (%v), want ≤ 10s", at, sev)
	}
	if at, sev := openAfter(huge, "ttft_queueing"); at < 0 || sev != model.SevCrit {
		t.Errorf("TTFT p99 79 s: ttft_queueing %v after %v, want crit", sev, at)
	}
	if at, _ := openAfter(mild, "queue_backlog"); at < cfg.WaitingFor {
		t.Errorf("60 waiting opened after %v, before WaitingFor %v", at, cfg.WaitingFor)
	}
	if _, sev := openAfter(mild, "ttft_queueing"); sev != model.SevWarn {
		t.Errorf("TTFT p99 2.5× the SLO: %v, want warn", sev)
	}
}

// Issue 14 item 22: slow tokens at a small batch get speculative decoding
// beside quantisation and tensor parallelism (TensorRT-LLM included); an
// engine already speculating does not get it again.
func TestBandwidthAdvisesSpeculation(t *testing.T) {
	slow := func(eng model.Engine) func(*Endpoint) {
		return func(e *Endpoint) {
			e.Identity.Engine = eng
			e.State.Running = model.Some(2)
			e.State.Latency[model.ITL] = dist(0.06, 0.07, 0.08, 0.065)
		}
	}
	runCases(t, []ruleCase{
		{name: "vLLM", in: input(ep(slow(model.VLLM))), want: "itl_bandwidth", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--speculative-config") || !hasAction(f, "--tensor-parallel-size 2") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "TRT-LLM", in: input(ep(slow(model.TRTLLM))), want: "itl_bandwidth", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--tp_size 2") || !hasAction(f, "speculative_config") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "already speculating", in: input(ep(func(e *Endpoint) {
			slow(model.VLLM)(e)
			e.State.SpecAccept = model.Some(0.7)
		})), want: "itl_bandwidth", check: func(t *testing.T, f *Finding) {
			if hasAction(f, "--speculative-config") {
				t.Errorf("%+v", f.Actions)
			}
		}},
	})
}

// Issue 14 item 14: the decode-knee cap from a short watch (14 refreshes
// here) says it is a low-confidence estimate; from a minute of refreshes
// over enough batch sizes it is stated plainly, and the value is the same
// rule's either way.
func TestDecodeKneeStatesItsConfidence(t *testing.T) {
	knee := func(repeat int) func(*Endpoint) {
		return func(e *Endpoint) {
			e.State.Running = model.Some(96)
			e.State.Latency[model.ITL] = dist(0.05, 0.06, 0.065, 0.055)
			for i := 0; i < repeat; i++ {
				for _, b := range []struct{ r, itl float64 }{{8, 0.012}, {16, 0.015}, {32, 0.022}, {48, 0.03}, {52, 0.033}, {64, 0.042}, {96, 0.055}} {
					e.Batch = append(e.Batch, BatchPoint{Running: b.r, ITL: b.itl})
				}
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "short watch", in: input(ep(knee(2))), want: "itl_decode_batch", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-seqs 52") || !hasEvidence(f, "low confidence: from 14 refreshes over 7 batch sizes") {
				t.Errorf("%+v %+v", f.Actions, f.Evidence)
			}
		}},
		{name: "a minute of batches", in: input(ep(knee(10))), want: "itl_decode_batch", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--max-num-seqs 52") || hasEvidence(f, "low confidence") {
				t.Errorf("%+v %+v", f.Actions, f.Evidence)
			}
		}},
	})
}

// Issue 14 item 20: the runbook's KV estimate from the p95 prompt and
// output lengths at the running concurrency, and long prompts routed to a
// pool of their own when their tail drives prefill. The lengths are the
// ones vllm.txt's request_prompt_tokens / request_generation_tokens buckets
// give by hand: p95 prompt ≈ 2000 + 3000 × (1446.85 − 1410) / 108 ≈ 3024,
// p95 output ≈ 500 + 500 × (1446.85 − 1436) / 87 ≈ 562, p50 prompt ≈ 500 +
// 500 × (761.5 − 462) / 580 ≈ 758, p99 prompt ≈ 2000 + 3000 × (1507.77 −
// 1410) / 108 ≈ 4716, p90 ≈ 1000 + 1000 × (1370.7 − 1042) / 368 ≈ 1893.
func TestLengthsEstimateKVAndRouteLongPrompts(t *testing.T) {
	lengths := func(e *Endpoint) {
		e.State.Latency[model.PromptLen] = model.Dist{P50: model.Some(758), P90: model.Some(1893), P95: model.Some(3024), P99: model.Some(4716),
			Count: 1523, Exposed: true, Estimate: true, Window: time.Minute}
		e.State.Latency[model.OutputLen] = model.Dist{P50: model.Some(250), P95: model.Some(562), P99: model.Some(600), Count: 1523, Exposed: true, Estimate: true, Window: time.Minute}
	}
	runCases(t, []ruleCase{
		{name: "KV estimate", in: input(ep(func(e *Endpoint) {
			lengths(e)
			e.State.KVUsage, e.State.Running, e.State.KVCapacityTokens = model.Some(0.97), model.Some(37), model.Some(470080)
		})), want: "kv_full", check: func(t *testing.T, f *Finding) {
			// (3024 + 562) × 37 = 132682; 470080 / 3586 = 131.
			if !hasEvidence(f, "estimate: p95 request ≈3024 prompt + 562 output tokens × 37 running ≈ 132682 tokens of a 470080-token pool: about 131 such requests fit at once") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "long prompts to their own pool", in: input(ep(func(e *Endpoint) {
			lengths(e)
			e.State.Latency[model.TTFT] = dist(0.4, 0.6, 0.9, 0.5)
			e.State.Latency[model.Queue] = dist(0.01, 0.02, 0.03, 0.01)
			e.State.Latency[model.Prefill] = dist(0.35, 0.5, 0.8, 0.45)
			e.State.PromptTPS, e.State.RequestsPS = model.Some(2400), model.Some(2)
		})), want: "ttft_prefill", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "prompt length p50≈758, p99≈4716 tokens") || !hasAction(f, "route prompts over ≈1792 tokens to a separate pool") {
				t.Errorf("%+v %+v", f.Evidence, f.Actions)
			}
		}},
	})
}

// Issue 14 item 21: an idle GPU with requests arriving and none waiting is
// explained by small batches when the engine says its steps are small
// (the real llama-server recording's n_busy_slots_per_decode reads 1.98,
// read by promValue); with no occupancy figure, or full steps, it is not.
func TestSmallBatchesExplainAnIdleGPU(t *testing.T) {
	per := promValue(t, "llamacpp-metrics.txt", "llamacpp:n_busy_slots_per_decode")
	if per != 1.98 {
		t.Fatalf("recording read %v", per)
	}
	idle := func(g *model.GPU) { g.Util = model.Some(12) }
	runCases(t, []ruleCase{
		{name: "llama.cpp, 1.98 slots per decode", in: withGPU(ep(func(e *Endpoint) {
			e.Identity.Engine = model.LlamaCpp
			e.State.BatchPerStep = model.Some(per)
			// What the adapter records it read (sources/engine TestEngineMetricsTableIsWhatAdaptersRead).
			e.State.From = map[string]string{string(model.BatchPerStep): "llamacpp:n_busy_slots_per_decode"}
		}), idle), want: "gpu_small_batches", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "1.98 busy slots per decode") || f.Evidence[1].Source != "llamacpp:n_busy_slots_per_decode" {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "vLLM, 1.5 tokens per step", in: withGPU(ep(func(e *Endpoint) {
			e.State.Latency[model.StepTokens] = model.Dist{Mean: model.Some(1.5), Count: 4000, Exposed: true, Window: time.Minute}
		}), idle), want: "gpu_small_batches"},
		{name: "full steps: the load is low, not the batching", in: withGPU(ep(func(e *Endpoint) {
			e.State.Latency[model.StepTokens] = model.Dist{Mean: model.Some(40), Count: 4000, Exposed: true, Window: time.Minute}
		}), idle), none: "gpu_small_batches"},
		{name: "no occupancy figure: not claimed", in: withGPU(ep(nil), idle), none: "gpu_small_batches"},
		{name: "no requests: an idle GPU is right", in: withGPU(ep(func(e *Endpoint) {
			e.State.BatchPerStep = model.Some(1)
			e.State.RequestsPS = model.Some(0)
		}), idle), none: "gpu_small_batches"},
	})
}

// Issue 14 item 19: HTTP status metrics (vLLM's instrumentation): a 5xx
// share is a finding; exact 429/503 codes are rejections.
func TestHTTPStatusErrorsAndRejections(t *testing.T) {
	http := func(all, bad, rej float64) func(*Endpoint) {
		return func(e *Endpoint) {
			e.State.HTTPPS, e.State.HTTP5xxPS = model.Some(all), model.Some(bad)
			if rej >= 0 {
				e.State.HTTPRejectedPS = model.Some(rej)
			}
			e.State.From = map[string]string{"http_5xx": `http_requests_total{status="5xx"}`}
		}
	}
	runCases(t, []ruleCase{
		{name: "5xx share", in: input(ep(http(2, 0.2, -1))), want: "api_http_errors", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || !hasEvidence(f, "12 5xx of 120 API responses") || f.Evidence[0].Source != `http_requests_total{status="5xx"}` {
				t.Errorf("%v %+v", f.Severity, f.Evidence)
			}
		}},
		{name: "few 5xx", in: input(ep(http(2, 0.02, -1))), none: "api_http_errors"},
		{name: "too few responses to judge", in: input(ep(http(0.2, 0.1, -1))), none: "api_http_errors"},
		{name: "exact 429s", in: input(ep(http(2, 0, 0.1))), want: "api_rejections", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "6 of 120 requests rejected") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
	})
}

// Issue 14 item 21: TensorRT-LLM's paused requests are its preemptions.
func TestTRTPausedIsKVPressure(t *testing.T) {
	trt := func(paused float64) func(*Endpoint) {
		return func(e *Endpoint) {
			e.Identity.Engine = model.TRTLLM
			e.State.PreemptionsPS, e.State.Preemptions = model.None, model.None
			e.State.Paused, e.State.KVUsage = model.Some(paused), model.Some(0.98)
		}
	}
	runCases(t, []ruleCase{
		{name: "paused", in: input(ep(trt(6))), want: "kv_preemption", check: func(t *testing.T, f *Finding) {
			if f.Title != "KV pressure: 6 requests paused" || !hasAction(f, "--kv_cache_free_gpu_memory_fraction") {
				t.Errorf("%s %+v", f.Title, f.Actions)
			}
		}},
		{name: "none paused", in: input(ep(trt(0))), none: "kv_preemption"},
	})
}

// Issue 27 item 5: a share of 4xx is judged, with the reasons the log gave.
func TestClientErrorsRule(t *testing.T) {
	with := func(all, client float64) func(*Endpoint) {
		return func(e *Endpoint) {
			e.State.HTTPPS, e.State.HTTP4xxPS = model.Some(all), model.Some(client)
			e.State.RateWindow = time.Minute
		}
	}
	in := input(ep(with(2, 0.3)))
	in.LogsOn = true
	in.Events = []model.Event{
		{Time: t0.Add(-time.Minute), Endpoint: url, Source: "log", Kind: "vllm_mm_limit", Severity: model.SevWarn, Title: "request over the per-prompt image limit (1)"},
		{Time: t0.Add(-30 * time.Second), Endpoint: url, Source: "log", Kind: "vllm_mm_limit", Severity: model.SevWarn, Title: "request over the per-prompt image limit (1)"},
	}
	runCases(t, []ruleCase{
		{name: "15 % 4xx with reasons", in: in, want: "api_client_errors", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "18 4xx of 120 API responses") || !hasEvidence(f, "2× request over the per-prompt image limit") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "no log: reasons unknown", in: input(ep(with(2, 0.3))), want: "api_client_errors", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "the reasons are not in the metrics") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "2 % 4xx", in: input(ep(with(2, 0.04))), none: "api_client_errors"},
		{name: "too few responses", in: input(ep(with(0.1, 0.05))), none: "api_client_errors"},
	})
}
