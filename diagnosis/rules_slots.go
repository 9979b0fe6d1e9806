package diagnosis

import (
	"fmt"
	"math"

	"github.com/llmtop/llmtop/model"
)

// The concurrency cap rule: every slot (llama.cpp -np, or another engine's
// running-request cap) busy while requests wait for one. queue_backlog needs
// more than WaitingHigh waiting and the TTFT rules need a TTFT, so a small
// queue behind a small cap on an engine without TTFT (llama.cpp) was silent.

func init() {
	register(rule{id: "concurrency_cap", checks: "running requests below the concurrency cap (llama.cpp slots) while requests wait",
		needs: needMetrics, hold: holdDefault, eval: ruleConcurrencyCap})
}

func ruleConcurrencyCap(e *env) []Finding {
	var out []Finding
	for _, ep := range e.withMetrics() {
		st := ep.State
		waiting := st.Waiting
		if !waiting.OK || (st.Deferred.OK && st.Deferred.V > waiting.V) {
			waiting = st.Deferred
		}
		if !st.Running.OK || !waiting.OK || waiting.V <= 0 {
			continue
		}
		limit, ok := currentCap(ep)
		if !ok {
			e.lack(ep, "concurrency cap (not exposed: running cannot be compared with it)")
			continue
		}
		if st.Running.V < float64(limit) {
			continue
		}
		if ttftJudged(e, ep) {
			continue // the TTFT rules say whether the wait matters (ttft_queueing explains it at the cap)
		}
		if st.KVUsage.OK && st.KVUsage.V >= 0.9 && ep.Engine() != model.LlamaCpp {
			continue // a full shared KV pool, not the cap, holds requests back: the KV rules say so
		}
		out = append(out, capFinding(e, ep, limit, waiting))
	}
	return out
}

// ttftJudged reports whether TTFT is measured over the window, so the TTFT
// rules can judge whether waiting requests matter.
func ttftJudged(e *env, ep Endpoint) bool {
	_, label, _ := ttftOver(ep, e.cfg.SLOTTFT.Seconds())
	return label != ""
}

// capFinding explains the full slots and says what to raise.
func capFinding(e *env, ep Endpoint, limit int, waiting model.Opt) Finding {
	st := ep.State
	eng := ep.Engine()
	unit, slots := "running requests", "concurrency slots"
	if eng == model.LlamaCpp {
		unit, slots = "slots busy", "slots"
	}
	f := Finding{ID: "concurrency_cap", Endpoint: ep.URL, Category: Queueing, Severity: model.SevWarn,
		Title: fmt.Sprintf("all %d %s taken: %s requests wait for one", limit, slots, num(waiting.V)),
		Evidence: []Evidence{
			{Text: fmt.Sprintf("%s %s of the cap %d", num(st.Running.V), unit, limit), Source: metricSource(ep, "running")},
			{Text: "waiting " + num(waiting.V), Source: metricSource(ep, "waiting")},
		},
		Cause: fmt.Sprintf("the engine runs at most %d requests at once and every one is taken; new requests wait until one finishes", limit)}
	if st.KVUsage.OK {
		f.Evidence = append(f.Evidence, Evidence{Text: "KV usage " + pct(st.KVUsage.V), Source: metricSource(ep, "kv")})
	}
	itl, itlOK := itlValue(ep)
	if itlOK && itl > e.cfg.SLOITL.Seconds() {
		f.Cause += fmt.Sprintf("; per-token latency (%s) is already over its SLO %s, so a bigger batch would slow every answer", secs(itl), dur(e.cfg.SLOITL))
		f.Actions = []Action{replicas(ep)}
		return f
	}
	if !itlOK {
		// Unknown is not fine (issue 14 item 10): without a per-token
		// latency a bigger batch may push every answer past its SLO.
		f.Cause += "; per-token latency is not measured in the window, so whether a bigger batch has room is not known"
		f.Actions = []Action{replicas(ep), {Change: capChange(eng, 0) + " higher only once ITL/TPOT is seen under its SLO " + dur(e.cfg.SLOITL),
			Why: "unknown per-token latency is not room: a bigger batch slows every request's decode", TradeOff: "TPOT rises with the batch"}}
		return f
	}
	// Room for the requests seen waiting, at most doubling the cap.
	n := min(max(int(math.Ceil(st.Running.V+waiting.V)), limit+1), 2*limit)
	a := Action{Change: capChange(eng, n), Why: fmt.Sprintf("%s requests want a slot at once; %d run", num(st.Running.V+waiting.V), limit),
		TradeOff: "requests share each step: per-token latency rises with the batch, and more requests hold KV cache at once"}
	if eng == model.LlamaCpp {
		if perSlot, ok := llamaSlotContext(ep, limit); ok {
			a.Change = fmt.Sprintf("-np %d -c %d", n, n*perSlot)
			a.Why += fmt.Sprintf("; -c is split across the slots, so -c %d keeps each slot's %d-token context", n*perSlot, perSlot)
		}
		a.TradeOff = "the KV cache grows with -c (memory), and each slot generates slower as more share every step"
	}
	f.Actions = []Action{a, replicas(ep)}
	return f
}

// llamaSlotContext is the context each llama.cpp slot has: /props n_ctx
// (the per-slot value) or the total context over the slots.
func llamaSlotContext(ep Endpoint, slots int) (int, bool) {
	if len(ep.Identity.Models) > 0 && ep.Identity.Models[0].MaxContext > 0 {
		return ep.Identity.Models[0].MaxContext, true
	}
	if c := ep.State.KVCapacityTokens; c.OK && c.V > 0 && slots > 0 {
		return int(c.V) / slots, true
	}
	return 0, false
}
