package model

import (
	"fmt"
	"strconv"
)

// llama-server's /slots says how much context each slot holds and each
// slot's n_ctx, but not whether the slots share one KV pool (unified: every
// slot's n_ctx is the whole pool) or split it (each slot's n_ctx is its own
// part). The adapter records the per-slot facts below; the core, which also
// sees the log and the process's command line, calls SlotKV with what it
// learned of the layout.
const (
	// SlotHeld is the context, in tokens, busy slots hold.
	SlotHeld Gauge = "slot_context_held"
	// SlotCtx is one slot's n_ctx as /slots reports it.
	SlotCtx Gauge = "slot_n_ctx"
	// KVUsageMax is the most KV usage can be while the layout is unknown
	// (KVUsage is then the least): absent when the layout is known.
	KVUsageMax Gauge = "kv_cache_usage_ratio_max"
)

// KVLayout is what is known of how llama-server's slots share the KV cache.
type KVLayout struct {
	Known   bool
	Unified bool
	// From says how it was learned ("the log: kv_unified = 'true'"), or
	// why it is unknown.
	From string
}

// SlotKV sets a sample's KV usage and capacity from the slot facts the
// llama.cpp adapter recorded (SlotHeld, SlotCtx, MaxRunning = slots):
// unified, the pool is one slot's n_ctx; split, it is the sum of them;
// unknown with several slots, KVUsage is the split reading (a floor),
// KVUsageMax the unified one, and the capacity is left out. A sample
// without those facts is left as it is.
func SlotKV(s *Sample, l KVLayout) {
	held, okH := s.Gauges[SlotHeld]
	ctx, okC := s.Gauges[SlotCtx]
	n, okN := s.Gauges[MaxRunning]
	if !okH || !okC || !okN || !Plausible(held) || !Plausible(ctx) || ctx <= 0 || !Plausible(n) || n < 1 {
		return
	}
	split := ctx * n
	delete(s.Gauges, KVUsageMax)
	if s.From == nil {
		s.From = map[string]string{}
	}
	// what `e` names as read now (it had no line for KV at all)
	s.From[string(KVUsage)] = "/slots (context held by busy slots ÷ the KV pool)"
	switch {
	case n == 1:
		// One slot: unified and split are the same pool.
		s.Gauges[KVUsage], s.Gauges[KVCapacityTokens] = held/ctx, ctx
	case l.Known && l.Unified:
		s.Gauges[KVUsage], s.Gauges[KVCapacityTokens] = min(1, held/ctx), ctx
		s.Notes = append(s.Notes, fmt.Sprintf("unified KV cache (from %s): the %d slots share one %s-token pool, so KV usage = context held ÷ one slot's n_ctx", l.From, int(n), trimNum(ctx)))
	case l.Known:
		s.Gauges[KVUsage], s.Gauges[KVCapacityTokens] = held/split, split
		s.Notes = append(s.Notes, fmt.Sprintf("split KV cache (from %s): %d slots of %s tokens each, so KV usage = context held ÷ the sum of their n_ctx", l.From, int(n), trimNum(ctx)))
	default:
		lo, hi := held/split, min(1, held/ctx)
		s.Gauges[KVUsage], s.Gauges[KVUsageMax] = lo, hi
		delete(s.Gauges, KVCapacityTokens)
		why := ""
		if l.From != "" {
			why = " (" + l.From + ")"
		}
		s.Notes = append(s.Notes, fmt.Sprintf("KV usage ≥ %.0f %%, up to %.0f %% (%d×) if the KV cache is unified%s: /slots does not say whether the %d slots share one pool; attach llama-server's log or run llmtop on its machine", 100*lo, 100*hi, int(n), why, int(n)))
	}
}

func trimNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
