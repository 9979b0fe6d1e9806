package diagnosis

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "ttft_high", checks: "TTFT p99 within the SLO (split into queueing vs prefill)", needs: needMetrics, hold: holdDefault, local: true, eval: ruleTTFT},
		rule{id: "queue_backlog", checks: "waiting requests below the backlog threshold", needs: needMetrics, hold: func(c Config) time.Duration { return c.WaitingFor }, local: true, eval: ruleBacklog},
	)
}

// ttftOver returns the TTFT number compared with the SLO (p99, or the mean
// for engines that only give one) and its label.
func ttftOver(ep Endpoint, slo float64) (v float64, label string, over bool) {
	d := ep.State.Latency[model.TTFT]
	switch {
	case d.P99.OK:
		v, label = d.P99.V, "TTFT p99≈"
		if d.Past(0.99) {
			label = "TTFT p99 over " // past the highest finite bucket: a floor
		}
		if !d.Estimate {
			label = "TTFT p99 " // exact: from the engine's per-request log lines
		}
	case d.Mean.OK:
		v, label = d.Mean.V, "TTFT mean"
		if d.Approx != "" {
			label = "TTFT mean (approx.: " + d.Approx + ") "
		}
	default:
		return 0, "", false
	}
	return v, label, v > slo
}

// meanOnly is what a latency rule could not judge where the engine gives a
// mean and no p99 and the mean is within the SLO.
func meanOnly(what string) string {
	return what + " p99 against the SLO (only a mean is known: a mean within the SLO does not bound the p99)"
}

func ruleTTFT(e *env) []Finding {
	out := e.findings()
	slo := e.cfg.SLOTTFT.Seconds()
	over := " > SLO " + dur(e.cfg.SLOTTFT) // once, not per replica
	for ep := range each(e.withMetrics()) {
		d := ep.State.Latency[model.TTFT]
		if !d.Exposed {
			e.lack(ep, e.notExposed(ep, "TTFT", " (", ")"))
			continue
		}
		v, label, isOver := ttftOver(*ep, slo)
		if label == "" {
			// Exposed, but no first token in the window: not "within the SLO".
			e.lack(ep, "TTFT (no request got its first token in the window)")
			continue
		}
		if !isOver {
			if !d.P99.OK {
				// A mean over the SLO puts the p99 over it too; one under
				// it says nothing of the p99 (a client measured 540 ms at
				// p99 while llama-server's mean was 126 ms).
				e.lack(ep, meanOnly("TTFT"))
			}
			continue
		}
		// room for the lines below and the Diagnoser's own: a fleet's
		// TTFT findings grew this slice twice each
		ev := append(make([]Evidence, 0, 5), Evidence{Text: label + secs(v) + over, Source: latSource(*ep, "ttft", d), Window: d.Window})
		qShare, qOK := share(*ep, model.Queue, d)
		pShare, pOK := share(*ep, model.Prefill, d)
		waiting := ep.State.Waiting
		if qOK {
			ev = append(ev, Evidence{Text: "queue time " + secs(ep.State.Latency[model.Queue].Mean.V) + " of the mean " + secs(d.Mean.V) + " (" + pct(qShare) + ")",
				Source: latSource(*ep, "queue", ep.State.Latency[model.Queue]), Window: ep.State.Latency[model.Queue].Window})
		}
		if pOK {
			ev = append(ev, Evidence{Text: "prefill time " + secs(ep.State.Latency[model.Prefill].Mean.V) + " of it (" + pct(pShare) + ")",
				Source: latSource(*ep, "prefill", ep.State.Latency[model.Prefill]), Window: ep.State.Latency[model.Prefill].Window})
		}
		if waiting.OK {
			ev = append(ev, Evidence{Text: "waiting " + num(waiting.V) + ", running " + optNum(ep.State.Running), Source: metricSource(*ep, "waiting")})
		}
		if !qOK && !pOK && !waiting.OK {
			e.lack(ep, "queue/prefill split of TTFT (neither queue time, prefill time nor waiting exposed)")
		}
		if p := ep.State.PreemptionsPS; p.OK && p.V > e.cfg.PreemptPS {
			// Preempted requests go back to the queue and recompute their
			// prompt: neither phase alone explains TTFT, the KV pool does.
			out = append(out, preemptedTTFT(e, *ep, ev, p.V))
			continue
		}
		if _, ok := kvStall(e, *ep); ok {
			e.handed = true // kv_transfer_stall names the wait: the KV hand-over, not a phase here
			continue
		}
		// Each phase is the cause only by its own number: a share of TTFT;
		// where the engine does not time the queue, requests waiting now.
		pDominant := pOK && pShare >= e.cfg.DominantShare
		queueing := (qOK && qShare >= e.cfg.DominantShare && (!pOK || qShare >= pShare)) ||
			(!qOK && waiting.OK && waiting.V > 0 && !pDominant)
		if queueing {
			f := queueFinding(e, ep, "ttft_queueing", "TTFT over SLO: requests wait in the queue", ev, model.SevWarn)
			out = append(out, escalate(e, f, v/slo))
			continue
		}
		if slowSteps(e, *ep) {
			e.handed = true // over its SLO, not within it: the ITL finding explains both
			continue
		}
		// Where the engine does not time prefill, long prompts stand in.
		mp, mpOK := meanPrompt(*ep)
		if pDominant || (!pOK && mpOK && mp >= longPrompt) {
			out = append(out, prefillFinding(e, *ep, ev))
			continue
		}
		out = append(out, unsplitTTFT(e, ep, ev, qOK, pOK))
	}
	return out
}

