package diagnosis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The engine-specific levers, with the names and defaults of
// ../shared/reference/ENGINES.md. Each returns the change for one engine with
// a value filled in; n <= 0 leaves the value to the user.

// capChange is the concurrency cap.
func capChange(eng model.Engine, n int) string {
	v := "N"
	if n > 0 {
		v = strconv.Itoa(n)
	}
	if s := engines.Of(eng); s != nil && s.Levers.Cap != "" {
		return engines.Fill(s.Levers.Cap, v)
	}
	var all []string
	for _, s := range engines.All() {
		if s.Levers.Cap != "" && s.Like == model.Unknown {
			all = append(all, s.Name+" "+engines.Fill(s.Levers.Cap, "N"))
		}
	}
	return "concurrency cap " + v + " (" + strings.Join(all, ", ") + ")"
}

// currentCap is the engine's configured concurrency cap when known.
func currentCap(ep Endpoint) (int, bool) {
	if ep.State.MaxRunning.OK && ep.State.MaxRunning.V > 0 {
		return int(ep.State.MaxRunning.V), true
	}
	for _, k := range []string{"max_num_seqs", "max_running_requests", "max_batch_size", "total_slots", "num_parallel"} {
		// the engine's config info, else the run's own args line (a
		// recording's --from knows the flags it was started with)
		if v, ok := served(ep, k); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// memFraction is the KV-pool memory knob: its flag and current value.
func memFraction(ep Endpoint) (flag string, cur float64, known bool) {
	s := engines.Of(ep.Engine())
	if s == nil || s.Levers.MemFraction == "" {
		return "", 0, false
	}
	if k := s.Levers.MemFractionKey; k != "" {
		if v, ok := served(ep, k); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return s.Levers.MemFraction, f, true
			}
		}
	}
	return s.Levers.MemFraction, s.Levers.MemFractionDefault, false
}

// fp8KV is the KV-cache quantisation change, by engine (engines/: each
// one's Levers.FP8KV).
var fp8KV = byEngine(func(l engines.Levers) engines.Change { return l.FP8KV })

// maxLenChange is the context-length cap.
func maxLenChange(eng model.Engine, n int) string {
	v := "N"
	if n > 0 {
		v = strconv.Itoa(n)
	}
	if s := engines.Of(eng); s != nil && s.Levers.MaxLen != "" {
		return engines.Fill(s.Levers.MaxLen, v)
	}
	return "max context " + v
}

// chunkedPrefill bounds the prefill work per step to n tokens (turning
// chunked prefill on where it is off).
func chunkedPrefill(ep Endpoint, n int) (Action, bool) {
	c := strconv.Itoa(n)
	lv := levers(ep.Engine())
	if cd := lv.ChunkedDefault; cd.Off != "" {
		if !vllmV1(ep) {
			return Action{Change: engines.Fill(cd.Before, c),
				Why: "long prompts are split into " + c + "-token chunks scheduled beside decodes instead of stalling them", TradeOff: "a long prompt's own TTFT grows slightly"}, true
		}
		// V1 always chunks prefill unless started with
		// --no-enable-chunked-prefill (vllm/v1/core/sched/scheduler.py:
		// "if not enable_chunked_prefill and num_new_tokens >
		// token_budget"): the lever is the step budget, with chunking left
		// at its default. vLLM's metrics do not say whether it is off.
		a := Action{Change: engines.Fill(lv.Chunked.Change, c),
			Why:      "the V1 engine chunks prefill unless started with " + cd.Off + ": a step budget of " + c + " tokens caps the prompt tokens that share a step with the decodes",
			TradeOff: "long prompts take more steps: their TTFT and the prefill throughput drop somewhat"}
		if v, ok := infoKey(ep, "enable_chunked_prefill", "chunked_prefill"); ok && !isTrue(v) {
			a.Why = "chunked prefill is off: the V1 scheduler then prefills each prompt whole in one step, stalling every decode in it"
		}
		return a, true
	}
	if s := engines.Of(ep.Engine()); s != nil && s.Levers.Chunked.Change != "" {
		ch := s.Levers.Chunked
		return Action{Change: engines.Fill(ch.Change, c), Why: ch.Why, TradeOff: ch.TradeOff}, true
	}
	return Action{}, false
}

