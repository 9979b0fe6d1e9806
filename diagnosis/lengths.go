package diagnosis

import (
	"fmt"
	"math"

	"github.com/llmtop/llmtop/model"
)

// Prompt and output lengths per request (vLLM request_prompt_tokens /
// request_generation_tokens, SGLang prompt_tokens_histogram /
// generation_tokens_histogram), windowed like the latencies.

// lengthP95 is the window's p95 prompt and output length in tokens.
func lengthP95(ep Endpoint) (prompt, output float64, ok bool) {
	p, o := ep.State.Latency[model.PromptLen], ep.State.Latency[model.OutputLen]
	if !p.P95.OK || !o.P95.OK || p.Count == 0 || o.Count == 0 {
		return 0, 0, false
	}
	return p.P95.V, o.P95.V, true
}

// kvEstimate is the runbook's KV estimate: the p95 request (prompt +
// output tokens) times the running concurrency, against the pool. It is an
// estimate from bucket quantiles and says so.
func kvEstimate(ep Endpoint) []Evidence {
	p, o, ok := lengthP95(ep)
	st := ep.State
	if !ok || !st.Running.OK || st.Running.V <= 0 {
		return nil
	}
	per := p + o
	need := per * st.Running.V
	t := fmt.Sprintf("estimate: p95 request ≈%s prompt + %s output tokens × %s running ≈ %s tokens",
		num(math.Round(p)), num(math.Round(o)), num(st.Running.V), num(math.Round(need)))
	if c := st.KVCapacityTokens; c.OK && c.V > 0 {
		t += fmt.Sprintf(" of a %s-token pool: about %s such requests fit at once", num(c.V), num(math.Floor(c.V/per)))
	}
	return []Evidence{{Text: t, Source: metricSource(ep, "prompt_len") + ", " + metricSource(ep, "output_len") + " (p95≈, bucket estimates)",
		Window: st.Latency[model.PromptLen].Window}}
}

// longTail reports a prompt-length tail that drives prefill: p99 at least
// 4× the median and over longPrompt tokens. It returns the evidence and the
// length from which to route prompts elsewhere (the p90).
func longTail(ep Endpoint) (Evidence, float64, bool) {
	d := ep.State.Latency[model.PromptLen]
	if !d.P50.OK || !d.P99.OK || !d.P90.OK || d.Count == 0 || d.P99.V < longPrompt || d.P99.V < 4*d.P50.V {
		return Evidence{}, 0, false
	}
	return Evidence{Text: fmt.Sprintf("prompt length p50≈%s, p99≈%s tokens: a long tail of prompts takes most of the prefill work",
		num(math.Round(d.P50.V)), num(math.Round(d.P99.V))), Source: metricSource(ep, "prompt_len"), Window: d.Window}, d.P90.V, true
}