// preemptedTTFT is TTFT over the SLO while the engine preempts: the KV
// finding's fix is this one's.
func preemptedTTFT(e *env, ep Endpoint, ev []Evidence, ps float64) Finding {
	ev = append(ev, Evidence{Text: fmt.Sprintf("preemptions %s/s: preempted requests are re-queued and recompute their prompt", num(ps)),
		Source: metricSource(ep, "preemptions"), Window: ep.State.RateWindow})
	return Finding{ID: "ttft_preemption", Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
		Title: "TTFT over SLO: requests are preempted (see the KV pressure finding)", Evidence: ev,
		Cause:   "the KV pool is too small for the running batch: preempted requests wait again and prefill again from token 0, which neither the queue nor the prefill time shows alone",
		Actions: kvActions(e, ep)[:1]} // the KV finding's first fix; it lists the rest
}

// unsplitTTFT is TTFT over the SLO that neither the queue nor prefill
// explains by itself.
func unsplitTTFT(e *env, ep *Endpoint, ev []Evidence, qOK, pOK bool) Finding {
	cause := "neither queueing nor prefill takes most of TTFT" + outsidePhases
	if !qOK || !pOK {
		cause = "the engine does not time both phases, and prompts are short: the cause is not clear from its metrics" + outsidePhases
	}
	return Finding{ID: "ttft_high", Endpoint: ep.URL, Category: Queueing, Severity: model.SevWarn,
		Title: "TTFT over SLO: no single phase dominates", Evidence: ev, Cause: cause, Actions: e.unsplitActions(ep)}
}

const outsidePhases = "; time outside the engine's phases is spent in the API server (tokenizing, streaming) or the network"

// actionsKey: what unsplitTTFT's actions depend on.
type actionsKey struct {
	eng model.Engine
	dp  int
}

// unsplitActions are unsplitTTFT's actions for ep, built once per
// evaluation for each engine and data-parallel size: a fleet over its SLO
// asked for the same actions on every replica. The findings share them
// (capped, so that an append copies).
func (e *env) unsplitActions(ep *Endpoint) []Action {
	k := actionsKey{ep.Engine(), dpSize(*ep)}
	if as, ok := e.actions[k]; ok {
		return as
	}
	var as []Action
	if ep.Engine() != model.Unknown {
		for _, a := range frontLever(ep.Engine()) {
			a.Why = "a busy front-end (tokenizing, detokenizing, streaming) delays first tokens outside queue and prefill time: " + a.Why
			as = append(as, a)
		}
	}
	a := replicas(*ep)
	a.Why = "fewer requests per engine: each waits less for the API server and the steps it shares"
	as = append(as, a)
	as = as[:len(as):len(as)]
	if e.actions == nil {
		e.actions = map[actionsKey][]Action{}
	}
	e.actions[k] = as
	return as
}

