package diagnosis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func down(kind model.ScrapeErrKind, msg string) func(*Endpoint) {
	return func(e *Endpoint) {
		e.Scrape.Err, e.Scrape.ErrKind = msg, kind
		e.State = model.State{}
	}
}

func TestAvailabilityRules(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "refused, never answered: check the port", in: input(ep(func(e *Endpoint) {
			down(model.ErrRefused, "connection refused")(e)
			e.LastOK = time.Time{}
		})), want: "endpoint_down",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit || !hasEvidence(f, "connection refused") || !hasAction(f, "8000") || !hasEvidence(f, "never answered") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "refused after answering here: no port advice (QA #23)", in: input(ep(down(model.ErrRefused, "connection refused"))), want: "endpoint_down",
			check: func(t *testing.T, f *Finding) {
				if hasAction(f, "8000") || !strings.Contains(f.Cause, "answered on this address before") || !hasEvidence(f, "last metrics") {
					t.Errorf("%s %+v", f.Cause, f.Actions)
				}
			}},
		{name: "timeout is down with its own cause", in: input(ep(down(model.ErrTimeout, "deadline exceeded"))), want: "endpoint_down",
			check: func(t *testing.T, f *Finding) {
				if !strings.Contains(f.Cause, "does not answer in time") || !strings.Contains(f.Actions[0].Change, "/health") || hasAction(f, "exited") {
					t.Errorf("cause %q", f.Cause)
				}
			}},
		{name: "healthy is not down", in: input(ep(nil)), none: "endpoint_down"},
		{name: "404 is not down", in: input(ep(down(model.ErrNotFound, "404"))), none: "endpoint_down"},
		{name: "unhealthy 503", in: input(ep(func(e *Endpoint) { e.Identity.Health = model.HealthUnhealthy })), want: "health_unhealthy",
			check: func(t *testing.T, f *Finding) {
				if !strings.Contains(f.Cause, "EngineDeadError") {
					t.Errorf("vLLM cause not specific: %q", f.Cause)
				}
			}},
		{name: "loading is cold start, not unhealthy", in: input(ep(func(e *Endpoint) { e.Identity.Health = model.HealthLoading })), want: "cold_start", none: "health_unhealthy"},
		{name: "sglang 404 names --enable-metrics", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "metrics endpoint returned 404")(e)
			e.Identity.Engine = model.SGLang
			e.Scrape.Hint = "start SGLang with --enable-metrics"
		})), want: "metrics_unavailable",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--enable-metrics") || len(f.Actions) != 1 || !hasEvidence(f, "start SGLang") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		{name: "llama.cpp 404 names --metrics", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "404")(e)
			e.Identity.Engine = model.LlamaCpp
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--metrics") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "llama-server without --metrics answers 501: the title says 501, not 404", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "http://127.0.0.1:8080/metrics: 501 Not Implemented")(e)
			e.Identity.Engine = model.LlamaCpp
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if f.Title != "metrics endpoint returns 501" || !hasAction(f, "--metrics") {
				t.Errorf("%q %+v", f.Title, f.Actions)
			}
		}},
		{name: "vLLM 404: wrong port, route or proxy, not a flag", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "http://h:8000/metrics: 404 Not Found")(e)
			e.Identity.Engine = model.VLLM
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "API port") || hasAction(f, "--disable-log-stats") || strings.Contains(f.Cause, "switch") ||
				f.Cause != "vLLM always serves /metrics on its API port: this is another port or route, or a proxy that does not forward /metrics" {
				t.Errorf("cause %q actions %+v", f.Cause, f.Actions)
			}
		}},
		{name: "vLLM metrics without vllm: families: --disable-log-stats", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "http://h:8000/metrics answers, but without any vllm: metrics")(e)
			e.Identity.Engine = model.VLLM
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if len(f.Actions) != 1 || !hasAction(f, "without --disable-log-stats") || !strings.Contains(f.Cause, "--disable-log-stats") ||
				f.Title != "metrics endpoint has no vllm: metrics" || f.Cause != "vLLM started with --disable-log-stats serves /metrics without its vllm: metrics" ||
				f.Actions[0].Why != "that flag turns off vLLM's stats, the Prometheus ones included" {
				t.Errorf("cause %q actions %+v", f.Cause, f.Actions)
			}
		}},
		{name: "--engine forced wrong: title and action name it", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "http://h:8000/metrics answers, but without any tgi_ metrics")(e)
			e.Identity.Engine = model.TGI
			e.Scrape.Hint = "these look like vllm metrics (vllm:…): drop --engine tgi (llmtop detects the engine) or use --engine vllm"
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if f.Title != "metrics endpoint has no tgi_ metrics" || strings.Contains(f.Title, "404") ||
				!hasAction(f, "drop --engine") || !strings.Contains(f.Actions[0].Why, "--engine vllm") {
				t.Errorf("%q %q %+v", f.Title, f.Cause, f.Actions)
			}
		}},
		{name: "unknown engine 404 lists every engine", in: input(ep(func(e *Endpoint) {
			down(model.ErrNotFound, "404")(e)
			e.Identity.Engine = model.Unknown
		})), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if len(f.Actions) < 5 || !hasAction(f, "SGLang: --enable-metrics") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "500 on metrics", in: input(ep(down(model.ErrServer, "500"))), want: "metrics_unavailable"},
		{name: "auth", in: input(ep(down(model.ErrAuth, "401"))), want: "metrics_unavailable", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--api-key") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "one restart warns", in: input(ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0.Add(-time.Minute)} })), want: "restarts",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevWarn {
					t.Errorf("sev %v", f.Severity)
				}
			}},
		{name: "three restarts without a ledger are not called a crash loop", in: input(ep(func(e *Endpoint) {
			e.State.Restarts = []time.Time{t0.Add(-9 * time.Minute), t0.Add(-5 * time.Minute), t0.Add(-time.Minute)}
		})), want: "restarts", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || strings.Contains(f.Title, "crash") || !strings.Contains(f.Title, "cause not seen") {
				t.Errorf("%v %q: counter resets alone cannot tell a crash", f.Severity, f.Title)
			}
		}},
		{name: "three crashes in the ledger are a crash loop", in: input(ep(func(e *Endpoint) {
			e.Runs = ledger(model.RunCrash, model.RunCrash, model.RunCrash)
		})), want: "restarts", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || f.Title != "engine crash loop" {
				t.Errorf("%v %q", f.Severity, f.Title)
			}
		}},
		{name: "a kill (no crash line) is not told to fix the crash line", in: input(ep(func(e *Endpoint) {
			e.Runs = ledger(model.RunCrash)
			e.Runs[0].EndLine, e.Runs[0].EndReason = "", "stopped answering with no shutdown line in its log: killed (SIGKILL, the OOM killer) or crashed"
		})), want: "restarts", check: func(t *testing.T, f *Finding) {
			if hasAction(f, "crash line") || !hasAction(f, "OOM killer") || strings.Contains(f.Cause, "supervisor") {
				t.Errorf("%q %+v", f.Cause, f.Actions)
			}
		}},
		{name: "planned restarts never make a crash loop", in: input(ep(func(e *Endpoint) {
			e.Runs = ledger(model.RunPlanned, model.RunPlanned, model.RunCrash, model.RunPlanned)
			e.Runs[3].Config = map[string]string{"args.max_num_seqs": "128"}
			e.Runs[4].Config = map[string]string{"args.max_num_seqs": "64"}
		})), want: "restarts", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevInfo || f.Title != "planned restart: args.max_num_seqs 128 → 64" {
				t.Errorf("%v %q", f.Severity, f.Title)
			}
		}},
		{name: "old restart outside the window", in: input(ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0.Add(-restartWindow - time.Second)} })), none: "restarts"},
		{name: "slow TTFT right after restart is warm-up", in: input(ep(func(e *Endpoint) {
			e.State.Restarts = []time.Time{t0.Add(-30 * time.Second)}
			e.State.Latency[model.TTFT] = dist(0.3, 0.9, 1.2, 0.4)
		})), want: "cold_start"},
		{name: "slow TTFT long after restart is not warm-up", in: input(ep(func(e *Endpoint) {
			e.State.Restarts = []time.Time{t0.Add(-10 * time.Minute)}
			e.State.Latency[model.TTFT] = dist(0.3, 0.9, 1.2, 0.4)
		})), none: "cold_start"},
	})
}

