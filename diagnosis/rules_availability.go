package diagnosis

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "endpoint_down", checks: "every endpoint answers", hold: holdShort, settles: true, local: true, eval: ruleDown},
		rule{id: "health_unhealthy", checks: "health routes say healthy", hold: holdShort, settles: true, local: true, eval: ruleUnhealthy},
		rule{id: "metrics_unavailable", checks: "metrics endpoints answer (404/5xx/malformed/auth)", hold: holdShort, settles: true, local: true, eval: ruleMetricsErr},
		rule{id: "restarts", checks: "no engine restarts in the window", hold: holdNone, local: true, eval: ruleRestarts},
		rule{id: "cold_start", checks: "no model loading or warm-up after a restart", hold: holdNone, settles: true, local: true, eval: ruleColdStart},
	)
}

// defaultPort is the port an engine listens on by default, with its note
// (engines/: Spec.Ports, PortNote).
func defaultPort(e model.Engine) (string, bool) {
	s := engines.Of(e)
	if s == nil || len(s.Ports) == 0 {
		return "", false
	}
	p := strconv.Itoa(s.Ports[0])
	if s.PortNote != "" {
		p += " (" + s.PortNote + ")"
	}
	return p, true
}

func ruleDown(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		if !ep.isDown() || ep.Life == model.LifeStarting {
			continue // a start under way is the cold-start finding's
		}
		k := ep.Scrape.ErrKind
		ev := []Evidence{{Text: nonEmpty(ep.Scrape.Err, "health route: down"), Source: "scrape " + ep.URL}}
		if ep.LifeDetail != "" && (ep.Life == model.LifeStopped || ep.Life == model.LifeCrashed) {
			ev = append(ev, Evidence{Text: string(ep.Life) + " " + ep.LifeSince.Format("15:04:05") + ": " + ep.LifeDetail, Source: "log"})
		}
		if p := portEvidence(ep.Port); p != "" {
			ev = append(ev, Evidence{Text: p, Source: "/proc"})
		}
		if ep.Life == model.LifeStopped {
			// A clean shutdown: a deploy or an operator, not a crash.
			out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevWarn,
				Title: "engine stopped (clean shutdown)", Evidence: ev,
				Cause:   "the engine was shut down cleanly (SIGTERM, a deploy or an operator) and has not started again",
				Actions: []Action{{Change: "start the engine again, or wait for its supervisor to", Why: "nothing serves on this address until then", TradeOff: "none"}}})
			continue
		}
		if !ep.LastOK.IsZero() {
			ev = append(ev, Evidence{Text: "last metrics " + dur(e.now().Sub(ep.LastOK).Round(time.Second)) + " ago", Source: "scrape " + ep.URL})
		} else {
			ev = append(ev, Evidence{Text: "never answered since llmtop started", Source: "scrape " + ep.URL})
		}
		cause := "the engine process is not running (crashed, OOM-killed, still starting) or listens on another address"
		if !ep.LastOK.IsZero() {
			cause = "the engine answered on this address before: the process stopped (crashed, OOM-killed, restarting) or hangs"
		}
		// With the log attached, "llmtop --log FILE shows it here" asks
		// for what is on the screen already.
		where := " (llmtop --log FILE / --docker NAME shows it here)"
		if e.in.LogsOn {
			where = " (attached: its last lines are in the log view and its errors in the events)"
		}
		acts := []Action{{Change: "look at the engine's log for the exception before it exited" + where,
			Why: "a crash leaves its reason in the log: CUDA OOM, NCCL timeout, bad flag", TradeOff: "none"}}
		title := "endpoint down: " + nonEmpty(string(k), "no answer")
		if k == model.ErrTimeout {
			cause = "the server accepts connections but does not answer in time: hung engine, a blocked event loop, or a very long prefill holding the API process"
			// Accepted but unanswered: the process is alive, so there is no
			// exit to read about; whether it is hung comes first.
			acts = []Action{{Change: "check /health directly and the engine's CPU use (a stuck API server shows 100 % on one core; a stopped process, state T, shows none)",
				Why: "distinguishes a hung engine from an overloaded one", TradeOff: "none"},
				{Change: "look at the engine's last log lines before it stopped answering" + strings.Replace(where, "shows it", "shows them", 1),
					Why: "a hang often follows a warning: a stuck collective (NCCL), a long prefill, a blocked event loop", TradeOff: "none"}}
			if p := ep.Port; p != nil && p.Stopped && p.PID > 0 {
				// /proc says so: no guessing between hung and overloaded.
				cause = "the engine process is stopped (SIGSTOP, a debugger, a job-control ctrl+z): the kernel accepts connections on its port and nothing answers them"
				title = fmt.Sprintf("endpoint down: its process %d is stopped (state T)", p.PID)
				acts = []Action{{Change: fmt.Sprintf("kill -CONT %d (or detach the debugger, or fg the job)", p.PID),
					Why: "a stopped process resumes where it stopped", TradeOff: "none"}}
			}
		}
		if p, ok := defaultPort(ep.Engine()); ok && ep.LastOK.IsZero() { // it answered on this address before: the port is right
			acts = append(acts, Action{Change: "check the address: " + engineName(ep.Engine()) + " listens on port " + p + " by default",
				Why: "a moved port looks like a crash", TradeOff: "none"})
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevCrit,
			Title: title, Evidence: ev, Cause: cause, Actions: acts})
	}
	return out
}

