package diagnosis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Issue 31, item 7: itl_bandwidth ("small batch … few requests running",
// quantise, TP, speculate) fired 8× on an engine with 17 running, 15
// waiting and 12–29 preemptions/s. With no knee found the finding says the
// batch is not small and points at the preemptions, never at bandwidth.
func TestITLWithoutAKneeUnderLoadIsNotBandwidth(t *testing.T) {
	in := input(ep(func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.PreemptionsPS = model.Some(17), model.Some(15), model.Some(12.4)
		e.State.Latency[model.ITL] = dist(0.06, 0.09, 0.12, 0.065)
	}))
	rep := Evaluate(in, DefaultConfig())
	if f := byID(rep, "itl_bandwidth"); f != nil {
		t.Fatalf("a loaded, preempting engine called bandwidth-bound: %+v", f)
	}
	f := byID(rep, "itl_loaded")
	if f == nil {
		t.Fatalf("no ITL finding: %v", ids(rep.Findings))
	}
	if !hasEvidence(f, "17 running, 15 waiting, 12.4 preemptions/s") || !strings.Contains(f.Cause, "preemptions/s") {
		t.Errorf("evidence/cause do not name the load: %+v / %q", f.Evidence, f.Cause)
	}
	for _, a := range f.Actions {
		for _, bad := range []string{"quantiz", "tensor-parallel", "speculative"} {
			if strings.Contains(a.Change, bad) {
				t.Errorf("bandwidth advice for a loaded engine: %q", a.Change)
			}
		}
	}
	// An unknown batch is not a small one either.
	in = input(ep(func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.PreemptionsPS = model.None, model.None, model.None
		e.State.Latency[model.ITL] = dist(0.06, 0.09, 0.12, 0.065)
	}))
	if f := byID(Evaluate(in, DefaultConfig()), "itl_bandwidth"); f != nil {
		t.Fatalf("an unknown batch called small: %+v", f)
	}
}

// Issue 31, item 26: the real llama-server on a CPU-only machine (no GPU
// in NVML) was told about HBM and "-ngl 999 so no layer runs on the
// CPU". With no GPU the finding says so and advises for a CPU.
func TestITLOnACPUOnlyMachineAdvisesForACPU(t *testing.T) {
	in := input(ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		e.State.Running, e.State.Waiting = model.Some(2), model.Some(0)
		e.State.Latency[model.ITL] = dist(0.15, 0.2, 0.26, 0.15)
	}))
	in.NoGPU = "no NVIDIA driver: libnvidia-ml.so.1 not found"
	f := byID(Evaluate(in, DefaultConfig()), "itl_bandwidth")
	if f == nil {
		t.Fatal("no ITL finding")
	}
	text := f.Title + f.Cause
	for _, a := range f.Actions {
		text += " " + a.Change + " " + a.Why
	}
	for _, bad := range []string{"HBM", "-ngl 999", "GPU's bandwidth"} {
		if strings.Contains(text, bad) {
			t.Errorf("GPU advice on a machine without a GPU (%q): %s", bad, text)
		}
	}
	if !hasEvidence(f, "no GPU on this machine") || !hasAction(f, "-t <physical cores>") || !strings.Contains(f.Title, "CPU") {
		t.Errorf("the CPU is not named: %+v", f)
	}
	// A remote endpoint's machine is not the one NVML looked at.
	in.Endpoints[0].URL = "http://10.0.0.7:8080"
	if f := byID(Evaluate(in, DefaultConfig()), "itl_bandwidth"); f == nil || strings.Contains(f.Title, "CPU") {
		t.Errorf("a remote engine judged by this machine's GPUs: %+v", f)
	}
}