func TestRestartCitesLogEventsNearIt(t *testing.T) {
	in := input(ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0.Add(-time.Minute)} }))
	in.Events = []model.Event{{Time: t0.Add(-70 * time.Second), Source: "log", Kind: "torch_cuda_oom", Severity: model.SevCrit, Title: "GPU out of memory: tried to allocate 2.00 GiB"}}
	f := byID(Evaluate(in, DefaultConfig()), "restarts")
	if f == nil || !hasEvidence(f, "GPU out of memory") {
		t.Fatalf("%+v", f)
	}
}

// "Checked" lists only rules that passed: never "every endpoint answers"
// under an "endpoint down" finding (QA #13).
func TestCheckedListsOnlyPassingRules(t *testing.T) {
	rep := Evaluate(input(ep(down(model.ErrRefused, "connection refused"))), DefaultConfig())
	if byID(rep, "endpoint_down") == nil {
		t.Fatalf("findings %v", ids(rep.Findings))
	}
	all := strings.Join(rep.Checked, "; ")
	if strings.Contains(all, "every endpoint answers") || len(rep.Checked) == 0 {
		t.Errorf("checked: %s", all)
	}
	healthy := Evaluate(input(ep(nil)), DefaultConfig())
	if len(healthy.Findings) != 0 || !strings.Contains(strings.Join(healthy.Checked, "; "), "every endpoint answers") {
		t.Errorf("healthy: findings %v checked %v", ids(healthy.Findings), healthy.Checked)
	}
}