// latSource names where a latency came from: the engine's per-request log
// lines (engines without latency histograms log each request), a queue
// estimated from the waiting gauge, or the engine's metric.
func latSource(ep Endpoint, concept string, d model.Dist) string {
	switch {
	case d.Approx == model.LittleApprox:
		return "Little's law estimate: mean waiting ÷ mean running × time in a slot (log)"
	case d.Source == model.FromLog:
		return fmt.Sprintf("engine log, per-request timing lines (n=%d)", int(d.Count))
	}
	return metricSource(ep, concept)
}

// share is a phase's mean as a share of TTFT's mean.
func share(ep Endpoint, l model.Latency, ttft model.Dist) (float64, bool) {
	p := ep.State.Latency[l]
	if !p.Mean.OK || !ttft.Mean.OK || ttft.Mean.V <= 0 {
		return 0, false
	}
	return math.Min(p.Mean.V/ttft.Mean.V, 1), true
}

func ruleBacklog(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		w := ep.State.Waiting
		if !w.OK {
			e.lack(ep, "waiting requests (not exposed)")
			continue
		}
		if w.V <= e.cfg.WaitingHigh {
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("waiting %s > %s (running %s)", num(w.V), num(e.cfg.WaitingHigh), optNum(ep.State.Running)), Source: metricSource(*ep, "waiting")}}
		f := queueFinding(e, ep, "queue_backlog", "queue backlog: "+num(w.V)+" requests waiting", ev, model.SevCrit)
		out = append(out, escalate(e, f, w.V/e.cfg.WaitingHigh))
	}
	return out
}

// queueFinding explains a queue: a concurrency cap reached with KV to spare
// (raise the cap), a full KV pool (memory), or a full engine (scale out).
func queueFinding(e *env, p *Endpoint, id, title string, ev []Evidence, sev model.Severity) Finding {
	ep := *p
	eng := ep.Engine()
	st := ep.State
	f := Finding{ID: id, Endpoint: ep.URL, Category: Queueing, Severity: sev, Title: title, Evidence: ev}
	limit, capKnown := currentCap(ep)
	inferred := false
	if !capKnown && st.Waiting.OK && st.Waiting.V > 0 && st.KVUsage.OK && st.KVUsage.V < 0.8 && st.Running.OK && st.Running.V > 0 {
		// vLLM-style schedulers admit while running < cap and KV has room:
		// with requests waiting and KV free, the batch is at the cap.
		limit, capKnown, inferred = int(math.Round(maxRunning(e, ep))), true, true
	}
	atCap := capKnown && st.Running.OK && st.Running.V >= 0.9*float64(limit)
	// "at the concurrency cap (N)", said as an inference where the engine
	// does not expose its cap (its missing line says so).
	atCapText := fmt.Sprintf("at the concurrency cap (%d)", limit)
	if inferred {
		atCapText = fmt.Sprintf("at %d, which is the concurrency cap by inference (the engine does not expose it: requests wait while the KV cache has room)", limit)
	}
	itlV, itlOK := itlValue(&ep)
	itlOver := itlOK && itlV > e.cfg.SLOITL.Seconds()
	switch {
	case st.KVUsage.OK && st.KVUsage.V >= 0.9:
		f.Cause = "the KV cache is full (" + pct(st.KVUsage.V) + "): new requests cannot be admitted until running ones finish"
		f.Actions = kvActions(e, ep)
	case atCap && st.KVUsage.OK && !st.KVUsageMax.OK && st.Running.V > 0 && itlOK && !itlOver: // a floor is not room
		// Raising the cap is advised only where ITL is known to have room:
		// unknown is not fine (issue 14 item 10).
		kv, running, _ := kvBatch(ep)
		perSeq := kv.V / max(running.V, 1)
		n := int(math.Floor(0.9 / perSeq))
		n = min(max(n, limit+1), 2*limit)
		f.Cause = fmt.Sprintf("the running batch is at the concurrency cap (%d) while the KV cache is only %s used", limit, pct(st.KVUsage.V))
		if inferred {
			f.Cause = fmt.Sprintf("the running batch stays at %d while requests wait and the KV cache is only %s used: that is the concurrency cap", limit, pct(st.KVUsage.V))
		}
		trade := fmt.Sprintf("more requests per step: ITL (p99≈%s now, SLO %s) rises with the batch; check it after the change", secs(itlV), dur(e.cfg.SLOITL))
		f.Actions = []Action{{Change: capChange(eng, n),
			Why:      fmt.Sprintf("%s KV per running request: %d requests fit in 90 %% of the pool (at most doubling the cap)", pct(perSeq), int(math.Floor(0.9/perSeq))),
			TradeOff: trade}, replicas(ep)}
	case atCap && !itlOK:
		f.Cause = "the running batch is " + atCapText + "; per-token latency is not measured in the window, so whether a bigger batch would slow every answer is not known"
		f.Evidence = append(f.Evidence, itlSinceStart(e, ep)...)
		f.Actions = []Action{replicas(ep), {Change: capChange(eng, 0) + " higher only once ITL/TPOT is seen under its SLO " + dur(e.cfg.SLOITL),
			Why: "unknown per-token latency is not room: a bigger batch slows every request's decode", TradeOff: "TPOT rises with the batch"}}
	case atCap && itlOver:
		f.Cause = "the batch is " + atCapText + " and per-token latency is already over its SLO: the engine is at capacity"
		f.Actions = []Action{replicas(ep)}
	default:
		f.Cause = "requests arrive faster than the engine finishes them"
		if !capKnown {
			f.Cause += " (concurrency cap unknown: compare running with the engine's cap)"
		}
		f.Actions = []Action{replicas(ep), {Change: capChange(eng, 0) + " higher if KV usage and ITL leave room",
			Why: "a low cap queues requests the GPU could batch", TradeOff: "TPOT rises with the batch"}}
	}
	return f
}