func ruleUnhealthy(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		if h := ep.Identity.Health; h == "" || h == model.HealthUnknown || ep.isDown() {
			// A hung or dead engine's health route did not answer: listed
			// as "health routes say healthy" it was checked and passed.
			e.lack(ep, "health (no health route answered)")
			continue
		}
		if ep.Identity.Health != model.HealthUnhealthy {
			continue
		}
		ev := []Evidence{{Text: "health route: " + nonEmpty(ep.Identity.HealthDetail, "unhealthy"), Source: "health " + ep.URL}}
		cause := "the server answers but its engine is dead or stuck"
		if c := engines.HealthOf(ep.Engine()).Unhealthy; c != "" {
			cause = c
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevCrit,
			Title: "engine unhealthy (health 503)", Evidence: ev, Cause: cause,
			Actions: []Action{{Change: "restart the engine; read the log lines before the failure for the cause",
				Why: "a dead engine core does not recover by itself", TradeOff: "in-flight requests are lost"}}})
	}
	return out
}

// notFoundStatus is the HTTP status of a not-found scrape error ("…/metrics:
// 501 Not Implemented"), 404 when the message names none.
func notFoundStatus(err string) string {
	if m := httpStatusIn.FindStringSubmatch(err); m != nil {
		return m[1]
	}
	return "404"
}

var httpStatusIn = regexp.MustCompile(`: (404|501) `)

// metricsEnable is how each engine serves its metrics (Levers.EnableMetrics).
var metricsEnable = byEngine(func(l engines.Levers) engines.Change { return l.EnableMetrics })