// Issue 31, item 16: "checked" listed "health routes say healthy",
// "aborted/errored share" and "TTFT p99 within the SLO" as passed with no
// data (health unknown, no request finished, the TTFT rule handing off to
// the ITL rule); "missing" said "TTFT (vLLM does not expose it)" when the
// scrape had failed and "(TensorRT-LLM does not expose it)" on Triton.
func TestCheckedClaimsOnlyWhatWasJudged(t *testing.T) {
	checked := func(rep Report, prefix string) bool {
		for _, c := range rep.Checked {
			if strings.HasPrefix(c, prefix) {
				return true
			}
		}
		return false
	}
	missing := func(rep Report) string { return strings.Join(rep.Missing, "\n") }

	rep := Evaluate(input(ep(func(e *Endpoint) { e.Identity.Health = "" })), DefaultConfig())
	if checked(rep, "health routes say healthy") || !strings.Contains(missing(rep), "health (no health route answered)") {
		t.Errorf("health unknown: checked %q, missing %q", rep.Checked, rep.Missing)
	}
	rep = Evaluate(input(ep(finishes(map[string]float64{"stop": 3}))), DefaultConfig())
	if checked(rep, "share of aborted/errored requests") || !strings.Contains(missing(rep), "aborted/errored share (3 requests finished in the window; 20 needed") {
		t.Errorf("3 finished: checked %q, missing %q", rep.Checked, rep.Missing)
	}
	// TTFT p99 400 ms over the 200 ms SLO with short prompts in slow decode
	// steps: the ITL finding explains it, the TTFT rule did not pass.
	rep = Evaluate(input(ep(func(e *Endpoint) {
		e.State.Latency[model.TTFT] = dist(0.15, 0.3, 0.4, 0.17)
		e.State.Latency[model.ITL] = dist(0.06, 0.09, 0.12, 0.065)
		e.State.PromptTPS, e.State.RequestsPS = model.Some(200), model.Some(2) // 100-token prompts
	})), DefaultConfig())
	if checked(rep, "TTFT p99 within the SLO") {
		t.Errorf("TTFT over its SLO listed as within it: %q (findings %v)", rep.Checked, ids(rep.Findings))
	}
	rep = Evaluate(input(ep(func(e *Endpoint) {
		delete(e.State.Latency, model.TTFT)
		e.Scrape.Err, e.Scrape.ErrKind = "metrics body is not Prometheus text", model.ErrMalformed
	})), DefaultConfig())
	if m := missing(rep); strings.Contains(m, "does not expose") || !strings.Contains(m, "TTFT (the newest scrape failed: malformed)") {
		t.Errorf("failed scrape: missing %q", rep.Missing)
	}
	rep = Evaluate(input(ep(func(e *Endpoint) {
		e.Identity.Engine = model.Triton
		delete(e.State.Latency, model.TTFT)
	})), DefaultConfig())
	if m := missing(rep); !strings.Contains(m, "TTFT (Triton does not expose it)") {
		t.Errorf("Triton: missing %q", rep.Missing)
	}
}

// Issue 31, item 17: queue_backlog said "at the concurrency cap (162)"
// while the same report's missing said the cap is not exposed; and
// `diagnose --from` said the cap was unknown while its run's config read
// max_num_seqs (default) → 8, and advised --data-parallel-size 2.
func TestConcurrencyCapInferredSaysSoAndTheRunsFlagIsRead(t *testing.T) {
	rep := Evaluate(input(ep(func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.KVUsage = model.Some(162), model.Some(300), model.Some(0.4)
		delete(e.State.Latency, model.ITL)
	})), DefaultConfig())
	f := byID(rep, "queue_backlog")
	if f == nil {
		t.Fatalf("no backlog: %v", ids(rep.Findings))
	}
	if strings.Contains(f.Cause, "at the concurrency cap (162)") || !strings.Contains(f.Cause, "cap by inference") {
		t.Errorf("an inferred cap stated as known: %q", f.Cause)
	}
	rep = Evaluate(input(ep(func(e *Endpoint) {
		e.State.Running, e.State.Waiting, e.State.KVUsage = model.Some(8), model.Some(60), model.Some(0.1)
		e.Runs = []model.Run{{N: 1, Config: map[string]string{"args.max_num_seqs": "8"}}}
	})), DefaultConfig())
	f = byID(rep, "queue_backlog")
	if f == nil {
		t.Fatalf("no backlog: %v", ids(rep.Findings))
	}
	if strings.Contains(f.Cause, "cap unknown") || !strings.Contains(f.Cause, "at the concurrency cap (8)") {
		t.Errorf("the run's --max-num-seqs 8 not read: %q", f.Cause)
	}
	if len(f.Actions) == 0 || !strings.HasPrefix(f.Actions[0].Change, "--max-num-seqs ") {
		t.Errorf("first action %+v, want the cap raised from 8", f.Actions)
	}
}