// prefillFinding explains TTFT dominated by prompt processing.
func prefillFinding(e *env, ep Endpoint, ev []Evidence) Finding {
	eng := ep.Engine()
	st := ep.State
	f := Finding{ID: "ttft_prefill", Endpoint: ep.URL, Category: Prefill, Severity: model.SevWarn,
		Title: "TTFT over SLO: prompt processing (prefill) dominates", Evidence: ev,
		Cause: "long prompts take long to prefill; the queue is not the problem"}
	mp, mpOK := meanPrompt(ep)
	if mpOK {
		f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("prompt ≈%s tokens per request (%s tok/s over %s req/s)", num(math.Round(mp)), num(st.PromptTPS.V), num(st.RequestsPS.V)),
			Source: metricSource(ep, "prompt"), Window: st.RateWindow})
	}
	if st.PrefixHit.OK {
		f.Evidence = append(f.Evidence, Evidence{Text: "prefix-cache hit rate " + pct(st.PrefixHit.V), Source: metricSource(ep, "prefix"), Window: st.RateWindow})
	}
	var route *Action
	if ev, cut, ok := longTail(ep); ok {
		f.Evidence = append(f.Evidence, ev)
		route = &Action{Change: fmt.Sprintf("route prompts over ≈%d tokens to a separate pool of replicas", roundDown(int(cut), 256)),
			Why:      "the long tail of prompts takes the prefill steps the short ones wait behind: apart, short prompts get their first token fast",
			TradeOff: "a second pool to run, and a router that counts prompt tokens (or routes by client)"}
	}
	// A bigger step budget finishes a long prompt in fewer steps.
	chunk := 8192
	if mpOK && mp > 0 {
		chunk = int(math.Min(16384, math.Max(2048, math.Exp2(math.Ceil(math.Log2(mp))))))
	}
	itlV, itlOK := itlValue(&ep)
	itlOver := itlOK && itlV > e.cfg.SLOITL.Seconds()
	// The engine whose start-up line states the step budget is advised
	// its budget here, and so is an unknown engine.
	budget := stepBudgetOf
	switch {
	case eng == budget.ID || eng == model.Unknown:
		// The step budget only goes up here, and never while ITL is over its
		// SLO: the ITL finding then lowers it, and one value must be advised.
		cur, _, curKnown := e.chunkedBudget(ep)
		switch {
		case itlOver:
			f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("ITL p99≈%s is over its SLO too: a bigger %s would make it worse, so it is not advised here", secs(itlV), stepBudgetFlag),
				Source: metricSource(ep, "itl")})
		case curKnown && chunk > cur:
			f.Actions = append(f.Actions, Action{Change: engines.Fill(budget.Levers.StepBudget, strconv.Itoa(chunk)),
				Why:      fmt.Sprintf("raises the step budget from %d: with chunked prefill a prompt is prefilled in chunks of at most this many tokens, so bigger chunks mean fewer steps per prompt", cur),
				TradeOff: "decodes in the same steps wait longer: ITL p99 rises"})
		case curKnown:
			f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("step budget %d tokens already holds a mean prompt: raising it would not help", cur),
				Source: "log (" + kindChunkedPrefill + ")"})
		default:
			f.Actions = append(f.Actions, Action{Change: engines.Fill(budget.Levers.StepBudget, strconv.Itoa(chunk)) + " (if it is lower now)",
				Why: "with chunked prefill (" + budget.Name + "'s default) a prompt is prefilled in chunks of at most this many tokens per step: raising it to the prompt size means fewer steps per prompt (" +
					budget.Name + "'s default is " + budget.Levers.ChunkedDefault.Budget + "; without chunked prefill it is ≥ " + flagOf(budget.Levers.MaxLen) + " and does not help)",
				TradeOff: "decodes in the same steps wait longer: ITL p99 rises"})
		}
	default:
		if p := levers(eng).Prefill; p != nil {
			f.Actions = append(f.Actions, changes(p(chunk))...)
		}
	}
	if st.PrefixHit.OK && st.PrefixHit.V < 0.2 {
		if v, ok := infoKey(ep, "enable_prefix_caching"); ok && !isTrue(v) {
			f.Actions = append(f.Actions, Action{Change: "--enable-prefix-caching", Why: "prefix caching is off (" + pct(st.PrefixHit.V) + " hits): prompts sharing a system prompt recompute it",
				TradeOff: "none measurable; cached blocks are evicted first under pressure"})
		} else {
			f.Actions = append(f.Actions, Action{Change: "put the shared part of prompts (system prompt, tools, documents) first and keep it byte-identical",
				Why: "hit rate " + pct(st.PrefixHit.V) + ": the cache only matches identical prefixes", TradeOff: "client change"})
		}
	}
	f.Actions = append(f.Actions, forEngine(eng, tpChange(2, "prefill is compute-bound: more GPUs per replica cut it almost linearly", "a second GPU; communication overhead"))...)
	if route != nil {
		f.Actions = append(f.Actions, *route)
	}
	return f
}

