package diagnosis

import (
	"fmt"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Batch occupancy: a GPU that is mostly idle while requests keep arriving
// and none wait is not short of load but of batching: each engine step
// carries one or two requests because they arrive one after another. The
// engine says how full its steps are: vLLM iteration_tokens_total (tokens
// per step), llama.cpp n_busy_slots_per_decode (requests per decode).

func init() {
	register(rule{id: "gpu_small_batches", checks: "GPU kept busy by batches of more than a couple of requests when it is idle",
		needs: needGPU | needMetrics, hold: holdDefault, eval: ruleSmallBatches})
}

func ruleSmallBatches(e *env) []Finding {
	util, n := engineUtil(e.in.GPU)
	if n == 0 || util >= e.cfg.GPUIdleUtil {
		return nil
	}
	var out []Finding
	for ep := range each(e.withMetrics()) {
		st := ep.State
		if st.Waiting.OK && st.Waiting.V >= 1 {
			continue // gpu_idle_waiting: the bottleneck is before the GPU
		}
		if !st.RequestsPS.OK || st.RequestsPS.V <= 0 {
			continue // no load: an idle GPU is right
		}
		per, text, src, ok := stepOccupancy(*ep)
		if !ok || per > e.cfg.SmallBatch {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: GPU, Severity: model.SevInfo,
			Title: fmt.Sprintf("GPU %.0f %% busy: batches are small (%s), not the load", util, text),
			Evidence: []Evidence{
				{Text: fmt.Sprintf("GPU utilisation %.0f %% < %.0f %% over %d device(s)", util, e.cfg.GPUIdleUtil, n), Source: gpuSource(e.in.GPU)},
				{Text: text, Source: src},
				{Text: fmt.Sprintf("%s requests/s finish, none waiting (running %s)", num(st.RequestsPS.V), optNum(st.Running)), Source: metricSource(*ep, "running"), Window: st.RateWindow},
			},
			Cause: "requests reach the engine one after another, so each step carries one or two of them: the GPU reads all its weights per step for a couple of tokens. More requests in flight at once share each step almost for free",
			Actions: []Action{
				{Change: "send requests concurrently (client pool / async calls) rather than one after another", Why: "the engine batches only the requests in flight together", TradeOff: "each request's own latency rises a little with the batch"},
				{Change: "measure the headroom: llmtop bench --sweep", Why: "shows the throughput the same engine gives at 1…128 streams", TradeOff: "load on the server for up to two minutes"},
			}})
	}
	return out
}

// stepOccupancy is the engine's own word on how full its steps are: the
// requests (or tokens) per step, as text with its source.
func stepOccupancy(ep Endpoint) (per float64, text, src string, ok bool) {
	st := ep.State
	if s := engines.Of(ep.Engine()); st.BatchPerStep.OK && s != nil && s.StepBatchNewest != "" {
		return st.BatchPerStep.V, fmt.Sprintf("%s requests scheduled in the newest iteration", num(st.BatchPerStep.V)),
			s.StepBatchNewest, true
	}
	if st.BatchPerStep.OK {
		return st.BatchPerStep.V, fmt.Sprintf("%.2f busy slots per decode on average (the engine's own average since it started)", st.BatchPerStep.V),
			metricSource(ep, "batch_per_step"), true
	}
	if d := st.Latency[model.StepTokens]; d.Mean.OK && d.Count > 0 {
		return d.Mean.V, fmt.Sprintf("mean %s tokens per engine step over %s steps", num(d.Mean.V), num(d.Count)),
			metricSource(ep, "step_tokens"), true
	}
	return 0, "", "", false
}

// engineUtil is the mean utilisation of the engine's GPUs.
func engineUtil(g *model.GPUSnapshot) (float64, int) {
	var util float64
	var n int
	for _, d := range EngineGPUs(g) {
		if d.Util.OK {
			util += d.Util.V
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return util / float64(n), n
}
