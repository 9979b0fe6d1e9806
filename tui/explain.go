package tui

import (
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// explanation is what one metric on screen means; where each engine
// publishes it comes from the one table of engine metric names
// (engines.Metrics), which the adapters read.
type explanation struct {
	Name, Meaning string
	// Concepts are the model concepts the row covers: their rows in
	// engines.Metrics are the "from:" line, and the metric the adapter
	// actually read for each (State.From) is the "read now:" line.
	Concepts []string
}

// from says where an engine publishes the row's concepts, one line per
// concept the table has a row for (none: the engine does not say).
func (ex explanation) from(eng model.Engine) []string {
	var out []string
	for _, c := range ex.Concepts {
		if m, ok := engines.MetricSourceOf(eng, c); ok {
			out = append(out, m.Text())
		}
	}
	return out
}

// readNow names the metrics the selected endpoint's values were read from
// for this row (an older vLLM's vllm:time_per_output_token_seconds for
// ITL), "" when the adapter recorded none.
func (ex explanation) readNow(st model.State) string {
	var out []string
	seen := map[string]bool{}
	for _, c := range ex.Concepts {
		if n, ok := st.From[c]; ok && n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// fromLog reports whether a latency the row covers is shown from the
// engine's log (llama-server's and Ollama's timing lines with --log).
func (ex explanation) fromLog(st model.State) bool {
	for _, c := range ex.Concepts {
		if dist, ok := st.Latency[model.Latency(c)]; ok && dist.Source == model.FromLog && dist.Count > 0 {
			return true
		}
	}
	return false
}

func concepts[C ~string](cs ...C) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

var explanations = []explanation{
	{"TTFT", "time from a request's arrival to its first generated token: queueing + prefill. p50/p90/p99≈ are interpolated from histogram buckets over the window shown.",
		concepts(model.TTFT)},
	{"TPOT", "per-request mean time per output token after the first (decode speed as one user feels it).",
		concepts(model.TPOT)},
	{"ITL", "every gap between two generated tokens (one observation per token).",
		concepts(model.ITL)},
	{"E2E", "whole request latency, arrival to last token.",
		concepts(model.E2E)},
	{"queue / prefill / decode", "the phases of a request; queue vs prefill splits TTFT, decode is the rest of E2E.",
		concepts(model.Queue, model.Prefill, model.Decode)},
	{"running / waiting", "requests in the running batch, and requests queued for a slot or KV space. A waiting count that keeps growing means demand exceeds capacity.",
		concepts(model.Running, model.Waiting, model.Deferred)},
	{"KV cache", "share of the KV-cache pool in use (0–100 %). Near full, new requests wait and running ones get preempted.",
		concepts(model.KVUsage)},
	{"preemptions/s", "running requests evicted to free KV space and recomputed later: a sign the KV pool is too small for the batch.",
		concepts(model.Preemptions)},
	{"prefix-cache hit", "share of prompt tokens found in the prefix cache over the window (hits ÷ queries, or the engine's own hit-rate gauge).",
		concepts(string(model.PrefixQueries), string(model.PrefixHits), string(model.PrefixHitGauge))},
	{"prompt / gen tok/s", "tokens processed per second over the window, from counters (engines that count at request finish look bursty).",
		concepts(string(model.PromptTokens), string(model.GenTokens), string(model.PromptTPSGauge), string(model.GenTPSGauge))},
	{"finish reasons", "why requests ended in the window: stop (natural end), length (hit max_tokens), abort (client gone), error.",
		[]string{model.FinishReasons}},
	{"GPU", "per device from NVML: SM utilisation, memory used/total, power/limit, temperature, active throttle reasons; engine vs other memory from the processes on the card. High utilisation is healthy on a serving box; low utilisation while requests wait is the warning.",
		nil},
	{"health badge", "UP: health route OK and metrics read. DEGRADED: answers but loading/unhealthy or metrics unreadable. DOWN: refused or timed out. STALE: no scrape for 3 intervals. RESTARTED: counters went back in the window. SIMULATED: the built-in simulator (llmtop demo).",
		nil},
}