// Issue 31, item 25: the real llama-server under overload (-c 2048 -np 2,
// six streams of ~1 000-token prompts, its log attached) was told first to
// quantise the KV cache ("halves the KV cache": llama.cpp's pool is -c
// tokens whatever their type) and second "-np 1 -kvu (keep -c)", halving
// the slots of an engine whose problem is queueing. The lever is a larger
// -c, each slot at least as large as the prompts the log shows rejected.
func TestLlamaServerQueueAdvisesALargerContext(t *testing.T) {
	reject := func(n int) model.Event {
		line := fmt.Sprintf("srv  send_error: task id = %d, error: request (%d tokens) exceeds the available context size (1024 tokens), try increasing it", n, n)
		return model.Event{Time: t0, Endpoint: url, Source: "log", Kind: "llamacpp_prompt_too_long", Severity: model.SevWarn, Category: "config",
			Title: line, Line: line, Fields: map[string]string{"n_prompt": fmt.Sprint(n), "n_ctx": "1024", "engines": "llamacpp"}}
	}
	in := input(ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = url, url
		e.Identity = model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m", MaxContext: 2048}}}
		e.State.Running, e.State.Waiting, e.State.MaxRunning = model.Some(2), model.Some(4), model.Some(2)
		e.State.KVUsage, e.State.KVCapacityTokens = model.Some(0.98), model.Some(2048)
		e.State.Latency[model.TTFT] = dist(2.1, 3.8, 4.4, 2.3)
		e.State.Latency[model.Queue] = dist(1.8, 3.3, 3.9, 2.0)
		delete(e.State.Latency, model.Prefill)
		e.State.Info = nil
	}))
	in.Events = []model.Event{reject(1034), reject(1052)}
	in.LogsOn = true
	rep := Evaluate(in, DefaultConfig())
	var f *Finding
	for i := range rep.Findings {
		if strings.HasPrefix(rep.Findings[i].ID, "ttft_") || rep.Findings[i].ID == "queue_backlog" {
			f = &rep.Findings[i]
			break
		}
	}
	if f == nil || len(f.Actions) == 0 {
		t.Fatalf("no queueing finding: %v", ids(rep.Findings))
	}
	if got := f.Actions[0].Change; got != "-c 4096 (from 2048)" {
		t.Errorf("first action %q, want -c 4096 (from 2048): 2 slots of 2048 for prompts of up to 1052 tokens", got)
	}
	if !strings.Contains(f.Actions[0].Why, "up to 1052 tokens rejected by a 1024-token slot") {
		t.Errorf("why %q", f.Actions[0].Why)
	}
	for _, a := range f.Actions {
		if strings.Contains(a.Change, "-np 1") {
			t.Errorf("halves the slots of a queueing engine: %q", a.Change)
		}
		if strings.Contains(a.Change, "-ctk") && !strings.Contains(a.Why, "admits nothing more") {
			t.Errorf("quantising advised as if it grew the pool: %+v", a)
		}
	}
}

// The first-minute review: `diagnose` on llama-server and Ollama listed
// "preemptions/retractions per second", "no KV hand-over fails" and "KV
// transfer a small part of each decode instance's TTFT" as checked, with
// no preemption counter and no hand-over to judge. A rule with nothing of
// its kind to judge is neither checked nor missing; on vLLM with the
// counters it is checked.
func TestNothingToJudgeIsNotChecked(t *testing.T) {
	has := func(rep Report, prefix string) bool {
		for _, c := range rep.Checked {
			if strings.HasPrefix(c, prefix) {
				return true
			}
		}
		return false
	}
	idleChecks := []string{"preemptions/retractions per second", "no KV hand-over fails", "KV transfer a small part"}
	llama := ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		e.State.PreemptionsPS, e.State.Preemptions = model.Opt{}, model.Opt{}
	})
	rep := Evaluate(input(llama), DefaultConfig())
	for _, c := range idleChecks {
		if has(rep, c) {
			t.Errorf("llama.cpp: %q listed as checked: %q", c, rep.Checked)
		}
		if strings.Contains(strings.Join(rep.Missing, "\n"), c) {
			t.Errorf("llama.cpp: %q listed as missing", c)
		}
	}
	vllm := ep(func(e *Endpoint) {
		e.State.KVFailPS = model.Some(0)
		e.State.Latency[model.KVTransfer] = model.Dist{Exposed: true, Mean: model.Some(0.002), Count: 40}
	})
	rep = Evaluate(input(vllm), DefaultConfig())
	for _, c := range idleChecks {
		if !has(rep, c) {
			t.Errorf("vLLM with the counters: %q not listed as checked: %q", c, rep.Checked)
		}
	}
	// Two engines, one that preempts: the rule judged one, so it is checked.
	rep = Evaluate(input(llama, ep(func(e *Endpoint) { e.URL = "http://127.0.0.1:9001" })), DefaultConfig())
	if !has(rep, "preemptions/retractions per second") {
		t.Errorf("vLLM beside llama.cpp: preemptions not checked: %q", rep.Checked)
	}
}
