package engine

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

const (
	llamaTPOTApprox = "aggregate: generation seconds ÷ tokens generated (llama.cpp has no per-request histogram)"
	llamaKVNote     = "KV usage ≈ context held by busy slots ÷ the KV pool, from /slots"
	llamaPrecision  = "llama.cpp prints 6 significant digits: counters above 999999 are rounded, so their rates are coarse"
)

// collectLlamaCpp reads /metrics (needs --metrics) and, when reachable,
// /slots for the context in use: builds since 2025-05 expose no KV metric.
func collectLlamaCpp(c *collector) ([]model.Sample, error) {
	fams, err := c.prom(c.metricsPath())
	if err != nil {
		return nil, err
	}
	if p := engines.LlamaCpp.Prefix(); !hasPrefix(fams, p) {
		return nil, &scrapeError{model.ErrNotFound, c.s.cfg.URL + c.lastPath + " answers, but without any " + p + " metrics", c.a.hint404}
	}
	ss := mapLlamaCpp(fams, c.meta())
	// /slots after /metrics: a request ending between the two reads is then
	// missing from both (a dip genCounter holds), never counted twice.
	var slots []llamaSlot
	if body, err := c.get("/slots", "application/json"); err == nil {
		slots = parseSlots(body)
	}
	if _, ok := ss[0].Gauges[model.KVUsage]; !ok {
		applySlots(&ss[0], slots)
	}
	if _, ok := ss[0].Gauges[model.MaxRunning]; !ok {
		if n := llamaSlotCount(slots, c.id); n > 0 {
			ss[0].Gauges[model.MaxRunning] = n
		}
	}
	if finished, ok := ss[0].Counters[model.GenTokens]; ok {
		inFlight, known := decodedInFlight(slots)
		ss[0].Counters[model.GenTokens] = c.s.llamaGen.next(finished, inFlight, c.s.lastDown)
		if known {
			ss[0].Notes = append(ss[0].Notes, llamaGenNote)
		}
	}
	return ss, nil
}

// mapLlamaCpp maps llama-server's hand-written exposition: no labels, so
// the model comes from /props or /v1/models.
func mapLlamaCpp(f families, m meta) []model.Sample {
	v := view{fams: f}
	s := m.sample("")
	setGauge(&s, model.Running, v, names(model.LlamaCpp, model.Running)...)
	setGauge(&s, model.Waiting, v, names(model.LlamaCpp, model.Waiting)...)
	setGauge(&s, model.PromptTPSGauge, v, names(model.LlamaCpp, model.PromptTPSGauge)...)
	setGauge(&s, model.GenTPSGauge, v, names(model.LlamaCpp, model.GenTPSGauge)...)
	setGauge(&s, model.BatchPerStep, v, names(model.LlamaCpp, model.BatchPerStep)...)
	// Removed 2025-05-21, still served by older builds.
	setGauge(&s, model.KVUsage, v, names(model.LlamaCpp, model.KVUsage)...)

	setCounter(&s, model.PromptTokens, v, names(model.LlamaCpp, model.PromptTokens)...)
	setCounter(&s, model.GenTokens, v, names(model.LlamaCpp, model.GenTokens)...)
	// Since 2026-08-13 prompt_tokens_total excludes cached tokens, which
	// prompt_tokens_cached_total counts: hit ratio = cached / (both).
	if cached, ok := v.sum(engines.LlamaCppPromptCached); ok {
		if computed, ok := s.Counters[model.PromptTokens]; ok {
			s.Counters[model.PrefixHits] = cached
			s.Counters[model.PrefixQueries] = computed + cached
		}
	}
	if setCounter(&s, model.SpecDraftTokens, v, names(model.LlamaCpp, model.SpecDraftTokens)...) != "" {
		setCounter(&s, model.SpecAcceptTokens, v, names(model.LlamaCpp, model.SpecAcceptTokens)...)
	}
	setSpecByPos(&s, v, names(model.LlamaCpp, model.SpecDrafts), names(model.LlamaCpp, model.SpecAcceptByPos))
	secs, okS := v.sum(engines.LlamaCppPredictedSeconds)
	toks, okT := s.Counters[model.GenTokens]
	if okS && okT {
		s.Latencies[model.TPOT] = meanOnly(secs, toks, llamaTPOTApprox)
	}
	for _, c := range s.Counters {
		if c > 999999 {
			s.Notes = append(s.Notes, llamaPrecision)
			break
		}
	}
	return []model.Sample{s}
}

