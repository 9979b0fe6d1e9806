package diagnosis

import (
	"fmt"
	"math"

	"github.com/llmtop/llmtop/model"
)

func init() {
	register(rule{id: "output_tail", checks: "no long tail of outputs holds decode slots", needs: needMetrics, hold: holdDefault, local: true, eval: ruleOutputTail})
}

// longOutput is the output length (tokens) from which a tail of outputs
// holds a decode slot and its KV for tens of seconds.
const longOutput = 1024

// ruleOutputTail: a few very long outputs keep their decode slots and KV
// blocks while short requests wait. Judged only while it costs something
// (the KV pool filling, requests waiting or ITL over the SLO).
func ruleOutputTail(e *env) []Finding {
	var out []Finding
	judged := 0
	defer func() { e.idle = judged == 0 }() // no output lengths exposed: nothing to judge
	for ep := range each(e.withMetrics()) {
		d := ep.State.Latency[model.OutputLen]
		if !d.Exposed && d.Count == 0 {
			continue // llama.cpp, Ollama: no output-length histogram
		}
		judged++
		if d.Count < e.cfg.MinFinished {
			e.lack(ep, fmt.Sprintf("the output-length tail (%s requests finished in the window; %s needed)", num(float64(d.Count)), num(e.cfg.MinFinished)))
			continue
		}
		if !d.P50.OK || !d.P95.OK || !d.P99.OK || d.P99.V < longOutput || d.P99.V < 4*d.P50.V {
			continue
		}
		st := ep.State
		var cost []Evidence
		if st.KVUsage.OK && st.KVUsage.V >= 0.8 {
			cost = append(cost, Evidence{Text: "KV cache " + pct(st.KVUsage.V) + " used", Source: metricSource(*ep, "kv")})
		}
		if st.Waiting.OK && st.Waiting.V >= 1 {
			cost = append(cost, Evidence{Text: "waiting " + num(st.Waiting.V) + ", running " + optNum(st.Running), Source: metricSource(*ep, "waiting")})
		}
		if itl := st.Latency[model.ITL]; itl.P99.OK && itl.P99.V > e.cfg.SLOITL.Seconds() {
			cost = append(cost, Evidence{Text: "ITL p99≈" + secs(itl.P99.V) + " over the " + secs(e.cfg.SLOITL.Seconds()) + " SLO", Source: metricSource(*ep, "itl"), Window: itl.Window})
		}
		if len(cost) == 0 {
			continue
		}
		p95 := math.Round(d.P95.V)
		ev := append([]Evidence{{Text: fmt.Sprintf("output length p50≈%s, p95≈%s, p99≈%s tokens over %s requests", num(math.Round(d.P50.V)), num(p95), num(math.Round(d.P99.V)), num(float64(d.Count))),
			Source: metricSource(*ep, "output_len") + " (bucket estimates)", Window: d.Window}}, cost...)
		out = append(out, Finding{Endpoint: ep.URL, Category: Decode, Severity: model.SevWarn,
			Title:    fmt.Sprintf("a long tail of outputs holds decode slots (p99≈%s tokens, %s× the median)", num(math.Round(d.P99.V)), num(math.Round(d.P99.V/d.P50.V))),
			Evidence: ev,
			Cause:    "a few requests generate many times the usual length: each keeps a decode slot and its growing KV for the whole answer, so short requests wait or decode slower",
			Actions: []Action{{Change: fmt.Sprintf("clients: max_tokens near the p95, about %s (or a server-side default in generation_config)", num(p95)),
				Why: "95 % of answers fit; the rest end at the cap instead of holding a slot", TradeOff: fmt.Sprintf("the longest 5 %% of answers end at %s tokens (finish_reason length)", num(p95))}}})
	}
	return out
}
