package diagnosis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "kv_full", checks: "KV cache below the high-water mark", needs: needMetrics, hold: func(c Config) time.Duration { return c.KVFor }, local: true, eval: ruleKVFull},
		rule{id: "kv_preemption", checks: "preemptions/retractions per second", needs: needMetrics, hold: holdShort, local: true, eval: rulePreempt},
	)
}

func ruleKVFull(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		kv := ep.State.KVUsage
		if !kv.OK {
			e.lack(ep, e.notExposed(ep, "KV-cache usage", " (", ")"))
			continue
		}
		if kv.V < e.cfg.KVHigh {
			if hi := ep.State.KVUsageMax; hi.OK && hi.V >= e.cfg.KVHigh {
				// Only a floor is known (llama.cpp, layout unknown): below
				// the mark is not "fine".
				e.lack(ep, "KV-cache usage (between "+pct(kv.V)+" and "+pct(hi.V)+": whether the KV cache is unified is unknown; attach the engine's log or run llmtop on its machine)")
			}
			continue
		}
		_, _, which := kvBatch(*ep)
		on := ""
		if which != "" {
			on = " on " + which
		}
		ev := []Evidence{{Text: "KV usage " + pct(kv.V) + on + " ≥ " + pct(e.cfg.KVHigh), Source: metricSource(*ep, "kv")}}
		ev = append(ev, kvContext(*ep)...)
		out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
			Title: "KV cache full (" + pct(kv.V) + ")", Evidence: ev,
			Cause:   "running requests hold nearly every KV block: new requests wait for space and long generations get preempted",
			Actions: kvActions(e, *ep)})
	}
	return out
}

func rulePreempt(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }()
	for ep := range each(e.withMetrics()) {
		p := ep.State.PreemptionsPS
		paused := ep.State.Paused
		if p.OK || paused.OK {
			judged++
		}
		if !p.OK && paused.OK && paused.V >= 1 {
			// TensorRT-LLM pauses requests for want of KV blocks (MAX_UTILIZATION
			// scheduler): its preemption, counted now rather than as a rate.
			ev := []Evidence{{Text: fmt.Sprintf("%s requests paused for KV blocks in the newest iteration", num(paused.V)), Source: "inflightBatchingStats.numPausedRequests (iteration stats)"}}
			if kv := ep.State.KVUsage; kv.OK {
				ev = append(ev, Evidence{Text: "KV usage " + pct(kv.V), Source: metricSource(*ep, "kv")})
			}
			out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevCrit,
				Title: fmt.Sprintf("KV pressure: %s requests paused", num(paused.V)), Evidence: append(ev, kvContext(*ep)...),
				Cause:   "the KV pool cannot hold every running request's growing context: the scheduler pauses requests and resumes them later, inflating their latency",
				Actions: kvActions(e, *ep)})
			continue
		}
		if !p.OK {
			if engines.PreemptionOf(ep.Engine()).Counted != "" {
				e.lack(ep, "preemption counter (no data in the window)")
			}
			continue // llama.cpp, Ollama, TGI: no preemption counter to read
		}
		if p.V <= e.cfg.PreemptPS {
			continue
		}
		word := "preemptions"
		if w := engines.PreemptionOf(ep.Engine()).Counted; w != "" {
			word = w
		}
		ev := []Evidence{{Text: fmt.Sprintf("%s %s/s > %s/s (%s in %s)", word, num(p.V), num(e.cfg.PreemptPS), optNum(ep.State.Preemptions), dur(ep.State.RateWindow)),
			Source: metricSource(*ep, "preemptions"), Window: ep.State.RateWindow}}
		if kv := ep.State.KVUsage; kv.OK {
			ev = append(ev, Evidence{Text: "KV usage " + pct(kv.V), Source: metricSource(*ep, "kv")})
		}
		ev = append(ev, kvContext(*ep)...)
		out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevCrit,
			Title: fmt.Sprintf("KV pressure: %s/s %s", num(p.V), word), Evidence: ev,
			Cause:   "the KV pool cannot hold every running request's growing context: the engine evicts requests and recomputes them later, wasting GPU time and inflating latency",
			Actions: kvActions(e, *ep)})
	}
	return out
}