// maxRunning is the largest running batch seen: now or in the history.
func maxRunning(e *env, ep Endpoint) float64 {
	m := ep.State.Running.Or(0)
	for _, p := range e.batch(&ep) {
		m = math.Max(m, p.Running)
	}
	return m
}

// longPrompt is the mean prompt length (tokens) from which prefill itself is
// a plausible cause of slow first tokens.
const longPrompt = 1024

// meanPrompt is prompt tokens per finished request over the window.
func meanPrompt(ep Endpoint) (float64, bool) {
	st := ep.State
	if st.PromptTPS.OK && st.RequestsPS.OK && st.RequestsPS.V > 0 {
		return st.PromptTPS.V / st.RequestsPS.V, true
	}
	return 0, false
}

// slowSteps reports TTFT made slow by the decode batch, not by prompt
// length: short prompts, per-token latency over its SLO with a real batch.
// Each prefill rides in a step that also decodes the whole batch.
func slowSteps(e *env, ep Endpoint) bool {
	mp, ok := meanPrompt(ep)
	v, itlOK := itlValue(&ep)
	return ok && mp < longPrompt && itlOK && v > e.cfg.SLOITL.Seconds() && ep.State.Running.Or(0) >= 4
}

// escalate records how far over its threshold a finding is: at BreachCrit
// times or more it is critical, says so, and opens after a short hold.
func escalate(e *env, f Finding, breach float64) Finding {
	f.Breach = breach
	if e.cfg.BreachCrit > 0 && breach >= e.cfg.BreachCrit {
		f.Severity = model.SevCrit
		f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("%s× its threshold (critical from %s×)", num(math.Round(breach*10)/10), num(e.cfg.BreachCrit)), Source: "threshold"})
	}
	return f
}