// ledger builds runs ending as given, each a minute long, ending before t0,
// plus the current one.
func ledger(ends ...model.RunEnd) []model.Run {
	var runs []model.Run
	start := t0.Add(-time.Duration(len(ends)+1) * time.Minute)
	for i, how := range ends {
		end := start.Add(50 * time.Second)
		runs = append(runs, model.Run{N: i + 1, Started: start, Ended: &end, End: how, EndLine: "line " + string(how)})
		start = start.Add(time.Minute)
	}
	return append(runs, model.Run{N: len(ends) + 1, Started: start, End: model.RunRunning})
}

// `llmtop diagnose` on a SIGSTOPped llama-server listed "health routes say
// healthy; metrics endpoints answer" as checked: neither answered.
func TestDownEndpointIsNotCheckedHealthy(t *testing.T) {
	for _, kind := range []model.ScrapeErrKind{model.ErrTimeout, model.ErrRefused} {
		in := input(ep(func(e *Endpoint) {
			down(kind, "http://127.0.0.1:8000: no answer within 2s")(e)
			e.Identity.Health = model.HealthDown
		}))
		rep := Evaluate(in, DefaultConfig())
		for _, c := range rep.Checked {
			if strings.Contains(c, "health routes say healthy") || strings.Contains(c, "metrics endpoints answer") {
				t.Errorf("%s: checked %q", kind, c)
			}
		}
		missing := strings.Join(rep.Missing, "\n")
		if !strings.Contains(missing, "no health route answered") || !strings.Contains(missing, "the metrics route") {
			t.Errorf("%s: missing %q", kind, missing)
		}
	}
}

// A SIGSTOPped engine: /proc says its process is stopped (state T), so the
// finding says so and how to resume it, instead of guessing hung or
// overloaded.
func TestStoppedEngineIsSaidStopped(t *testing.T) {
	in := input(ep(func(e *Endpoint) {
		down(model.ErrTimeout, "http://127.0.0.1:8000: no answer within 2s")(e)
		e.Port = &model.PortOwner{Port: 8000, PID: 4711, Cmdline: "llama-server -m small.gguf", Stopped: true}
	}))
	f := byID(Evaluate(in, DefaultConfig()), "endpoint_down")
	if f == nil || !strings.Contains(f.Cause, "stopped") || !hasAction(f, "kill -CONT 4711") || !hasEvidence(f, "which is stopped") {
		t.Fatalf("%+v", f)
	}
	// the title says it too: it is what the line under the header shows
	if f.Title != "endpoint down: its process 4711 is stopped (state T)" {
		t.Errorf("title %q", f.Title)
	}
}

