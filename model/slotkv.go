package model

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
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

// isLlamaServer: the program (or the argument a wrapper runs) is llama-server.
func isLlamaServer(arg string) bool {
	return strings.HasPrefix(path.Base(strings.ReplaceAll(arg, "\\", "/")), "llama-server")
}

func trimNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// LlamaKVLayout learns the KV layout of a llama-server run, best first:
// its log's start-up line (kv_unified = 'true'|'false'), then its command
// line (local endpoints), given the slot count /slots shows.
//
// From llama.cpp's source (tools/server/server.cpp): -kvu/--kv-unified and
// -no-kvu/--no-kv-unified set it; -np/--parallel N (N ≥ 1) without them
// leaves it off; n_parallel < 0 ("auto", the default on builds that have
// it) becomes 4 slots with kv_unified = true. Builds before auto default to
// one slot, where the layouts are the same. So with neither flag and 4
// slots the cache is unified; with neither flag and another count the
// slots were set elsewhere (LLAMA_ARG_N_PARALLEL): unknown. A command line
// that is not llama-server's (docker-proxy holding the port) says nothing.
func LlamaKVLayout(logUnified, cmdline string, slots int) KVLayout {
	switch strings.Trim(logUnified, "' ") {
	case "true":
		return KVLayout{Known: true, Unified: true, From: "the log: kv_unified = 'true'"}
	case "false":
		return KVLayout{Known: true, From: "the log: kv_unified = 'false'"}
	}
	if cmdline == "" {
		return KVLayout{From: "no log line with kv_unified, no command line"}
	}
	args := strings.Fields(cmdline)
	if !slices.ContainsFunc(args, isLlamaServer) {
		// docker-proxy, a wrapper: its flags say nothing of the engine's.
		return KVLayout{From: "the command line on the port is not llama-server's"}
	}
	kv, np, npGiven := "", "", false
	for i, a := range args {
		name, val, eq := strings.Cut(a, "=")
		switch name {
		case "-kvu", "--kv-unified", "-no-kvu", "--no-kv-unified":
			kv = name
		case "-np", "--parallel":
			npGiven = true
			if eq {
				np = val
			} else if i+1 < len(args) {
				np = args[i+1]
			}
		}
	}
	switch {
	case kv == "-kvu" || kv == "--kv-unified":
		return KVLayout{Known: true, Unified: true, From: "the command line: " + kv}
	case kv != "":
		return KVLayout{Known: true, From: "the command line: " + kv}
	}
	if npGiven {
		if v, err := strconv.Atoi(np); err == nil && v < 0 {
			return KVLayout{Known: true, Unified: true, From: "the command line: --parallel " + np + " (auto: unified)"}
		} else if err == nil {
			return KVLayout{Known: true, From: "the command line: -np " + np + " without -kvu"}
		}
		return KVLayout{From: "the command line's -np is not a number"}
	}
	if slots == 4 {
		return KVLayout{Known: true, Unified: true, From: "the command line: no -np, so llama-server's auto default of 4 unified slots"}
	}
	return KVLayout{From: fmt.Sprintf("no -np on the command line, yet %d slots: set elsewhere (LLAMA_ARG_N_PARALLEL?)", slots)}
}
