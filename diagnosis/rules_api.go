package diagnosis

import (
	"fmt"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Rejections at admission: an engine with a concurrency semaphore turns
// requests away instead of queueing them. TGI answers 429 past
// --max-concurrent-requests (default 128) and counts
// tgi_request_failure{err="overloaded"} (router/src/infer/mod.rs:
// limit_concurrent_requests.try_acquire_owned). Ollama answers 503 past
// OLLAMA_MAX_QUEUE (default 512, envconfig/config.go) but has no /metrics:
// its rejections reach llmtop only through a benchmark's failures.

func init() {
	register(
		rule{id: "api_rejections", checks: "requests not turned away at admission (" + engines.TGI.Name + " 429 overloaded, HTTP 429/503)",
			needs: needMetrics, hold: holdShort, local: true, eval: ruleRejections},
		rule{id: "api_http_errors", checks: "API answers without a rising share of HTTP 5xx",
			needs: needMetrics, hold: holdShort, local: true, eval: ruleHTTPErrors},
		rule{id: "api_client_errors", checks: "clients' requests are valid (few HTTP 4xx)",
			needs: needMetrics, hold: holdShort, local: true, eval: ruleClientErrors},
	)
}

// httpShare is a share of the API responses in the window and their count;
// ok is false without enough responses to judge.
func httpShare(e *env, ep Endpoint, part model.Opt) (share, n float64, ok bool) {
	st := ep.State
	if !st.HTTPPS.OK || !part.OK || st.HTTPPS.V <= 0 || st.RateWindow <= 0 {
		return 0, 0, false
	}
	n = st.HTTPPS.V * st.RateWindow.Seconds()
	if n < e.cfg.MinFinished {
		return 0, n, false
	}
	return part.V / st.HTTPPS.V, n, true
}

func ruleHTTPErrors(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		share, n, ok := httpShare(e, *ep, ep.State.HTTP5xxPS)
		if !ok || share < e.cfg.FinishErrorShare {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: API, Severity: model.SevCrit,
			Title: fmt.Sprintf("API answers HTTP 5xx to %s of requests", pct(share)),
			Evidence: []Evidence{{Text: fmt.Sprintf("%s 5xx of %s API responses (%s/s)", num(share*n), num(n), num(ep.State.HTTP5xxPS.V)),
				Source: metricSource(*ep, "http_5xx"), Window: ep.State.RateWindow}},
			Cause: "the server fails requests: an engine error (out of memory, a crashed worker), or a 503 while it is not ready",
			Actions: []Action{
				{Change: "read the engine log at the same times for the traceback", Why: "a 500 carries its exception there", TradeOff: "none"},
				replicas(*ep),
			}})
	}
	return out
}

// rejectReasons are the finish reasons that are a rejection at admission.
var rejectReasons = []string{"overloaded"}

// admission is an engine's admission limit (engines.Admission), and
// whether it has one.
func admission(eng model.Engine) (engines.Admission, bool) {
	if s := engines.Of(eng); s != nil && s.Levers.Admission.Flag != "" {
		return s.Levers.Admission, true
	}
	return engines.Admission{}, false
}

func ruleRejections(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		var share, count float64
		for _, r := range rejectReasons {
			share += ep.State.FinishShare[r]
			count += ep.State.FinishCount[r]
		}
		n := finished(*ep)
		source := engines.TGIOverloaded
		if hs, hn, ok := httpShare(e, *ep, ep.State.HTTPRejectedPS); ok && hs > share {
			share, count, n, source = hs, hs*hn, hn, "http_requests_total{status=\"429\"|\"503\"}"
		}
		if n < e.cfg.MinFinished || share < e.cfg.RejectShare {
			continue
		}
		sev := model.SevWarn
		if share >= 10*e.cfg.RejectShare {
			sev = model.SevCrit
		}
		eng := ep.Engine()
		adm, ok := admission(eng)
		limitText := "its admission limit"
		if ok {
			limitText = fmt.Sprintf("%s (default %s)", adm.Flag, adm.Default)
		}
		f := Finding{Endpoint: ep.URL, Category: API, Severity: sev,
			Title: fmt.Sprintf("requests turned away at admission (%s rejected)", pct(share)),
			Evidence: []Evidence{{Text: fmt.Sprintf("%s of %s requests rejected as overloaded", num(count), num(n)),
				Source: source, Window: ep.State.RateWindow}},
			Cause: fmt.Sprintf("more requests arrive at once than %s admits: the engine answers them %s at once instead of queueing", limitText, answerOf(eng)),
			Actions: []Action{
				replicas(*ep),
				{Change: "clients: retry 429/503 with backoff and jitter", Why: "a rejected request cost nothing yet: a retry later gets in", TradeOff: "latency for the retried requests"},
			}}
		if ok {
			a := Action{Change: adm.Flag + " higher (default " + adm.Default + ")",
				Why:      "admits more requests at once: they queue in the engine instead of failing",
				TradeOff: "queued requests wait longer (TTFT rises) and hold memory; raise it only while TTFT and KV leave room"}
			if st := ep.State; st.KVUsage.OK && st.KVUsage.V >= e.cfg.KVHigh {
				a.TradeOff += "; KV is already " + pct(st.KVUsage.V) + " used: more admitted requests would wait, not run"
			}
			f.Actions = append(f.Actions, a)
		}
		out = append(out, f)
	}
	return out
}

func answerOf(eng model.Engine) string {
	if a, ok := admission(eng); ok {
		return a.Rejects
	}
	return "an error"
}

func ruleClientErrors(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		share, n, ok := httpShare(e, *ep, ep.State.HTTP4xxPS)
		if !ok || share < e.cfg.FinishErrorShare {
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("%s 4xx of %s API responses (%s/s)", num(share*n), num(n), num(ep.State.HTTP4xxPS.V)),
			Source: metricSource(*ep, "http_4xx"), Window: ep.State.RateWindow}}
		reasons := map[string]int{}
		var order []string
		for _, x := range e.eventsOf(ep.URL) {
			if !engines.LogRefused(x.Kind) || x.Backlog || e.past(x.Time, e.cfg.EventWindow) {
				continue
			}
			if reasons[x.Title] == 0 {
				order = append(order, x.Title)
			}
			reasons[x.Title]++
		}
		for _, r := range order {
			ev = append(ev, Evidence{Text: fmt.Sprintf("%d× %s", reasons[r], r), Source: "log", Window: e.cfg.EventWindow})
		}
		if len(order) == 0 {
			ev = append(ev, Evidence{Text: "the reasons are not in the metrics: the log's request errors, or the clients' error bodies, say which", Source: "llmtop"})
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: API, Severity: model.SevWarn,
			Title:    fmt.Sprintf("%s of API requests refused as invalid (HTTP 4xx)", pct(share)),
			Evidence: ev,
			Cause:    "clients send requests the server refuses: a prompt plus max_tokens over the context length, an unknown model name, a LoRA adapter or media the server does not take, bad parameters",
			Actions: []Action{{Change: "fix the clients: cap prompt + max_tokens under the context length, use the served model name (/v1/models)",
				Why: "a refused request is work the user does not get", TradeOff: "none"},
				{Change: "raise the server's limit when the clients are right (the context length, the per-prompt media limit)",
					Why: "the requests are legitimate", TradeOff: "more memory per request"}}})
	}
	return out
}
