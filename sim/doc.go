// Package sim owns llmtop's simulated vLLM engine: a V1-style continuous
// batching scheduler over a paged KV cache, driven by an injectable clock,
// served over vLLM's HTTP surface (OpenAI completions with SSE, /v1/models,
// /health, /version, /load, /metrics with the V1 metric names) and writing
// vLLM-format log lines. Named scenarios (queue build-up, KV pressure, crash
// and restart, broken metrics…) play on a timeline over background traffic,
// so `llmtop demo` moves by itself and tests can drive every symptom the
// diagnosis knows, deterministically per seed.
//
// The physics is a roofline, not a GPU model: prefill is compute-bound,
// decode is bandwidth-bound (weights once per step, plus a cost per sequence
// and per resident KV token). The parameters for each named model/GPU pair
// are in profile.go and documented in docs/sim.md.
package sim