// replicas is the scale-out action. It knows how many data-parallel
// engines the server already runs: advising --data-parallel-size 2 to a
// server running two says nothing.
func replicas(ep Endpoint) Action {
	eng := ep.Engine()
	// "a" router: most single engines have none in front, and advice
	// naming "the router" sent the reader looking for one.
	a := Action{Change: "add a replica behind a router or load balancer", Why: "the queue grows while the batch is full: demand exceeds one engine's capacity", TradeOff: "another GPU"}
	n := dpSize(ep)
	now := ""
	if n > 1 {
		now = fmt.Sprintf(", from the %d engines it runs now", n)
	}
	if s := engines.Of(eng); s != nil && s.Levers.DataParallel != "" {
		a.Change = engines.Fill(s.Levers.DataParallel, strconv.Itoa(n+1)) + now + " (or another replica behind a router)"
	}
	if n > 1 {
		a.TradeOff = "another GPU per engine"
	}
	return a
}

// dpSize is how many data-parallel engines serve behind the endpoint: the
// engines its metrics name (vLLM engine="N"), else the cache_config_info
// series it counts, else 1.
func dpSize(ep Endpoint) int {
	if n := len(ep.State.Engines); n > 1 {
		return n
	}
	if v, ok := infoKey(ep, "engines", "dp_size", "data_parallel_size"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 1 {
			return n
		}
	}
	return 1
}

// kvBatch is the KV usage and running batch the KV advice reads: the
// fullest data-parallel engine's own (each engine has its own pool and its
// own --max-num-seqs), else the endpoint's. which names the engine ("" for
// the endpoint).
func kvBatch(ep Endpoint) (kv, running model.Opt, which string) {
	if full, ok := model.Fullest(ep.State.Engines); ok && len(ep.State.Engines) > 1 {
		return full.KVUsage, full.Running, "engine " + full.ID
	}
	return ep.State.KVUsage, ep.State.Running, ""
}

// flagOf is a lever's flag alone ("--max-num-seqs" of "--max-num-seqs %s").
func flagOf(lever string) string {
	f, _, _ := strings.Cut(lever, " ")
	return f
}

// stepBudgetOf is the step-budget flag of the engine whose start-up line
// states its budget (kindChunkedPrefill), named in causes and evidence.
var stepBudgetOf = engines.Of(engines.LogEngine(kindChunkedPrefill))

// stepBudgetFlag is that engine's step-budget flag.
var stepBudgetFlag = flagOf(stepBudgetOf.Levers.StepBudget)

// memFractionFlags names every engine's KV-pool memory flag ("vLLM
// --gpu-memory-utilization, SGLang --mem-fraction-static, …").
func memFractionFlags() string {
	return everyEngine(func(l engines.Levers) string { return l.MemFraction }, ", ")
}

// everyEngine names one lever of every engine that has it, each after the
// engine's name, joined by sep (a serving layer that re-exports another
// engine is left out).
func everyEngine(pick func(engines.Levers) string, sep string) string {
	var all []string
	for _, s := range engines.All() {
		if v := pick(s.Levers); v != "" && s.Like == model.Unknown {
			all = append(all, s.Name+" "+v)
		}
	}
	return strings.Join(all, sep)
}

// quantize is the fewer-weight-bytes change, by engine (Levers.Quantize).
var quantize = byEngine(func(l engines.Levers) engines.Change { return l.Quantize })

// tpChange is the change to n GPUs per replica, by engine (the first
// of each one's Levers.TensorParallel flags; the advice names the long
// form).
func tpChange(n int, why, cost string) map[model.Engine]Action {
	out := map[model.Engine]Action{}
	for _, s := range engines.All() {
		if tp := s.Levers.TensorParallel; len(tp) > 0 && s.Like == model.Unknown {
			out[s.ID] = Action{Change: tp[0] + " " + strconv.Itoa(n), Why: why, TradeOff: cost}
		}
	}
	return out
}

// hostBufferFlags names every engine's host-memory buffer flags ("vLLM
// --swap-space, --cpu-offload-gb, …").
func hostBufferFlags() string {
	return everyEngine(func(l engines.Levers) string { return l.HostBuffers }, "; ")
}

// byEngine is one change of every engine's Levers, by engine (the ones it
// has).
func byEngine(pick func(engines.Levers) engines.Change) map[model.Engine]Action {
	out := map[model.Engine]Action{}
	for _, s := range engines.All() {
		if c := pick(s.Levers); c.Change != "" {
			out[s.ID] = Action{Change: c.Change, Why: c.Why, TradeOff: c.TradeOff}
		}
	}
	return out
}