// kvContext adds running/waiting and capacity numbers to KV evidence.
func kvContext(ep Endpoint) []Evidence {
	st := ep.State
	var ev []Evidence
	if st.Running.OK {
		t := "running " + num(st.Running.V)
		if st.Waiting.OK {
			t += ", waiting " + num(st.Waiting.V)
		}
		ev = append(ev, Evidence{Text: t, Source: metricSource(ep, "running")})
	}
	if st.KVCapacityTokens.OK {
		t := "KV pool " + num(st.KVCapacityTokens.V) + " tokens"
		if n := len(st.Engines); n > 1 {
			t += fmt.Sprintf(" in the fullest of %d engines (each has its own)", n)
		}
		ev = append(ev, Evidence{Text: t, Source: "engine config"})
	}
	ev = append(ev, kvEstimate(ep)...)
	return append(ev, perEngine(ep)...)
}

// perEngine is one evidence line per data-parallel engine: which one is
// full, which one preempts (an average would hide it).
func perEngine(ep Endpoint) []Evidence {
	if len(ep.State.Engines) < 2 {
		return nil
	}
	var ev []Evidence
	for _, g := range ep.State.Engines {
		ev = append(ev, Evidence{Text: fmt.Sprintf("engine %s: KV %s, running %s, waiting %s", g.ID, optPct(g.KVUsage), optNum(g.Running), optNum(g.Waiting)),
			Source: metricName(metricSource(ep, "kv")) + "{engine=\"" + g.ID + "\"}"})
	}
	return ev
}

// metricName is a cited series' metric name without its label selector
// (the endpoint's KV is cited as the fullest engine's series).
func metricName(series string) string {
	if i := strings.IndexByte(series, '{'); i > 0 {
		return series[:i]
	}
	return series
}

// headroom is the VRAM free on the fullest GPU the engine uses, as bytes and
// share of the device; ok is false without GPU readings.
func headroom(e *env) (free, share float64, name string, ok bool) {
	g := e.in.GPU
	if g == nil {
		return 0, 0, "", false
	}
	share = math.Inf(1)
	for _, d := range g.GPUs {
		if !d.MemUsed.OK || !d.MemTotal.OK || d.MemTotal.V <= 0 || d.Lost {
			continue
		}
		if !servesEngine(&d) && hasEngineGPU(g) {
			continue
		}
		s := (d.MemTotal.V - d.MemUsed.V) / d.MemTotal.V
		if s < share {
			free, share, name, ok = d.MemTotal.V-d.MemUsed.V, s, fmt.Sprintf("GPU %d", d.Index), true
		}
	}
	return free, share, name, ok
}

func servesEngine(d *model.GPU) bool {
	for _, p := range d.Processes {
		if p.Engine != "" {
			return true
		}
	}
	return false
}

func hasEngineGPU(g *model.GPUSnapshot) bool {
	for _, d := range g.GPUs {
		if servesEngine(&d) {
			return true
		}
	}
	return false
}

// kvActions ranks the KV-pressure fixes by VRAM headroom: a bigger pool
// first when the GPU has room, else smaller KV per token, fewer concurrent
// requests and shorter contexts.
func kvActions(e *env, ep Endpoint) []Action {
	eng := ep.Engine()
	if engines.HasSlots(eng) {
		return llamaContext(e, ep)
	}
	free, share, gpu, gpuOK := headroom(e)
	var grow *Action
	if flag, cur, known := memFraction(ep); flag != "" {
		a := Action{Why: "a bigger KV pool holds more running requests", TradeOff: "less VRAM for activations and CUDA graphs: too high and the engine OOMs at start"}
		curText := "default"
		if known {
			curText = trimFloat(cur)
		}
		switch {
		case gpuOK && share >= 0.05 && cur > 0:
			next := math.Min(0.97, math.Floor((cur+share-0.02)*100)/100)
			a.Change = fmt.Sprintf("%s %.2f (from %s)", flag, next, curText)
			a.Why = fmt.Sprintf("%s has %s (%s) free", gpu, gib(free), pct(share))
		case gpuOK && share >= 0.05:
			a.Change = fmt.Sprintf("%s higher by about %.2f", flag, share-0.02)
			a.Why = fmt.Sprintf("%s has %s (%s) free", gpu, gib(free), pct(share))
		case gpuOK:
			a = Action{}
		default:
			a.Change = flag + " higher, only if nvidia-smi shows free VRAM"
			a.Why = "no GPU readings: headroom unknown"
		}
		if a.Change != "" {
			grow = &a
		}
	}
	var acts []Action
	if grow != nil && gpuOK {
		acts = append(acts, *grow)
	}
	if dt, ok := infoKey(ep, "cache_dtype", "kv_cache_dtype"); !ok || dt == "auto" || dt == "f16" || dt == "bf16" || dt == "float16" || dt == "bfloat16" {
		acts = append(acts, forEngine(eng, fp8KV)...)
	}
	if kv, running, which := kvBatch(ep); running.OK && running.V > 1 && kv.OK && kv.V > 0 {
		perSeq := kv.V / running.V
		n := int(math.Floor(0.9 / perSeq))
		pool := "the pool"
		if which != "" {
			pool = which + "'s pool (the cap is per engine)"
		}
		if n >= 1 && float64(n) < running.V {
			acts = append(acts, Action{Change: capChange(eng, n),
				Why:      fmt.Sprintf("each running request holds ≈%s of %s: %d fit in 90 %% without preemption", pct(perSeq), pool, n),
				TradeOff: "fewer requests per step: lower throughput, more queueing"})
		} else {
			acts = append(acts, Action{Change: capChange(eng, 0) + " lower", Why: "fewer concurrent requests need fewer KV blocks", TradeOff: "lower throughput, more queueing"})
		}
	}
	if mc := maxContext(ep); mc > 8192 {
		acts = append(acts, Action{Change: maxLenChange(eng, roundDown(mc/2, 1024)),
			Why: fmt.Sprintf("the %d-token context lets a few long requests take the pool", mc), TradeOff: "requests longer than the cap are rejected (400)"})
	}
	if grow != nil && !gpuOK {
		acts = append(acts, *grow)
	}
	return acts
}

