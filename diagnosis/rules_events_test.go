package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func logEvent(kind string, fields map[string]string) model.Event {
	return model.Event{Time: t0.Add(-time.Minute), Source: "log", Kind: kind, Severity: model.SevCrit, Title: kind, Line: "line of " + kind, Fields: fields}
}

func withEvents(e Endpoint, evs ...model.Event) Input {
	in := input(e)
	in.LogsOn = true
	in.Events = evs
	return in
}

func TestEventRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "max len vs KV uses vLLM's estimate", in: withEvents(ep(nil), logEvent("vllm_max_len_kv", map[string]string{"max_model_len": "131072", "estimated_max_len": "24650"})),
			want: "startup_max_len_kv", check: func(t *testing.T, f *Finding) {
				if f.Actions[0].Change != "--max-model-len 24576" {
					t.Errorf("%+v", f.Actions[0])
				}
			}},
		{name: "old wording uses the KV token count", in: withEvents(ep(nil), logEvent("vllm_max_len_kv_old", map[string]string{"kv_tokens": "20000"})),
			want: "startup_max_len_kv", check: func(t *testing.T, f *Finding) {
				if f.Actions[0].Change != "--max-model-len 19968" {
					t.Errorf("%+v", f.Actions[0])
				}
			}},
		{name: "sampler warm-up OOM halves max-num-seqs", in: withEvents(ep(nil), logEvent("vllm_sampler_warmup_oom", map[string]string{"num_reqs": "256"})),
			want: "startup_warmup_oom", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-num-seqs 128") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "free memory at start computes the fraction that fits", in: withEvents(ep(nil), logEvent("vllm_free_mem_startup", map[string]string{"free_gib": "40.0", "total_gib": "80.0"})),
			want: "startup_vram_held", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--gpu-memory-utilization 0.48") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "sglang mem fraction raised from its value", in: withEvents(ep(func(e *Endpoint) { e.Identity.Engine = model.SGLang }), logEvent("sglang_mem_fraction", map[string]string{"mem_fraction_static": "0.7"})),
			want: "startup_mem_fraction", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--mem-fraction-static 0.75") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "cuda oom", in: withEvents(ep(nil), logEvent("torch_cuda_oom", nil)), want: "cuda_oom"},
		{name: "ollama runner oom", in: withEvents(ep(func(e *Endpoint) { e.Identity.Engine = model.Ollama }), logEvent("ollama_runner_oom", nil)),
			want: "ggml_oom", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "OLLAMA_CONTEXT_LENGTH") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "port in use names the port", in: withEvents(ep(nil), logEvent("errno98_address_in_use", map[string]string{"port": "8000"})),
			want: "startup_port_in_use", check: func(t *testing.T, f *Finding) {
				if !hasAction(f, ":8000") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "gated model", in: withEvents(ep(nil), logEvent("hf_gated", nil)), want: "startup_gated_model"},
		{name: "nccl", in: withEvents(ep(nil), logEvent("nccl_watchdog", nil)), want: "nccl_failure"},
		{name: "event older than the window is ignored", in: withEvents(ep(nil), func() model.Event {
			x := logEvent("torch_cuda_oom", nil)
			x.Time = t0.Add(-11 * time.Minute)
			return x
		}()), none: "cuda_oom"},
		{name: "stats lines are not findings", in: withEvents(ep(nil), logEvent("vllm_stats", nil)), none: "vllm_stats"},
	})
}

func TestEventsRepeatedMakeOneFinding(t *testing.T) {
	a, b := logEvent("torch_cuda_oom", nil), logEvent("torch_cuda_oom", nil)
	b.Time, b.Line = t0.Add(-10*time.Second), "newest line"
	rep := Evaluate(withEvents(ep(nil), a, b), DefaultConfig())
	n := 0
	for _, f := range rep.Findings {
		if f.ID == "cuda_oom" {
			n++
			if !hasEvidence(&f, "newest line") {
				t.Errorf("%+v", f.Evidence)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d findings", n)
	}
}

func TestNoLogSaysSo(t *testing.T) {
	rep := Evaluate(input(ep(nil)), DefaultConfig())
	found := false
	for _, m := range rep.Missing {
		if m == needNames[2].name {
			found = true
		}
	}
	if !found {
		t.Fatalf("%v", rep.Missing)
	}
}

func TestEngineInferredFromTheLog(t *testing.T) {
	down := ep(func(e *Endpoint) {
		e.Identity = model.Identity{}
		e.Scrape.ErrKind, e.Scrape.Err = model.ErrRefused, "connection refused"
		e.State = model.State{}
	})
	oom, warm := logEvent("torch_cuda_oom", nil), logEvent("vllm_sampler_warmup_oom", map[string]string{"num_reqs": "1024"})
	oom.Endpoint, warm.Endpoint = url, url
	rep := Evaluate(withEvents(down, oom, warm), DefaultConfig())
	f := byID(rep, "cuda_oom")
	if f == nil || len(f.Actions) != 3 || !hasAction(f, "--gpu-memory-utilization 0.05 lower than it serves with now") || hasAction(f, "SGLang") {
		t.Fatalf("%+v", f)
	}
	if top := rep.Findings[0]; top.ID != "startup_warmup_oom" {
		t.Fatalf("top %s, want the specific start-up failure before the generic OOM and the down endpoint: %v", top.ID, ids(rep.Findings))
	}
}

func TestEventsNewestWinsWhateverTheOrder(t *testing.T) {
	a, b := logEvent("torch_cuda_oom", nil), logEvent("torch_cuda_oom", nil)
	b.Time, b.Line = t0.Add(-10*time.Second), "newest line"
	f := byID(Evaluate(withEvents(ep(nil), b, a), DefaultConfig()), "cuda_oom") // newest first, as the events pane keeps them
	if f == nil || !hasEvidence(f, "newest line") {
		t.Fatalf("%+v", f)
	}
}

func TestFailureBeforeARestartIsNoLongerCritical(t *testing.T) {
	x := logEvent("cuda_illegal_access", nil)
	x.Time = t0.Add(-3 * time.Minute)
	serving := ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0.Add(-30 * time.Second)} })
	f := byID(Evaluate(withEvents(serving, x), DefaultConfig()), "cuda_illegal_access")
	if f == nil || f.Severity != model.SevWarn || !hasEvidence(f, "serving again since 04:59:30") {
		t.Fatalf("%+v", f)
	}
	// Serving for two minutes since: history (INFO), not news.
	serving = ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0.Add(-2 * time.Minute)} })
	if f := byID(Evaluate(withEvents(serving, x), DefaultConfig()), "cuda_illegal_access"); f == nil || f.Severity != model.SevInfo {
		t.Fatalf("two minutes after the recovery: %+v", f)
	}
	down := ep(func(e *Endpoint) {
		e.State.Restarts = []time.Time{t0.Add(-2 * time.Minute)}
		e.Scrape.ErrKind = model.ErrRefused
	})
	if f := byID(Evaluate(withEvents(down, x), DefaultConfig()), "cuda_illegal_access"); f == nil || f.Severity != model.SevCrit {
		t.Fatalf("down again: %+v", f)
	}
}

