package diagnosis

import (
	"fmt"
	"time"

	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "finish_length", checks: "share of requests cut by max_tokens/context (finish reason length)", needs: needMetrics, hold: holdDefault, local: true, eval: ruleFinishLength},
		rule{id: "finish_errors", checks: "share of aborted/errored requests", needs: needMetrics, hold: holdDefault, local: true, eval: ruleFinishErrors},
		rule{id: "bench_bad_output", checks: "benchmark responses not empty, echoed or repetitive", needs: needBench, hold: holdNone, eval: ruleBadOutput},
		rule{id: "client_server_gap", checks: "client-measured TTFT/ITL close to the server's own", needs: needBench, hold: holdNone, eval: ruleClientGap},
	)
}

func finished(ep Endpoint) float64 {
	var n float64
	for _, c := range ep.State.FinishCount {
		n += c
	}
	return n
}

// enoughFinished is how many requests finished in ep's window, ok when
// there are enough to judge a share; otherwise it says why not.
func enoughFinished(e *env, ep *Endpoint, what string) (float64, bool) {
	if ep.State.FinishShare == nil {
		e.lack(ep, e.notExposed(ep, what, " (finish reasons: ", ")"))
		return 0, false
	}
	n := finished(*ep)
	if n < e.cfg.MinFinished {
		e.lack(ep, fmt.Sprintf("%s (%s requests finished in the window; %s needed to judge a share)", what, num(n), num(e.cfg.MinFinished)))
		return n, false
	}
	return n, true
}

func ruleFinishLength(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		if r, _ := ep.PDRole(); r == model.RolePrefill {
			continue // a prefill instance generates one token by design (max_tokens 1); decode generates the rest
		}
		n, ok := enoughFinished(e, ep, "length share")
		if !ok {
			continue
		}
		s := ep.State.FinishShare["length"]
		ev := []Evidence{{Text: fmt.Sprintf("%s of %s requests finished with reason length", pct(s), num(n)),
			Source: metricSource(*ep, "finish"), Window: ep.State.RateWindow}}
		if own := min(e.in.OwnLength[ep.URL], ep.State.FinishCount["length"]); own > 0 {
			// llmtop's own benchmark requests run to max_tokens by design.
			n -= own
			if n < e.cfg.MinFinished {
				e.lack(ep, fmt.Sprintf("length share (%s requests finished in the window besides llmtop's own benchmark; %s needed to judge a share)", num(n), num(e.cfg.MinFinished)))
				continue
			}
			s = (ep.State.FinishCount["length"] - own) / n
			ev = []Evidence{{Text: fmt.Sprintf("%s of %s requests finished with reason length, leaving out the %s of llmtop's own benchmark (ignore_eos: they run to max_tokens by design)", pct(s), num(n), num(own)),
				Source: metricSource(*ep, "finish"), Window: ep.State.RateWindow}}
		}
		if s < e.cfg.FinishLengthShare {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Behaviour, Severity: model.SevWarn,
			Title:    "many responses cut off (finish reason length: " + pct(s) + ")",
			Evidence: ev,
			Cause:    "generation stops at max_tokens or the context limit instead of an end-of-sequence token: a max_tokens cap too low for the task, or a chat template / stop token the model never emits (it rambles until the cap)",
			Actions: []Action{
				{Change: "read a few responses: if they ramble or repeat, fix the chat template or stop tokens (the model's generation_config.json eos_token_id, which engines apply by default: check it, and that the server does not ignore it)", Why: "a missing EOS makes every request run to the cap", TradeOff: "none"},
				{Change: "if they are cut mid-answer, raise the clients' max_tokens", Why: "the cap is below the answer length", TradeOff: "longer requests, more KV per request"},
			}})
	}
	return out
}

func ruleFinishErrors(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		n, ok := enoughFinished(e, ep, "aborted/errored share")
		if !ok {
			continue
		}
		ab, er := ep.State.FinishShare["abort"], errorShare(*ep)
		sev, _ := FinishAlarm(ep.State, e.cfg)
		if sev < model.SevWarn {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Behaviour, Severity: sev,
			Title: fmt.Sprintf("requests aborted or failing (abort %s, error %s)", pct(ab), pct(er)),
			Evidence: []Evidence{{Text: fmt.Sprintf("abort %s + error %s of %s finished requests", pct(ab), pct(er), num(n)),
				Source: metricSource(*ep, "finish"), Window: ep.State.RateWindow}},
			Cause: "aborts are clients disconnecting (timeouts shorter than TTFT+generation, users cancelling); errors are the engine failing requests",
			Actions: []Action{
				{Change: "compare the clients' timeout with the e2e latency p99; raise it or cut the queue (see queueing findings)", Why: "a client that gives up still cost the prefill", TradeOff: "none"},
				{Change: "for errors: read the engine log at the same times", Why: "the log carries the per-request exception", TradeOff: "none"},
			}})
	}
	return out
}

// errorShare is the share of finished requests that failed.
func errorShare(ep Endpoint) float64 {
	var s float64
	for _, r := range ErrorReasons {
		s += ep.State.FinishShare[r]
	}
	return s
}