// Seen against a real llama-server killed with its log attached (--log):
// the endpoint-down finding's first action asked for what was on the
// screen, "llmtop --log FILE / --docker NAME shows it here". With the log
// attached it points at the log view; without, it still names the flags.
func TestDownActionKnowsTheLogIsAttached(t *testing.T) {
	for _, kind := range []model.ScrapeErrKind{model.ErrRefused, model.ErrTimeout} {
		for _, logsOn := range []bool{true, false} {
			in := input(ep(down(kind, "http://127.0.0.1:8000: down")))
			in.LogsOn = logsOn
			f := byID(Evaluate(in, DefaultConfig()), "endpoint_down")
			if f == nil {
				t.Fatalf("%s: no endpoint_down", kind)
			}
			asks := hasAction(f, "llmtop --log FILE")
			if asks == logsOn || logsOn != hasAction(f, "log view") {
				t.Errorf("%s, log attached %v: actions %+v", kind, logsOn, f.Actions)
			}
		}
	}
}

// Seen with a real llama-server SIGSTOPped under load: the diagnosis
// listed "KV cache below the high-water mark; waiting requests below the
// backlog threshold" as checked while nothing had answered for 20 s: the
// rules judged its last scrape. A check passed on a down endpoint's last
// metrics says so.
func TestChecksOnADownEndpointSayTheMetricsAreItsLast(t *testing.T) {
	in := input(ep(func(e *Endpoint) { // its state is still the last scrape's, as the core gives it
		e.Scrape.Err, e.Scrape.ErrKind = "http://127.0.0.1:8000: no answer within 2s", model.ErrTimeout
		e.LastOK = t0.Add(-20 * time.Second)
	}))
	rep := Evaluate(in, DefaultConfig())
	found := false
	for _, c := range rep.Checked {
		if strings.HasPrefix(c, "KV cache below the high-water mark") {
			found = true
			if !strings.Contains(c, "last metrics of "+url) {
				t.Errorf("checked %q on a down endpoint: want it said to be its last metrics", c)
			}
		}
	}
	if !found {
		t.Fatalf("checked %q: want the KV check (on the last metrics)", rep.Checked)
	}
	for _, c := range Evaluate(input(ep(nil)), DefaultConfig()).Checked {
		if strings.Contains(c, "last metrics") {
			t.Errorf("checked %q on an endpoint that answers", c)
		}
	}
}

// `llmtop diagnose` on a real llama-server SIGSTOPped before llmtop
// started listed "no engine restarts in the window; no model loading or
// warm-up after a restart" as checked: nothing of it had ever answered.
// Whether it restarted or is loading is not known: not checked, and why.
func TestNeverAnsweredIsNotCheckedForRestarts(t *testing.T) {
	in := input(ep(func(e *Endpoint) {
		down(model.ErrTimeout, "http://127.0.0.1:8000: no answer within 2s")(e)
		e.LastOK = time.Time{}
	}))
	rep := Evaluate(in, DefaultConfig())
	for _, c := range rep.Checked {
		if strings.Contains(c, "no engine restarts") || strings.Contains(c, "no model loading") {
			t.Errorf("checked %q on an endpoint that never answered", c)
		}
	}
	missing := strings.Join(rep.Missing, "\n")
	if !strings.Contains(missing, "restarts (it never answered") || !strings.Contains(missing, "model loading or warm-up (it never answered") {
		t.Errorf("not checked %q: want restarts and loading, with why", missing)
	}
	// one that answered before and is down now: its restarts were watched
	rep = Evaluate(input(ep(func(e *Endpoint) {
		down(model.ErrTimeout, "http://127.0.0.1:8000: no answer within 2s")(e)
		e.LastOK = t0.Add(-time.Minute)
	})), DefaultConfig())
	if !slices.Contains(rep.Checked, "no engine restarts in the window") {
		t.Errorf("checked %q: an endpoint seen answering was watched for restarts", rep.Checked)
	}
}