func ruleMetricsErr(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		if ep.Identity.Layer != "" {
			continue // a router or proxy, shown as what it is: not an engine whose metrics are missing
		}
		k := ep.Scrape.ErrKind
		var acts []Action
		sev := model.SevWarn
		title := "metrics endpoint error: " + string(k)
		cause := "llmtop cannot read the engine's metrics, so the latency and KV rules are blind"
		switch k {
		case model.ErrNotFound:
			// llama-server answers 501 where --metrics is off: the title names
			// the status the route gave, not always 404.
			title = "metrics endpoint returns " + notFoundStatus(ep.Scrape.Err)
			cause = "the engine was started without its metrics switch, or a proxy does not forward /metrics"
			acts = forEngine(ep.Engine(), metricsEnable)
			answers := strings.Contains(ep.Scrape.Err, "answers, but without any")
			if answers {
				title = "metrics endpoint answers without the engine's metrics"
				if _, rest, ok := strings.Cut(ep.Scrape.Err, "without any "); ok {
					title = "metrics endpoint has no " + strings.TrimSuffix(rest, " metrics") + " metrics"
				}
			}
			spec := engines.Of(ep.Engine())
			switch {
			case answers && strings.Contains(ep.Scrape.Hint, "these look like"):
				cause = "the route serves another engine's metrics: the engine given with --engine does not match the server"
				acts = []Action{{Change: "drop --engine (llmtop detects the engine), or name the engine the metrics belong to",
					Why: ep.Scrape.Hint, TradeOff: "none"}}
			case spec != nil && spec.MetricsAlways:
				cause = spec.Name + " always serves " + spec.MetricsPath + " on its API port: this is another port or route, or a proxy that does not forward " + spec.MetricsPath
				if answers && spec.StatsOff != "" {
					cause = spec.Name + " started with " + spec.StatsOff + " serves " + spec.MetricsPath + " without its " + spec.Prefix() + " metrics"
					on := spec.Levers.StatsOn
					acts = []Action{{Change: on.Change, Why: on.Why, TradeOff: on.TradeOff}}
				}
			}
		case model.ErrServer:
			cause = "the metrics route fails inside the engine (5xx)"
			acts = []Action{{Change: "read the engine log at the scrape times for the traceback", Why: "a 500 on /metrics is an engine bug or a dying process", TradeOff: "none"}}
		case model.ErrMalformed, model.ErrTooLarge:
			cause = "the metrics body is not the Prometheus text llmtop expects (wrong path, HTML error page, or a huge label set)"
			acts = []Action{{Change: "pass --metrics-path and --engine explicitly", Why: "a proxy or another service may answer on this path", TradeOff: "none"}}
		case model.ErrStalled:
			title = "metrics endpoint stalls mid-answer"
			cause = "the server sends its headers, then stops before the body ends: an exporter stuck mid-scrape, or a proxy holding the body"
			acts = []Action{{Change: "scrape the engine's port directly (not through the proxy), or raise --timeout if the body is just slow",
				Why: "a body that stops is a hung exporter or a buffering proxy, not a server that is down", TradeOff: "none"}}
		case model.ErrRedirect:
			title = "metrics endpoint redirects"
			cause = "the metrics route redirects in a loop, or to another host that llmtop does not follow unasked"
			acts = []Action{{Change: "give llmtop the final URL (or --metrics-path); --follow-redirects allows other hosts",
				Why: "a loop never reaches the metrics; another host is only followed when asked (the API key is never sent there)", TradeOff: "none"}}
		case model.ErrAuth:
			cause = "the endpoint requires an API key"
			acts = []Action{{Change: "--api-key (or OPENAI_API_KEY)", Why: engines.VLLM.Name + " " + engines.VLLM.Levers.APIKey + " and proxies reject unauthenticated scrapes", TradeOff: "none"}}
		default:
			if ep.isDown() {
				// Nothing answered: whether the metrics route works is not
				// known (it was listed as checked under a hung engine).
				e.lack(ep, "the metrics route (the newest scrape failed: the endpoint does not answer)")
			}
			continue
		}
		ev := []Evidence{{Text: ep.Scrape.Err, Source: "scrape " + ep.URL}}
		if ep.Scrape.Hint != "" {
			ev = append(ev, Evidence{Text: ep.Scrape.Hint, Source: "adapter hint"})
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: sev, Title: title,
			Evidence: ev, Cause: cause, Actions: acts})
	}
	return out
}

// restartWindow is how far back restarts count.
const restartWindow = 15 * time.Minute

func recentRestarts(e *env, ep *Endpoint) []time.Time {
	var rs []time.Time
	for _, t := range ep.State.Restarts {
		if !e.past(t, restartWindow) {
			rs = append(rs, t)
		}
	}
	return rs
}

// neverAnswered: nothing was seen of the endpoint's engine (no scrape
// ever answered, no log start seen): whether it restarted or is loading is
// not known, not "no".
func neverAnswered(ep *Endpoint) bool {
	return ep.LastOK.IsZero() && ep.State.Samples == 0 && len(ep.Runs) < 2 && ep.Life != model.LifeStarting
}

func ruleRestarts(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		if neverAnswered(ep) {
			e.lack(ep, "restarts (it never answered since llmtop started)")
			continue
		}
		if ep.Runs != nil {
			out = append(out, restartsFromRuns(e, *ep)...)
			continue
		}
		// No ledger: counter resets alone cannot tell a crash from a deploy.
		rs := recentRestarts(e, ep)
		if len(rs) == 0 {
			continue
		}
		sev, title := model.SevWarn, "engine restarted"
		if len(rs) >= 3 {
			title = fmt.Sprintf("engine restarted %d times in %s (cause not seen)", len(rs), dur(restartWindow))
		}
		ev := []Evidence{{Text: fmt.Sprintf("%s, newest %s (counters went backwards)", plural(len(rs), "restart"), ago(e.now().Sub(rs[len(rs)-1]))),
			Source: "scrape " + ep.URL, Window: restartWindow}}
		for _, x := range e.events() {
			if x.Source == "log" && x.Severity == model.SevCrit && !x.Untimed && !x.ZoneUnknown && (x.Endpoint == "" || x.Endpoint == ep.URL) && absDur(x.Time.Sub(rs[len(rs)-1])) < 5*time.Minute {
				ev = append(ev, Evidence{Text: "log near the restart: " + x.Title, Source: "log"})
			}
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: sev, Title: title, Evidence: ev,
			Cause: "the engine process exited and came back (crash, OOM kill, deploy); caches and CUDA graphs start cold",
			Actions: []Action{{Change: "match the restart time with the log events (memory and startup findings below name the fix)",
				Why: "restarts are a symptom; the log says why", TradeOff: "none"}}})
	}
	return out
}

