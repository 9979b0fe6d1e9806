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
		needs: needMetrics, hold: holdDefault, eval: ruleLoRAStarved})
}

func ruleLoRAStarved(e *env) []Finding {
	var out []Finding
	for _, ep := range e.withMetrics() {
		st := ep.State
		l := st.LoRA
		if l == nil || len(l.Waiting) == 0 || !st.Deferred.OK || st.Deferred.V < e.cfg.LoRADeferred {
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
				Source: metricSource(ep, "waiting")},
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