// llamaSlot is the part of a /slots entry that says how much context the
// slot holds. next_token is an object in upstream llama.cpp and an array of
// objects in other builds seen in the wild.
type llamaSlot struct {
	NCtx         float64         `json:"n_ctx"`
	IsProcessing bool            `json:"is_processing"`
	NPrompt      float64         `json:"n_prompt_tokens"`
	NextToken    json.RawMessage `json:"next_token"`
}

type llamaNextToken struct {
	NDecoded float64 `json:"n_decoded"`
}

// held is the context a busy slot holds. Where next_token is an object
// (upstream), n_prompt_tokens is the prompt alone and n_decoded adds the
// generated tokens; where it is an array, n_prompt_tokens was seen to count
// the generated tokens already (a real llama-server under load), so adding
// n_decoded would count them twice.
// A negative or non-finite count (no slot holds -5 tokens) counts as none.
func (sl llamaSlot) held() float64 {
	prompt := orZero(sl.NPrompt)
	var one llamaNextToken
	if json.Unmarshal(sl.NextToken, &one) == nil {
		return min(prompt+orZero(one.NDecoded), sl.NCtx)
	}
	return min(prompt, sl.NCtx)
}

// orZero is v when it is a count a slot can hold, else 0.
func orZero(v float64) float64 {
	if !model.Plausible(v) {
		return 0
	}
	return v
}

// llamaSlotCount is the slot count (-np), the most requests run at once:
// /slots entries, else /props total_slots from identification.
func llamaSlotCount(slots []llamaSlot, id *model.Identity) float64 {
	if len(slots) > 0 {
		return float64(len(slots))
	}
	if len(id.Models) > 0 {
		if n, err := strconv.Atoi(id.Models[0].Extra["slots"]); err == nil && n > 0 {
			return float64(n)
		}
	}
	return 0
}

// parseSlots decodes a /slots answer; anything else is no slots.
func parseSlots(body []byte) []llamaSlot {
	var slots []llamaSlot
	if json.Unmarshal(body, &slots) != nil {
		return nil
	}
	return slots
}

// applySlots derives KV usage from /slots: the context busy slots hold
// over the context of every slot, the reading for a split cache. Idle
// slots keep their last prompt for reuse, but that is free to overwrite
// and counts as free here. It records the per-slot facts too (SlotHeld,
// SlotCtx, MaxRunning): /slots does not say whether the cache is unified,
// so the core corrects the reading with model.SlotKV once it knows.
func applySlots(s *model.Sample, slots []llamaSlot) {
	if len(slots) == 0 {
		return
	}
	var used, total, ctx float64
	busy := 0
	for _, sl := range slots {
		if !finite(sl.NCtx) || sl.NCtx <= 0 {
			continue
		}
		total += sl.NCtx
		ctx = max(ctx, sl.NCtx)
		if sl.IsProcessing {
			used += sl.held()
			busy++
		}
	}
	if total <= 0 {
		return
	}
	s.Gauges[model.KVUsage] = used / total
	s.Gauges[model.KVCapacityTokens] = total
	s.Gauges[model.MaxRunning] = float64(len(slots))
	s.Gauges[model.SlotHeld], s.Gauges[model.SlotCtx] = used, ctx
	s.Info["slots"] = fmt.Sprint(len(slots))
	s.Notes = append(s.Notes, llamaKVNote)
	if _, ok := s.Gauges[model.Running]; !ok {
		s.Gauges[model.Running] = float64(busy)
	}
}
