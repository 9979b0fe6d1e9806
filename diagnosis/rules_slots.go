package diagnosis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The concurrency cap rule: every slot (llama.cpp -np, or another engine's
// running-request cap) busy while requests wait for one. queue_backlog needs
// more than WaitingHigh waiting and the TTFT rules need a TTFT, so a small
// queue behind a small cap on an engine without TTFT (llama.cpp) was silent.

func init() {
	register(rule{id: "concurrency_cap", checks: "running requests below the concurrency cap (" + engines.LlamaCpp.Name + " slots) while requests wait",
		needs: needMetrics, hold: holdDefault, local: true, eval: ruleConcurrencyCap})
}

func ruleConcurrencyCap(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		st := ep.State
		waiting := st.Waiting
		if !waiting.OK || (st.Deferred.OK && st.Deferred.V > waiting.V) {
			waiting = st.Deferred
		}
		if !st.Running.OK || !waiting.OK {
			// passing here claimed "running below the cap while requests
			// wait" of an engine that says neither (Ollama)
			e.lack(ep, "the concurrency cap (running or waiting requests not exposed)")
			continue
		}
		if waiting.V <= 0 {
			continue
		}
		limit, ok := currentCap(*ep)
		if !ok && engines.HasSlots(ep.Engine()) && st.Running.OK && st.Running.V >= 1 {
			// llama-server defers a request only when no slot is free: the
			// busy slots are all of them, /slots or not (issue 14 item 16).
			limit, ok = int(st.Running.V), true
		}
		if !ok {
			e.lack(ep, "concurrency cap (not exposed: running cannot be compared with it)")
			continue
		}
		if st.Running.V < float64(limit) {
			continue
		}
		if ttftJudged(e, *ep) {
			continue // the TTFT rules say whether the wait matters (ttft_queueing explains it at the cap)
		}
		if st.KVUsage.OK && st.KVUsage.V >= 0.9 && !engines.HasSlots(ep.Engine()) {
			continue // a full shared KV pool, not the cap, holds requests back: the KV rules say so
		}
		out = append(out, capFinding(e, *ep, limit, waiting))
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
	if engines.HasSlots(eng) {
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
	itl, itlOK := itlValue(&ep)
	if itlOK && itl > e.cfg.SLOITL.Seconds() {
		f.Cause += fmt.Sprintf("; per-token latency (%s) is already over its SLO %s, so a bigger batch would slow every answer", secs(itl), dur(e.cfg.SLOITL))
		f.Actions = []Action{replicas(ep)}
		return f
	}
	if !itlOK {
		// Unknown is not fine (issue 14 item 10): without a per-token
		// latency a bigger batch may push every answer past its SLO.
		f.Cause += "; per-token latency is not measured in the window, so whether a bigger batch has room is not known"
		f.Evidence = append(f.Evidence, itlSinceStart(e, ep)...)
		f.Actions = []Action{replicas(ep), {Change: capChange(eng, 0) + " higher only once ITL/TPOT is seen under its SLO " + dur(e.cfg.SLOITL),
			Why: "unknown per-token latency is not room: a bigger batch slows every request's decode", TradeOff: "TPOT rises with the batch"}}
		return f
	}
	// Room for the requests seen waiting, at most doubling the cap.
	n := min(max(int(math.Ceil(st.Running.V+waiting.V)), limit+1), 2*limit)
	a := Action{Change: capChange(eng, n), Why: fmt.Sprintf("%s requests want a slot at once; %d run", num(st.Running.V+waiting.V), limit),
		TradeOff: "requests share each step: per-token latency rises with the batch, and more requests hold KV cache at once"}
	if engines.HasSlots(eng) && levers(eng).CapPool.Change != "" {
		a = slotsPool(ep, n, a)
	}
	f.Actions = []Action{a, replicas(ep)}
	return f
}

// slotsPool is the advice for n slots (llama-server's). Since unified KV became
// the default with automatic -np, an explicit -np N turns it off and
// splits -c into N per-slot caches (tools/server/server.cpp: "setting
// n_parallel = 4 and kv_unified = true (add -kvu to disable this)", PR
// #16736); -np N -c N×perSlot would multiply the KV memory: the cap that
// keeps one pool is the engine's Levers.CapPool.
func slotsPool(ep Endpoint, n int, a Action) Action {
	l := levers(ep.Engine()).CapPool
	pool := "as it is"
	if c := ep.State.KVCapacityTokens; c.OK && c.V > 0 {
		pool = strconv.Itoa(int(c.V))
	}
	a.Change = fmt.Sprintf(l.Change, n, pool)
	a.Why += "; " + l.Why
	a.TradeOff = l.TradeOff
	if !ep.State.MaxRunning.OK {
		a.Why += " (the slot count is the busy slots: a request is deferred only when none is free)"
	}
	return a
}
