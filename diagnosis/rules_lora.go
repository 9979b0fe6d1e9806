package diagnosis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// LoRA starvation (issue 26; SERVING-LAYERS.md §5.7): requests deferred
// for an adapter slot while the KV pool and the batch have room, and
// adapters waiting. vLLM's HELP text of num_requests_waiting_by_reason
// names the LoRA budget among the deferred reasons; lora_requests_info
// names the adapters.
func init() {
	register(rule{id: "lora_starved", checks: "no requests deferred for a LoRA adapter slot while KV and the batch have room",
		needs: needMetrics, hold: holdDefault, local: true, eval: ruleLoRAStarved})
}

func ruleLoRAStarved(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }() // no adapters seen: nothing to judge
	for ep := range each(e.withMetrics()) {
		if f, ok := loraPoolFull(e, *ep); ok {
			out = append(out, f)
			judged++
			continue
		}
		st := ep.State
		l := st.LoRA
		if l == nil {
			continue
		}
		judged++
		if len(l.Waiting) == 0 || !st.Deferred.OK || st.Deferred.V < e.cfg.LoRADeferred {
			continue
		}
		if !st.KVUsage.OK || st.KVUsage.V >= e.cfg.RouteFullKV {
			continue // the pool is full: kv_full and the queue rules say why requests wait
		}
		if st.MaxRunning.OK && st.Running.OK && st.Running.V >= st.MaxRunning.V {
			continue // the batch is at its cap: not the adapters
		}
		max := "?"
		if l.Max > 0 {
			max = strconv.Itoa(l.Max)
		}
		want := max
		if l.Max > 0 {
			want = strconv.Itoa(min(2*l.Max, l.Max+len(l.Waiting)))
		}
		ev := []Evidence{
			{Text: fmt.Sprintf("%s requests deferred (waiting %s), KV %s, running %s", num(st.Deferred.V), optNum(st.Waiting), pct(st.KVUsage.V), optNum(st.Running)),
				Source: metricSource(*ep, "waiting")},
			{Text: fmt.Sprintf("adapters running %s; waiting %s (max_lora %s)", list(l.Running), list(l.Waiting), max), Source: st.From["lora"]},
		}
		acts := []Action{{Change: "more adapters per batch", Why: "each batch holds at most max_lora adapters: requests for the others wait though KV and the batch have room",
			TradeOff: "more GPU memory for LoRA weights, a little less KV"}}
		if lv := levers(ep.Engine()).MaxLoRAs; lv != "" {
			acts[0].Change = engines.Fill(lv, want)
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Queueing, Severity: model.SevWarn,
			Title: fmt.Sprintf("requests wait for a LoRA adapter slot: %s deferred with KV at %s (max_lora %s, %d adapters waiting)",
				num(st.Deferred.V), pct(st.KVUsage.V), max, len(l.Waiting)),
			Evidence: ev,
			Cause:    "more adapters are asked for at once than one batch may hold (--max-loras): requests for the others are deferred until a slot frees",
			Actions:  acts})
	}
	return out
}

// list names at most four, then how many more.
func list(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	if len(ss) > 4 {
		return strings.Join(ss[:4], ", ") + fmt.Sprintf(" and %d more", len(ss)-4)
	}
	return strings.Join(ss, ", ")
}

// loraPoolFull: SGLang's LoRA pool has every adapter slot of the batch in
// use (lora_pool_slots_used at lora_pool_slots_total, its
// --max-loras-per-batch) while LoRADeferred or more requests wait, the KV
// pool is under RouteFullKV and the batch under its cap: the requests
// wait for an adapter slot, not for memory or the batch. SGLang names no
// adapter per request in its metrics: which adapters wait is not read.
func loraPoolFull(e *env, ep Endpoint) (Finding, bool) {
	st := ep.State
	used, total := st.LoRASlots, st.LoRASlotsMax
	if !used.OK || !total.OK || total.V <= 0 || used.V < total.V || !st.Waiting.OK || st.Waiting.V < e.cfg.LoRADeferred {
		return Finding{}, false
	}
	if !st.KVUsage.OK || st.KVUsage.V >= e.cfg.RouteFullKV || (st.MaxRunning.OK && st.Running.OK && st.Running.V >= st.MaxRunning.V) {
		return Finding{}, false // memory or the batch, not the adapters: kv_full and the queue rules say it
	}
	want := strconv.Itoa(2 * int(total.V))
	act := Action{Change: "more adapters per batch", Why: "each batch holds at most that many adapters: requests for the others wait though KV and the batch have room",
		TradeOff: "more GPU memory for LoRA weights, a little less KV"}
	if lv := levers(ep.Engine()).MaxLoRAs; lv != "" {
		act.Change = engines.Fill(lv, want)
	}
	return Finding{Endpoint: ep.URL, Category: Queueing, Severity: model.SevWarn,
		Title: fmt.Sprintf("requests wait for a LoRA adapter slot: all %s slots in use, %s waiting with KV at %s", num(total.V), num(st.Waiting.V), pct(st.KVUsage.V)),
		Evidence: []Evidence{
			{Text: fmt.Sprintf("LoRA slots %s of %s in use", num(used.V), num(total.V)),
				Source: st.From[string(model.LoRASlotsUsed)] + ", " + st.From[string(model.LoRASlotsTotal)]},
			{Text: fmt.Sprintf("%s waiting, %s running, KV %s", num(st.Waiting.V), optNum(st.Running), pct(st.KVUsage.V)), Source: metricSource(ep, "waiting")},
			{Text: "which adapters the waiting requests ask for is not read (" + engines.Name(ep.Engine()) + "'s metrics name none)"},
		},
		Cause:   "more adapters are asked for at once than one batch may hold: requests for an adapter without a slot wait until one frees",
		Actions: []Action{act}}, true
}