func ruleColdStart(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		if ep.Life == model.LifeStarting && ep.isDown() {
			cp := *ep // its engine is filled in below: a copy, not the input
			ep := &cp
			if ep.Identity.Engine == model.Unknown { // never answered: its log names it
				ep.Identity.Engine = engineFromEvents(e.events())[""]
				if ep.Identity.Engine == model.Unknown {
					ep.Identity.Engine = engineFromEvents(e.events())[ep.URL]
				}
			}
			ev := []Evidence{{Text: "starting for " + dur(e.now().Sub(ep.LifeSince).Round(time.Second)) + ": " + nonEmpty(ep.LifeDetail, "the log shows a start"), Source: "log"}}
			if p := portEvidence(ep.Port); p != "" {
				ev = append(ev, Evidence{Text: p, Source: "/proc"})
			}
			out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevInfo,
				Title: "engine starting", Evidence: ev,
				Cause:   "the engine is loading weights, profiling memory or capturing CUDA graphs; nothing listens until it is done",
				Actions: forEngine(ep.Engine(), coldStartActs)})
			continue
		}
		if neverAnswered(ep) && ep.Identity.Health != model.HealthLoading {
			e.lack(ep, "model loading or warm-up (it never answered since llmtop started)")
			continue
		}
		if ep.Identity.Health == model.HealthLoading {
			out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevWarn,
				Title:    "model loading (cold start)",
				Evidence: []Evidence{{Text: "health route: " + nonEmpty(ep.Identity.HealthDetail, "503 while loading"), Source: "health " + ep.URL}},
				Cause:    "the engine is loading weights, profiling memory or capturing CUDA graphs; requests are refused or queued",
				Actions:  forEngine(ep.Engine(), coldStartActs)})
			continue
		}
		started, what := ep.UpSince, "up"
		if rs := recentRestarts(e, ep); len(rs) > 0 && rs[len(rs)-1].After(started) {
			started, what = rs[len(rs)-1], "restart"
		}
		if started.IsZero() || e.past(started, e.cfg.ColdStart) {
			continue
		}
		ttft := ep.State.Latency[model.TTFT]
		if !ttft.P90.OK || ttft.P90.V <= e.cfg.SLOTTFT.Seconds() {
			continue
		}
		// Warm-up is slow kernels and an empty prefix cache on light
		// traffic; a queue, preemptions or long prompts explain a slow TTFT
		// by themselves.
		if q := ep.State.Latency[model.Queue]; q.Mean.OK && ttft.Mean.OK && q.Mean.V > e.cfg.DominantShare*ttft.Mean.V {
			continue
		}
		if w := ep.State.Waiting; w.OK && w.V > 0 {
			continue
		}
		if p := ep.State.PreemptionsPS; p.OK && p.V > 0 {
			continue
		}
		if n, ok := meanPrompt(*ep); ok && n >= longPrompt {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevInfo,
			Title: "slow first requests after a (re)start (warm-up)",
			Evidence: []Evidence{{Text: "TTFT p90≈" + secs(ttft.P90.V) + ", " + what + " " + dur(e.now().Sub(started).Round(time.Second)) + " ago",
				Source: metricSource(*ep, "ttft"), Window: ttft.Window}},
			Cause:   "the prefix cache is empty and kernels/graphs compile on first use after a restart",
			Actions: forEngine(ep.Engine(), coldStartActs)})
	}
	return out
}

var coldStartActs = byEngine(func(l engines.Levers) engines.Change { return l.Warmup })

// portEvidence says who holds a local endpoint's port, from /proc.
func portEvidence(p *model.PortOwner) string {
	if p == nil {
		return ""
	}
	return p.Describe()
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