// Every kind an event rule maps opens that rule's finding, quoting the log
// line and carrying at least one action, on each engine the rule can meet.
func TestEveryEventKindOpensItsFinding(t *testing.T) {
	for _, kind := range EventKinds() {
		r := eventRuleOf[kind]
		{
			for _, eng := range []model.Engine{model.VLLM, model.SGLang, model.TGI, model.LlamaCpp, model.TRTLLM, model.Ollama} {
				rep := Evaluate(withEvents(ep(func(e *Endpoint) { e.Identity.Engine = eng }), logEvent(kind, nil)), DefaultConfig())
				f := byID(rep, r.id)
				if f == nil {
					t.Errorf("%s on %s: no %s finding (got %v)", kind, eng, r.id, ids(rep.Findings))
					continue
				}
				if len(f.Actions) == 0 || f.Actions[0].Change == "" {
					t.Errorf("%s on %s: %s has no action", kind, eng, r.id)
				}
				if !hasEvidence(f, "line of "+kind) {
					t.Errorf("%s on %s: the log line is not in the evidence: %+v", kind, eng, f.Evidence)
				}
				if f.Category != r.category || f.Title == "" {
					t.Errorf("%s on %s: category %q title %q", kind, eng, f.Category, f.Title)
				}
			}
		}
	}
}

// Which failure an engine's log line means lives with the line
// (engines.LogLine.Finding): every finding a line names is one the
// diagnosis has, and every log-event finding is opened by some line.
func TestEveryLineFindingIsAnEventRule(t *testing.T) {
	opened := map[string]bool{}
	for _, l := range engines.LogLines() {
		if l.Finding == "" {
			continue
		}
		if eventRuleOf[l.ID] == nil || eventRuleOf[l.ID].id != l.Finding {
			t.Errorf("log line %s names finding %q, which no event rule has", l.ID, l.Finding)
		}
		opened[l.Finding] = true
	}
	for _, r := range eventRules {
		if !opened[r.id] {
			t.Errorf("no log line opens %s", r.id)
		}
	}
}

// Issue 27: a critical line without a fix of its own is a finding too,
// with its line; a CUDA OOM before the engine served (graph capture) puts
// --enforce-eager first.
func TestCriticalLinesAreFindings(t *testing.T) {
	in := input(ep(nil))
	in.LogsOn = true
	in.Events = []model.Event{{Time: t0.Add(-time.Minute), Endpoint: url, Source: "log", Kind: "vllm_engine_start_failed", Severity: model.SevCrit,
		Category: "availability", Title: "vLLM engine failed to start", Line: "ERROR 05-26 07:50:26 [core.py:396] EngineCore failed to start."}}
	f := byID(Evaluate(in, DefaultConfig()), "log_critical")
	if f == nil || f.Severity != model.SevCrit || f.Title != "engine log: vLLM engine failed to start" || !hasEvidence(f, "EngineCore failed to start.") {
		t.Fatalf("%+v", f)
	}
	// A warning line without a fix stays an event.
	in.Events[0].Severity = model.SevWarn
	if f := byID(Evaluate(in, DefaultConfig()), "log_critical"); f != nil {
		t.Fatalf("warning became %+v", f)
	}

	starting := input(ep(func(e *Endpoint) { e.Life = model.LifeStarting }))
	starting.LogsOn = true
	starting.Events = []model.Event{{Time: t0.Add(-time.Minute), Endpoint: url, Source: "log", Kind: "torch_cuda_oom", Severity: model.SevCrit,
		Title: "GPU out of memory: tried to allocate 2.00 GiB"}}
	f = byID(Evaluate(starting, DefaultConfig()), "cuda_oom")
	if f == nil || len(f.Actions) == 0 || !strings.HasPrefix(f.Actions[0].Change, "--enforce-eager") {
		t.Fatalf("%+v", f)
	}
	serving := starting
	serving.Endpoints = []Endpoint{ep(func(e *Endpoint) { e.Life = model.LifeServing })}
	if f := byID(Evaluate(serving, DefaultConfig()), "cuda_oom"); f == nil || hasAction(f, "--enforce-eager") {
		t.Fatalf("while serving: %+v", f)
	}
}