// maxContext is the served model's context length when the endpoint says it.
func maxContext(ep Endpoint) int {
	for _, m := range ep.Identity.Models {
		if m.MaxContext > 0 && (ep.Model() == "" || m.ID == ep.Model()) {
			return m.MaxContext
		}
	}
	return 0
}

// llamaContext is the KV advice for an engine whose cap is slots
// (engines.Spec.Slots: llama-server). Its pool is -c tokens whatever their
// type (quantising the cache alone admits nothing more),
// split over the -np slots unless unified, and it never preempts: fewer
// slots only queue more. The lever is a larger -c, with each slot at least
// as large as the prompts the log shows it rejecting; a quantised cache is
// how to afford it (issue 31 item 25: -c 2048 -np 2 under ~1 000-token
// prompts was told to quantise and to halve its slots).
func llamaContext(e *env, ep Endpoint) []Action {
	st := ep.State
	slots := 1
	if n, ok := currentCap(ep); ok {
		slots = n
	}
	var maxPrompt, slotCtx int
	for _, x := range e.eventsOf(ep.URL) {
		po := engines.LogOf(x.Kind).PromptOver
		if po.Prompt == "" {
			continue
		}
		maxPrompt = max(maxPrompt, fieldInt(x, po.Prompt))
		slotCtx = max(slotCtx, fieldInt(x, po.Context))
	}
	cur := 0
	if st.KVCapacityTokens.OK && st.KVCapacityTokens.V > 0 {
		cur = int(st.KVCapacityTokens.V)
	} else if slotCtx > 0 {
		cur = slotCtx * slots
	}
	per := 0
	switch {
	case maxPrompt > 0:
		per = roundUp(maxPrompt+256, 1024) // the prompt and at least 256 tokens to answer it
	case cur > 0:
		per = 2 * cur / slots
	}
	lever := levers(ep.Engine()).MaxLen
	grow := Action{Change: engines.Fill(lever, "N") + " higher", Why: "the KV pool is -c tokens shared by the slots: a larger -c admits more of the waiting requests",
		TradeOff: "more memory for the KV cache"}
	if per > 0 {
		newC := per * slots
		grow.Change = engines.Fill(lever, fmt.Sprint(newC))
		if cur > 0 {
			grow.Change += fmt.Sprintf(" (from %d)", cur)
		}
		grow.Why = fmt.Sprintf("%d slots of %d tokens", slots, per)
		if maxPrompt > 0 {
			grow.Why += fmt.Sprintf(": the log shows prompts of up to %d tokens rejected by a %d-token slot", maxPrompt, slotCtx)
		}
		if engines.PreemptionOf(ep.Engine()).Never {
			grow.Why += "; " + engines.Name(ep.Engine()) + " never preempts, so what does not fit waits or is rejected"
		}
	}
	acts := []Action{grow}
	if dt, ok := infoKey(ep, "cache_type_k", "cache_dtype", "kv_cache_dtype"); !ok || dt == "f16" || dt == "bf16" || dt == "f32" {
		q := levers(ep.Engine()).FP8KV
		acts = append(acts, Action{Change: q.Change + " with the larger -c", Why: "the pool is -c tokens whatever their type: quantising alone admits nothing more, but it fits the larger -c in about the memory of the old one",
			TradeOff: q.TradeOff})
	}
	return acts
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }
