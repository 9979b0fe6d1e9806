package diagnosis

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "itl_high", checks: "ITL/TPOT p99 within the SLO (prefill stalls, batch knee, bandwidth)", needs: needMetrics, hold: holdDefault, local: true, eval: ruleITL},
		rule{id: "spec_accept_low", checks: "speculative-decoding acceptance", needs: needMetrics, hold: holdDefault, local: true, eval: ruleSpec},
		rule{id: "spec_no_gain", checks: "speculative decoding made decoding faster than the run before it", needs: needMetrics, hold: holdDefault, local: true, eval: ruleSpecGain},
	)
}

// itlDist is the per-token latency: every gap (ITL) where exposed, else the
// per-request mean (TPOT).
func itlDist(ep *Endpoint) (model.Dist, string, bool) {
	if d := ep.State.Latency[model.ITL]; d.Exposed && (d.P99.OK || d.Mean.OK) {
		return d, "ITL", true
	}
	if d := ep.State.Latency[model.TPOT]; d.Exposed && (d.P99.OK || d.Mean.OK) {
		return d, "TPOT", true
	}
	return model.Dist{}, "", false
}

// itlSinceStart is evidence for a window without per-token latency: the
// engine's ITL (or TPOT) since it started, labelled as such; nil when it
// has none either.
func itlSinceStart(e *env, ep Endpoint) []Evidence {
	for _, l := range []model.Latency{model.ITL, model.TPOT} {
		d, ok := ep.State.SinceStart[l]
		if !ok || !d.Mean.OK {
			continue
		}
		name := strings.ToUpper(string(l))
		t := fmt.Sprintf("%s since the engine started (not this window): mean %s", name, secs(d.Mean.V))
		if d.P99.OK && !d.AllBelow.OK {
			t += ", " + p99Text(d)
		}
		if d.Mean.V > e.cfg.SLOITL.Seconds() {
			t += fmt.Sprintf(", already over the %s SLO", dur(e.cfg.SLOITL))
		}
		return []Evidence{{Text: t, Source: metricSource(ep, string(l))}}
	}
	return nil
}

// p99Text is "p99≈120 ms", or "p99 over 30 s" where the p99 lies past the
// highest finite bucket (its value is then that bound, a floor).
func p99Text(d model.Dist) string {
	if d.Past(0.99) {
		return "p99 over " + secs(d.Above.V)
	}
	return "p99≈" + secs(d.P99.V)
}

// itlValue is the number compared with the SLO: p99, else mean.
func itlValue(ep *Endpoint) (float64, bool) {
	d, _, ok := itlDist(ep)
	if !ok {
		return 0, false
	}
	if d.P99.OK {
		return d.P99.V, true
	}
	return d.Mean.V, true
}

func ruleITL(e *env) []Finding {
	var out []Finding
	slo := e.cfg.SLOITL.Seconds()
	for ep := range each(e.withMetrics()) {
		d, name, ok := itlDist(ep)
		if !ok {
			e.lack(ep, "ITL/TPOT (not exposed or no tokens in the window)")
			continue
		}
		v, _ := itlValue(ep)
		if v <= slo {
			if !d.P99.OK {
				e.lack(ep, meanOnly(name))
			}
			continue
		}
		label := name + " p99≈"
		if d.Past(0.99) {
			label = name + " p99 over "
		}
		if !d.P99.OK {
			label = name + " mean "
		}
		ev := []Evidence{{Text: label + secs(v) + " > SLO " + dur(e.cfg.SLOITL), Source: metricSource(*ep, map[string]string{"ITL": "itl", "TPOT": "tpot"}[name]), Window: d.Window}}
		if d.P50.OK {
			ev = append(ev, Evidence{Text: name + " p50≈" + secs(d.P50.V), Source: metricSource(*ep, "itl"), Window: d.Window})
		}
		out = append(out, itlFinding(e, *ep, d, ev))
	}
	return out
}

// itlFinding tells apart the three decode causes: prefill stalls (a spiky
// tail), the batch knee (latency grows with the batch), and bandwidth (slow
// even with a small batch).
func itlFinding(e *env, ep Endpoint, d model.Dist, ev []Evidence) Finding {
	eng := ep.Engine()
	st := ep.State
	f := Finding{Endpoint: ep.URL, Category: Decode, Severity: model.SevWarn, Evidence: ev}
	spiky := d.P50.OK && d.P99.OK && d.P99.V >= 3*d.P50.V && d.P50.V <= e.cfg.SLOITL.Seconds()
	chunked, chunkedKnown := infoKey(ep, "enable_chunked_prefill", "chunked_prefill")
	budget, budgetAt, budgetKnown := e.chunkedBudget(ep)
	if spiky && budgetKnown {
		if g, ok := stepBudgetStall(e, f, ep, d, budget, budgetAt); ok {
			return g
		}
	} else if spiky && (!chunkedKnown || !isTrue(chunked)) {
		f.ID, f.Title = "itl_prefill_stall", "ITL spikes: decodes stall behind long prefills"
		f.Category = Prefill
		f.Cause = fmt.Sprintf("median gap %s but p99 %s: whole prompts are prefilled in the same steps as running decodes", secs(d.P50.V), secs(d.P99.V))
		if lv := levers(eng); lv.ChunkedDefault.Off != "" && vllmV1(ep) && (!chunkedKnown || isTrue(chunked)) {
			// V1 chunks prefill by default: the stall is the step budget.
			f.Cause = fmt.Sprintf("median gap %s but p99 %s: a step that carries a prompt chunk (up to %s tokens; V1 chunks prefill by default) holds every running decode in it", secs(d.P50.V), secs(d.P99.V), flagOf(lv.StepBudget))
		}
		if chunkedKnown {
			f.Evidence = append(f.Evidence, Evidence{Text: "chunked prefill: " + chunked, Source: "engine config"})
		}
		if a, ok := chunkedPrefill(ep, 2048); ok {
			f.Actions = append(f.Actions, a)
		} else {
			f.Actions = append(f.Actions, Action{Change: "num_batch 256 (request option)", Why: "smaller prompt batches interleave with generation", TradeOff: "slower prompt processing"})
		}
		return f
	}
	if st.Running.OK && st.Running.V >= 4 {
		limit, why := kneeCap(e, ep, d, e.cfg.SLOITL.Seconds())
		if limit > 0 && float64(limit) < st.Running.V {
			f.ID, f.Title = "itl_decode_batch", fmt.Sprintf("ITL over SLO at batch %s: decode-bound past the knee", num(st.Running.V))
			f.Cause = "every decode step reads the weights and each running request's KV; past the knee a bigger batch costs every request latency"
			f.Evidence = append(f.Evidence, Evidence{Text: why, Source: metricSource(ep, "running") + " × " + metricSource(ep, "itl")})
			if v, label, over := ttftOver(ep, e.cfg.SLOTTFT.Seconds()); over && slowSteps(e, ep) {
				f.Evidence = append(f.Evidence, Evidence{Text: label + secs(v) + " also over its SLO: short prompts wait on the same slow steps",
					Source: metricSource(ep, "ttft"), Window: ep.State.Latency[model.TTFT].Window})
			}
			a := Action{Change: capChange(eng, limit), Why: "just under the batch size where ITL crossed the SLO",
				TradeOff: "lower peak throughput; excess requests queue (TTFT rises) unless another replica takes them"}
			if conf := kneeConfidence(e, ep); conf != "" {
				// A short watch sees few batch sizes: the number moves a
				// lot with more of them (60 after 45 s, 311 after 2 min).
				a.Why += "; " + conf
				f.Evidence = append(f.Evidence, Evidence{Text: conf, Source: "llmtop"})
			}
			f.Actions = []Action{a, batchReplicas(ep)}
			return f
		}
	}
	if g, ok := itlUnexplained(e, ep, f); ok {
		return g
	}
	if cpu := onCPU(e, ep); cpu != "" {
		f.ID, f.Title = "itl_bandwidth", "ITL over SLO with a small batch: the CPU's memory bandwidth"
		f.Cause = "each token reads all weights from system memory, which is an order of magnitude slower than a GPU's; no GPU serves this engine"
		f.Evidence = append(f.Evidence, Evidence{Text: "no GPU on this machine: " + cpu, Source: "GPU source"})
		f.Actions = cpuDecode(eng)
		return f
	}
	f.ID, f.Title = "itl_bandwidth", "ITL over SLO with a small batch: memory-bandwidth-bound"
	f.Cause = "each token reads all weights from HBM; with few requests running the model is simply too large for this GPU's bandwidth"
	f.Actions = forEngine(eng, quantize)
	f.Actions = append(f.Actions, forEngine(eng, tpChange(2, "splits the weight reads over two GPUs' bandwidth", "a second GPU"))...)
	if !st.SpecAccept.OK {
		// Not speculating yet (no acceptance counters moved): at a small
		// batch the GPU has compute to spare for verifying drafts.
		f.Actions = append(f.Actions, forEngine(eng, speculate)...)
	}
	return f
}

// smallBatch is the running batch below which a slow decode is put down
// to bandwidth (the knee needs at least this many to be read).
const smallBatch = 4

// itlUnexplained is the ITL finding when no knee was found and the batch is
// not small, or is unknown: a bandwidth verdict (quantise, add GPUs,
// speculate) would be advice for a problem the numbers do not show (issue
// 31: 17 running, 15 waiting and 12–29 preemptions/s read as "small batch").
func itlUnexplained(e *env, ep Endpoint, f Finding) (Finding, bool) {
	st := ep.State
	waiting := st.Waiting.OK && st.Waiting.V > 0
	preempting := st.PreemptionsPS.OK && st.PreemptionsPS.V > 0
	if st.Running.OK && st.Running.V < smallBatch && !waiting && !preempting {
		return f, false
	}
	batch := "unknown"
	if st.Running.OK {
		batch = num(st.Running.V)
	}
	f.ID, f.Title = "itl_loaded", "ITL over SLO at batch "+batch+": no knee found yet"
	var load []string
	if st.Running.OK {
		load = append(load, num(st.Running.V)+" running")
	}
	if st.Waiting.OK {
		load = append(load, num(st.Waiting.V)+" waiting")
	}
	if st.PreemptionsPS.OK {
		load = append(load, num(st.PreemptionsPS.V)+" preemptions/s")
	}
	if len(load) > 0 {
		f.Evidence = append(f.Evidence, Evidence{Text: strings.Join(load, ", ") + ": not a small batch, so not bandwidth at a small batch", Source: metricSource(ep, "running")})
	}
	if conf := kneeConfidence(e, ep); conf != "" {
		f.Evidence = append(f.Evidence, Evidence{Text: conf, Source: "llmtop"})
	}
	f.Cause = "decode is slow under load, but the batch history does not yet show the batch size where it crosses the SLO"
	f.Actions = []Action{{Change: "keep watching: the knee is read from the batch sizes seen, and the cap is named once it shows",
		Why: "a cap named without the knee would be a guess", TradeOff: "none"}, batchReplicas(ep)}
	if preempting {
		f.Cause = fmt.Sprintf("the KV pool is short: %s preemptions/s evict running requests, whose prefill is then recomputed in the same steps as every decode", num(st.PreemptionsPS.V))
		f.Actions = append([]Action{{Change: "fix the KV pressure first (the KV finding names the flag)",
			Why: "recomputed prefills slow every decode step they share", TradeOff: "see the KV finding"}}, f.Actions...)
	}
	return f, true
}

// onCPU says why the engine at ep runs on its CPU ("" when it may have a
// GPU): it is on this machine and the GPU source found none.
func onCPU(e *env, ep Endpoint) string {
	if e.in.NoGPU == "" || !model.IsLoopback(ep.URL) {
		return ""
	}
	return e.in.NoGPU
}

// cpuDecode is the decode advice for an engine with no GPU.
func cpuDecode(eng model.Engine) []Action {
	acts := []Action{{Change: "a smaller quantisation of the model (e.g. Q4_K_M instead of Q8_0 or F16)", Why: "fewer bytes read from memory per token: CPU decode speed follows the model's size",
		TradeOff: "accuracy vs size"}}
	acts = append(acts, changes(levers(eng).Threads)...)
	return append(acts, Action{Change: "serve it on a GPU (a CUDA/Metal/Vulkan build, all layers offloaded)", Why: "a GPU's memory bandwidth is 10–50× a CPU's",
		TradeOff: "a GPU"})
}

// speculate is speculative decoding, for slow per-token latency at a small
// batch: several tokens per weight read when the drafts are accepted.
var speculate = byEngine(func(l engines.Levers) engines.Change { return l.Speculate })

// batchReplicas is the replica advice for a batch past the knee: the
// traffic split over engines, each runs a smaller batch.
func batchReplicas(ep Endpoint) Action {
	a := replicas(ep)
	a.Why = "the same traffic split over two engines halves each one's batch: ITL falls without queueing"
	return a
}

// stepBudgetStall is the prefill stall with chunked prefill already on (the
// log said so, with the step budget n): a step that carries a chunk of up
// to n prompt tokens holds every decode in it, so the fix is a smaller
// budget, half of n but not below 512 nor below the concurrency cap (vLLM
// refuses a budget under its concurrency cap). ok is false when no smaller budget
// is left: then the spikes are not long-prefill stalls.
func stepBudgetStall(e *env, f Finding, ep Endpoint, d model.Dist, n int, at time.Time) (Finding, bool) {
	const floor = 512
	m := max(n/2, floor)
	why := fmt.Sprintf("half the current %d tokens per step (not below %d): a step carrying a prompt chunk stalls the decodes in it about half as long", n, floor)
	var promptEv *Evidence
	if pl := ep.State.Latency[model.PromptLen]; pl.P95.OK && pl.Count > 0 && pl.P95.V < float64(m) {
		// Prompts shorter than the budget are prefilled whole in one step:
		// half of a budget the prompts never fill splits nothing (the sim
		// showed it: 8192 → 4096 left ITL p99 where it was with 1.8k-token
		// prompts). The budget goes under the long prompts seen.
		if p := max(roundDown(int(pl.P95.V/2), 256), floor); p < m {
			m = p
			why = fmt.Sprintf("under half the p95 prompt (≈%s tokens, not below %d): the prompts seen are shorter than half the current %d, so only a budget below them splits them across steps", num(math.Round(pl.P95.V)), floor, n)
			promptEv = &Evidence{Text: fmt.Sprintf("prompt length p95≈%s tokens: a step budget of %d or %d prefills such a prompt whole in one step", num(math.Round(pl.P95.V)), n, n/2),
				Source: metricSource(ep, "prompt_len"), Window: pl.Window}
		}
	}
	// The budget is read from the start-up line of one engine's log: its
	// levers are the ones that apply.
	spec := engines.Of(engines.LogEngine(kindChunkedPrefill))
	capFlag, name := spec.Levers.Cap, spec.Name
	var withCap string // the cap lowered with the budget, when it must be
	if c, ok := currentCap(ep); !spec.Levers.BudgetOverCap {
		// the budget may go under the cap
	} else if ok && c > m {
		m = c
		why = fmt.Sprintf("fewer tokens per step (%d now), down to the concurrency cap %d: %s refuses a budget below %s", n, c, name, flagOf(capFlag))
	} else if c := spec.Levers.CapDefaultMax; !ok && c > m {
		// The cap is not exposed and its default may be above this budget,
		// which vLLM then refuses at start (the sim's lora-starved, at 1024
		// by default, was told 512 and did not start). Where the batch
		// history shows how far the running batch went, the cap goes down
		// with the budget to no less than that peak: a cap nothing reached
		// costs nothing. Without the history it is said, not guessed.
		if peak, seen := peakRunning(e, ep); seen {
			if p := roundUp(int(math.Ceil(peak)), 256); p > m {
				m = p
			}
			withCap = engines.Fill(capFlag, strconv.Itoa(m))
			why += fmt.Sprintf("; %s refuses a budget below %s, which is not exposed here and is up to %d by default, so it goes to %d with it: the running batch peaked at %s over the %d refreshes seen",
				name, flagOf(capFlag), c, m, num(peak), len(e.batch(&ep)))
		} else {
			why += fmt.Sprintf("; %s refuses a budget below %s, which is not exposed here and is up to %d by default: lower it too if the engine does not start", name, flagOf(capFlag), c)
		}
	}
	if m >= n {
		return f, false
	}
	f.ID, f.Title = "itl_prefill_stall", fmt.Sprintf("ITL spikes: decodes stall behind %d-token prefill chunks", n)
	f.Category = Prefill
	f.Cause = fmt.Sprintf("median gap %s but p99 %s: chunked prefill is on, but a step that carries up to %d prompt tokens holds every running decode until it is done",
		secs(d.P50.V), secs(d.P99.V), n)
	f.Evidence = append(f.Evidence, Evidence{Text: fmt.Sprintf("chunked prefill on, max_num_batched_tokens=%d (start-up line at %s)", n, at.Format("15:04:05")),
		Source: "log (" + kindChunkedPrefill + ")"})
	if promptEv != nil {
		f.Evidence = append(f.Evidence, *promptEv)
	}
	change, trade := engines.Fill(spec.Levers.StepBudget, strconv.Itoa(m)), "long prompts need more steps: their TTFT and the prefill throughput drop somewhat"
	if withCap != "" {
		change += " (with " + withCap + ")"
		trade += "; no batch above " + strconv.Itoa(m) + " requests"
	}
	f.Actions = []Action{{Change: change, Why: why, TradeOff: trade}}
	return f, true
}

// peakRunning is the largest running batch in ep's batch history; seen is
// false without one.
func peakRunning(e *env, ep Endpoint) (peak float64, seen bool) {
	for _, p := range e.batch(&ep) {
		peak, seen = max(peak, p.Running), true
	}
	return peak, seen
}

// kneeMinPairs and kneeMinSizes are the batch history a knee is stated
// with confidence from: a minute of 1 s refreshes over at least four
// batch sizes.
const (
	kneeMinPairs = 60
	kneeMinSizes = 4
)

// kneeConfidence is "" when the batch history is enough to state the knee,
// else why the value is a low-confidence estimate.
func kneeConfidence(e *env, ep Endpoint) string {
	batch := e.batch(&ep)
	sizes := map[int]bool{}
	for _, p := range batch {
		if r := int(math.Round(p.Running)); r > 0 {
			sizes[r] = true
		}
	}
	if len(batch) >= kneeMinPairs && len(sizes) >= kneeMinSizes {
		return ""
	}
	return fmt.Sprintf("low confidence: from %d refreshes over %d batch sizes (stated with confidence from %d over %d); the value moves as more batch sizes are seen, so watch longer before applying it",
		len(batch), len(sizes), kneeMinPairs, kneeMinSizes)
}

// kneeCap finds the largest batch whose per-token latency met the SLO, from
// the endpoint's (running, ITL mean) history. The SLO is on p99 but the
// history holds per-refresh means, so the limit for means is the SLO less
// the window's tail (p99 − mean: the occasional step that carries a prefill
// chunk costs about the same whatever the batch), or the SLO scaled by
// mean/p99, whichever is lower. Without a batch that met it, a straight line
// through the history (or through the origin and now) is solved for it.
func kneeCap(e *env, ep Endpoint, d model.Dist, slo float64) (int, string) {
	limit := slo
	if d.P99.OK && d.Mean.OK && d.P99.V > 0 {
		limit = math.Min(slo*d.Mean.V/d.P99.V, slo-(d.P99.V-d.Mean.V))
	}
	if limit <= 0 {
		return 0, ""
	}
	type agg struct{ sum, n float64 }
	by := map[int]*agg{}
	for _, p := range e.batch(&ep) {
		r := int(math.Round(p.Running))
		if r <= 0 {
			continue
		}
		a := by[r]
		if a == nil {
			a = &agg{}
			by[r] = a
		}
		a.sum += p.ITL
		a.n++
	}
	var sizes []int
	for r := range by {
		sizes = append(sizes, r)
	}
	sort.Ints(sizes)
	firstBad := -1
	for _, r := range sizes {
		if by[r].sum/by[r].n > limit {
			firstBad = r
			break
		}
	}
	if firstBad > 0 {
		good := -1
		for _, r := range sizes {
			if r < firstBad {
				good = r
			}
		}
		if good > 0 {
			return good, fmt.Sprintf("mean ITL %s at batch %d, %s at batch %d (limit for means %s: the SLO less the window's p99−mean tail)",
				secs(by[good].sum/by[good].n), good, secs(by[firstBad].sum/by[firstBad].n), firstBad, secs(limit))
		}
	}
	// Fit ITL = a + b·running over the history.
	var sx, sy, sxx, sxy, n float64
	for _, r := range sizes {
		x, y := float64(r), by[r].sum/by[r].n
		sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
	}
	if n >= 2 && n*sxx-sx*sx > 0 {
		b := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		a := (sy - b*sx) / n
		if b > 0 && limit > a {
			c := int(math.Floor((limit - a) / b))
			if c >= 1 {
				return c, fmt.Sprintf("fit over %d batch sizes: ITL ≈ %s + %s per request; meets %s (mean) up to batch %d", int(n), secs(a), secs(b), secs(limit), c)
			}
		}
	}
	// Proportional to the batch: conservative.
	running := ep.State.Running.V
	if d.Mean.OK && d.Mean.V > 0 && running > 0 {
		c := int(math.Floor(running * limit / d.Mean.V))
		if c >= 1 {
			return c, fmt.Sprintf("mean ITL %s at batch %s; assuming ITL grows with the batch, %d meets the SLO", secs(d.Mean.V), num(running), c)
		}
	}
	return 0, ""
}

func ruleSpec(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		a := ep.State.SpecAccept
		var logEv *Evidence
		if !a.OK {
			// llama-server without its speculative counters: its log's
			// per-request tallies, summed over the event window.
			if acc, drafted, n, perPos, who := specFromLog(e, *ep); drafted > 0 {
				a = model.Some(acc / drafted)
				text := fmt.Sprintf("%s of %s draft tokens accepted over %d request(s)", num(acc), num(drafted), n)
				if perPos != "" {
					text += "; by position, the newest: " + perPos
				}
				logEv = &Evidence{Text: text, Source: "log: " + who + "'s draft acceptance lines", Window: e.cfg.EventWindow}
			}
		}
		if !a.OK {
			e.lack(ep, "speculative-decoding acceptance (no speculative decoding seen: not on, or its counters not exposed)")
			continue
		}
		if a.V >= e.cfg.SpecAcceptLow {
			continue
		}
		sev := model.SevInfo
		if v, ok := itlValue(ep); ok && v > e.cfg.SLOITL.Seconds() {
			sev = model.SevWarn
		}
		acts := byEngine(func(l engines.Levers) engines.Change { return l.SpeculateLess })
		ev := []Evidence{{Text: "accepted/drafted tokens " + pct(a.V) + " < " + pct(e.cfg.SpecAcceptLow), Source: metricSource(*ep, "spec"), Window: ep.State.RateWindow}}
		if logEv != nil {
			ev = []Evidence{*logEv}
		}
		if pe, keep, ok := specByPosition(*ep); ok {
			ev = append(ev, pe)
			if eng := ep.Engine(); levers(eng).DraftTokens != "" && keep > 0 {
				acts[eng] = Action{Change: fmt.Sprintf(levers(eng).DraftTokens, keep),
					Why: fmt.Sprintf("the positions past %d are accepted in fewer than %s of drafts: verifying them costs more than they save", keep, pct(specPosKeep)), TradeOff: "less speed-up on the drafts that would have hit"}
			}
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Decode, Severity: sev,
			Title:    "speculative decoding acceptance low (" + pct(a.V) + ")",
			Evidence: ev,
			Cause:    "the draft model (or n-gram) predicts this traffic poorly; verifying wrong drafts costs more than it saves, most at large batch",
			Actions:  forEngine(ep.Engine(), acts)})
	}
	return out
}

// specPosKeep is the acceptance below which a draft position does not pay
// for its verification.
const specPosKeep = 0.4

// specByPosition is the acceptance at each draft position as evidence, and
// how many leading positions are accepted in at least specPosKeep of the
// drafts (the draft length worth keeping).
func specByPosition(ep Endpoint) (Evidence, int, bool) {
	ps := ep.State.SpecAcceptPos
	var parts []string
	keep, counting := 0, true
	for i, p := range ps {
		if !p.OK {
			parts = append(parts, fmt.Sprintf("%d: --", i+1))
			counting = false
			continue
		}
		parts = append(parts, fmt.Sprintf("%d: %s", i+1, pct(p.V)))
		if counting && p.V >= specPosKeep {
			keep = i + 1
		} else {
			counting = false
		}
	}
	if len(parts) == 0 {
		return Evidence{}, 0, false
	}
	return Evidence{Text: "accepted by draft position (share of drafts) " + strings.Join(parts, ", "), Source: metricSource(ep, model.SpecAcceptByPos), Window: ep.State.RateWindow}, keep, true
}

// specGainMin is how much faster per token a run that speculates must be
// than the run before it that did not, for speculation to have paid off.
const specGainMin = 0.05

// ruleSpecGain compares the time per output token of a run that speculates
// with the run before it that did not, at a similar load: speculation that
// does not make decoding faster only costs GPU time.
func ruleSpecGain(e *env) []Finding {
	var out []Finding
	for ep := range each(e.withMetrics()) {
		a := ep.State.SpecAccept
		n := len(ep.Runs)
		switch {
		case !a.OK:
			e.lack(ep, "whether speculative decoding made decoding faster (no speculative decoding seen in this run)")
			continue
		case n < 2:
			e.lack(ep, "whether speculative decoding made decoding faster (no run before this one to compare with)")
			continue
		}
		prev := ep.Runs[n-2]
		ps := prev.Summary
		if ps.SpecAccept.OK || ps.Samples == 0 || !ps.TPOTp50ms.OK {
			e.lack(ep, "whether speculative decoding made decoding faster (the run before speculated too, or was not measured)")
			continue
		}
		d := ep.State.Latency[model.TPOT]
		now := d.P50
		if !now.OK {
			now = d.Mean
		}
		if !now.OK {
			e.lack(ep, "whether speculative decoding made decoding faster (no time per output token in this run)")
			continue
		}
		nowMS, wasMS := now.V*1000, ps.TPOTp50ms.V
		if nowMS < wasMS*(1-specGainMin) {
			continue
		}
		// At another load the comparison says nothing: speculation pays
		// at small batches and costs at large ones.
		if r, was := ep.State.RequestsPS, ps.RequestsPS; r.OK && was.OK && was.V > 0 && (r.V > 1.5*was.V || r.V < was.V/1.5) {
			e.lack(ep, fmt.Sprintf("whether speculative decoding made decoding faster (this run serves %s req/s, run %d served %s: not the same load)", num(r.V), prev.N, num(was.V)))
			continue
		}
		ev := []Evidence{
			{Text: fmt.Sprintf("TPOT p50 %.1f ms with speculation (acceptance %s) vs %.1f ms in run %d without it", nowMS, pct(a.V), wasMS, prev.N), Source: metricSource(*ep, string(model.TPOT)), Window: ep.State.RateWindow},
		}
		if r, was := ep.State.RequestsPS, ps.RequestsPS; r.OK && was.OK {
			ev = append(ev, Evidence{Text: fmt.Sprintf("load %s req/s now, %s req/s then", num(r.V), num(was.V)), Source: "run ledger"})
		}
		if pe, _, ok := specByPosition(*ep); ok {
			ev = append(ev, pe)
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Decode, Severity: model.SevWarn,
			Title:    fmt.Sprintf("speculative decoding does not pay off: TPOT %.1f ms with it, %.1f ms without (run %d)", nowMS, wasMS, prev.N),
			Evidence: ev,
			Cause:    "each step verifies the drafted tokens: when too few are accepted, or the batch is large enough that the GPU is compute-bound, the verification costs what the accepted tokens save",
			Actions:  []Action{{Change: "fewer draft tokens, or serve without speculative decoding (the run before was faster per token)", Why: "the run ledger measured both at a similar load", TradeOff: "less speed-up at low load, where speculation helps most"}}})
	}
	return out
}

// specFromLog sums llama-server's per-request draft tallies for ep over
// the event window: accepted and drafted tokens, the requests, and the
// newest request's acceptance by position (as the log wrote it).
func specFromLog(e *env, ep Endpoint) (accepted, drafted float64, n int, perPos, who string) {
	var newest time.Time
	for _, x := range e.eventsOf(ep.URL) {
		f := engines.LogOf(x.Kind).Drafts
		if f.Drafted == "" || e.ahead(x.Time) || e.past(x.Time, e.cfg.EventWindow) {
			continue
		}
		a, err1 := strconv.ParseFloat(x.Fields[f.Accepted], 64)
		d, err2 := strconv.ParseFloat(x.Fields[f.Drafted], 64)
		if err1 != nil || err2 != nil || d <= 0 {
			continue
		}
		accepted, drafted, n = accepted+a, drafted+d, n+1
		who = program(engines.LogEngine(x.Kind))
		if p := x.Fields[f.PerPos]; p != "" && !x.Time.Before(newest) {
			newest, perPos = x.Time, model.Clean(p)
		}
	}
	return accepted, drafted, n, perPos, who
}

// program is how an engine's process is named ("llama-server"), else its
// name.
func program(e model.Engine) string {
	if s := engines.Of(e); s != nil && len(s.Process.Programs) > 0 {
		return strings.TrimSuffix(s.Process.Programs[0], "*")
	}
	return engines.Name(e)
}