func ruleBadOutput(e *env) []Finding {
	b := e.in.Bench
	// Empty streams count as failures in the benchmark: they are answers
	// too, for this rule.
	answers := b.Completed + b.Empty
	if answers == 0 {
		return nil
	}
	bad := b.Empty + b.Blank + b.Echoed + b.Repetitive
	share := float64(bad) / float64(answers)
	if share < e.cfg.BadOutputShare {
		return nil
	}
	return []Finding{{Endpoint: b.URL, Category: Behaviour, Severity: model.SevWarn,
		Title: fmt.Sprintf("benchmark responses look wrong (%s bad)", pct(share)),
		Evidence: []Evidence{{Text: fmt.Sprintf("%d empty, %d echoing the prompt, %d repetitive of %d answers", b.Empty+b.Blank, b.Echoed, b.Repetitive, answers),
			Source: "benchmark", Window: b.End.Sub(b.Start)}},
		Cause: "empty or echoed text usually means a wrong chat template or the completions route used for a chat model; repetition means no stop token or too greedy sampling",
		Actions: []Action{
			{Change: "serve with the model's own chat template and use /v1/chat/completions", Why: "the template decides where the answer starts and stops", TradeOff: "none"},
			{Change: "set repetition_penalty/presence_penalty, or check the model's generation_config.json (engines may apply it by default)", Why: "repetition with temperature 0 and no penalty is common", TradeOff: "slightly different outputs"},
		}}}
}

func ruleClientGap(e *env) []Finding {
	b := e.in.Bench
	switch {
	case b.Cancelled > 0:
		e.lacks = append(e.lacks, lack{url: b.URL, what: "client vs server latency (the benchmark was stopped early: its window is not a clean comparison)"})
		return nil
	case b.ServerRequests.OK && float64(b.Completed) < mixedShare*b.ServerRequests.V:
		// The server's percentiles are mostly other clients' requests
		// (other prompts, other load): a difference says nothing of the
		// path between.
		e.lacks = append(e.lacks, lack{url: b.URL, what: fmt.Sprintf("client vs server latency (the server answered %s requests over the benchmark's window, the benchmark %d: other traffic is mixed into the server's numbers)",
			num(b.ServerRequests.V), b.Completed)})
		return nil
	}
	abs := float64(e.cfg.ClientGapAbs) / float64(time.Millisecond)
	ttft := gap(b.TTFTp50, b.ServerTTFTp50, abs, e.cfg.ClientGapRatio)
	// Gaps between tokens are tens of ms: a fifth of the TTFT allowance.
	itl := gap(b.ITLp50, b.ServerITLp50, abs/5, e.cfg.ClientGapRatio)
	if !ttft && !itl {
		if !b.ServerTTFTp50.OK && !b.ServerITLp50.OK {
			e.lacks = append(e.lacks, lack{url: b.URL, what: "server-side TTFT/ITL during the benchmark (compare needs the engine's histograms)"})
		}
		return nil
	}
	var ev []Evidence
	w := b.End.Sub(b.Start)
	if ttft {
		ev = append(ev, Evidence{Text: fmt.Sprintf("TTFT p50 client %s vs server ≈%s", msText(b.TTFTp50.V), msText(b.ServerTTFTp50.V)), Source: "benchmark vs engine histogram", Window: w})
	}
	if itl {
		ev = append(ev, Evidence{Text: fmt.Sprintf("ITL p50 client %s vs server ≈%s", msText(b.ITLp50.V), msText(b.ServerITLp50.V)), Source: "benchmark vs engine histogram", Window: w})
	}
	cause := "time is lost between the engine and the client: network, a proxy or load balancer, TLS, or an API gateway"
	if itl {
		cause = "tokens arrive in bursts: something between the engine and the client buffers the stream (proxy buffering, gzip, a gateway that re-chunks SSE)"
	}
	return []Finding{{Endpoint: b.URL, Category: API, Severity: model.SevWarn,
		Title: "client sees much worse latency than the server reports", Evidence: ev, Cause: cause,
		Actions: []Action{
			{Change: "benchmark the engine's port directly, bypassing the proxy, and compare", Why: "locates the hop that adds the delay", TradeOff: "none"},
			{Change: "nginx: proxy_buffering off; gzip off for text/event-stream (or send X-Accel-Buffering: no)", Why: "buffering holds SSE chunks back", TradeOff: "none for streams"},
		}}}
}

// mixedShare is the share of the server's requests over a benchmark's
// window the benchmark must have sent for the two to be compared (the
// window's edges catch a few of its own requests twice or not at all).
const mixedShare = 0.8

// gap reports whether the client's number exceeds the server's by more than
// both the absolute (ms) and the ratio allowance.
func gap(client, server model.Opt, abs, ratio float64) bool {
	if !client.OK || !server.OK || server.V <= 0 {
		return false
	}
	return client.V-server.V > abs && client.V > ratio*server.V
}

func msText(ms float64) string { return secs(ms / 1000) }
