package diagnosis

import (
	"fmt"
	"strconv"

	"github.com/llmtop/llmtop/model"
)

// The engine-specific levers, with the names and defaults of
// ../shared/reference/ENGINES.md. Each returns the change for one engine with
// a value filled in; n <= 0 leaves the value to the user.

// capChange is the concurrency cap (running batch size).
func capChange(eng model.Engine, n int) string {
	v := "N"
	if n > 0 {
		v = strconv.Itoa(n)
	}
	switch eng {
	case model.VLLM:
		return "--max-num-seqs " + v
	case model.SGLang:
		return "--max-running-requests " + v
	case model.TGI:
		// TGI batches by tokens: --max-batch-size only binds on hardware
		// without unpadded inference (launcher --help); on GPUs the running
		// batch is bounded by --max-batch-total-tokens.
		return "--max-batch-total-tokens for about " + v + " requests (TGI batches by tokens: " + v + " × prompt+output tokens per request)"
	case model.LlamaCpp:
		// An explicit -np turns the default unified KV cache off and splits
		// -c over the slots; -kvu keeps one shared pool (issue 14 item 16).
		return "-np " + v + " -kvu (keep -c)"
	case model.TRTLLM:
		return "--max_batch_size " + v
	case model.Ollama:
		return "OLLAMA_NUM_PARALLEL=" + v
	}
	return "concurrency cap " + v + " (vLLM --max-num-seqs, SGLang --max-running-requests, TGI --max-batch-total-tokens, llama.cpp -np -kvu, TRT-LLM --max_batch_size, Ollama OLLAMA_NUM_PARALLEL)"
}

// currentCap is the engine's configured concurrency cap when known.
func currentCap(ep Endpoint) (int, bool) {
	if ep.State.MaxRunning.OK && ep.State.MaxRunning.V > 0 {
		return int(ep.State.MaxRunning.V), true
	}
	if v, ok := infoKey(ep, "max_num_seqs", "max_running_requests", "max_batch_size", "total_slots", "num_parallel"); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}

// memFraction is the KV-pool memory knob: its flag and current value.
func memFraction(ep Endpoint) (flag string, cur float64, known bool) {
	switch ep.Engine() {
	case model.VLLM:
		flag, cur = "--gpu-memory-utilization", 0.92
		if v, ok := infoKey(ep, "gpu_memory_utilization"); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return flag, f, true
			}
		}
		return flag, cur, false
	case model.SGLang:
		return "--mem-fraction-static", 0, false
	case model.TGI:
		return "--cuda-memory-fraction", 1.0, false
	case model.TRTLLM:
		return "--kv_cache_free_gpu_memory_fraction", 0.9, false
	}
	return "", 0, false
}

// fp8KV is the KV-cache quantisation change.
var fp8KV = map[model.Engine]Action{
	model.VLLM:     {Change: "--kv-cache-dtype fp8", Why: "halves KV bytes per token: about twice the tokens in the same pool", TradeOff: "small accuracy cost; needs a GPU with fp8 (Ada/Hopper or newer) for speed"},
	model.SGLang:   {Change: "--kv-cache-dtype fp8_e5m2", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
	model.TGI:      {Change: "--kv-cache-dtype fp8_e4m3fn", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
	model.LlamaCpp: {Change: "-ctk q8_0 -ctv q8_0 (with -fa on)", Why: "halves the KV cache", TradeOff: "small accuracy cost; V quantisation needs flash attention"},
	model.TRTLLM:   {Change: "kv_cache_config: {dtype: fp8} in the --config YAML", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
	model.Ollama:   {Change: "OLLAMA_KV_CACHE_TYPE=q8_0 (with OLLAMA_FLASH_ATTENTION=1)", Why: "halves the KV cache", TradeOff: "small accuracy cost"},
}

// maxLenChange is the context-length cap.
func maxLenChange(eng model.Engine, n int) string {
	v := "N"
	if n > 0 {
		v = strconv.Itoa(n)
	}
	switch eng {
	case model.VLLM:
		return "--max-model-len " + v
	case model.SGLang:
		return "--context-length " + v
	case model.TGI:
		return "--max-total-tokens " + v + " (and --max-input-tokens below it)"
	case model.LlamaCpp:
		return "-c " + v
	case model.TRTLLM:
		return "--max_seq_len " + v
	case model.Ollama:
		return "OLLAMA_CONTEXT_LENGTH=" + v
	}
	return "max context " + v
}

// chunkedPrefill bounds the prefill work per step to n tokens (turning
// chunked prefill on where it is off).
func chunkedPrefill(ep Endpoint, n int) (Action, bool) {
	c := strconv.Itoa(n)
	if ep.Engine() == model.VLLM {
		if !vllmV1(ep) {
			return Action{Change: "--enable-chunked-prefill --max-num-batched-tokens " + c,
				Why: "long prompts are split into " + c + "-token chunks scheduled beside decodes instead of stalling them", TradeOff: "a long prompt's own TTFT grows slightly"}, true
		}
		// V1 always chunks prefill unless started with
		// --no-enable-chunked-prefill (vllm/v1/core/sched/scheduler.py:
		// "if not enable_chunked_prefill and num_new_tokens >
		// token_budget"): the lever is the step budget, with chunking left
		// at its default. vLLM's metrics do not say whether it is off.
		a := Action{Change: "--max-num-batched-tokens " + c + " without --no-enable-chunked-prefill",
			Why:      "the V1 engine chunks prefill unless started with --no-enable-chunked-prefill: a step budget of " + c + " tokens caps the prompt tokens that share a step with the decodes",
			TradeOff: "long prompts take more steps: their TTFT and the prefill throughput drop somewhat"}
		if v, ok := infoKey(ep, "enable_chunked_prefill", "chunked_prefill"); ok && !isTrue(v) {
			a.Why = "chunked prefill is off: the V1 scheduler then prefills each prompt whole in one step, stalling every decode in it"
		}
		return a, true
	}
	switch ep.Engine() {
	case model.SGLang:
		return Action{Change: "--chunked-prefill-size " + c, Why: "bounds the prefill work per step", TradeOff: "slightly longer TTFT for long prompts"}, true
	case model.TGI:
		return Action{Change: "--max-batch-prefill-tokens " + c, Why: "bounds the prefill batched with decodes", TradeOff: "slightly longer TTFT for long prompts"}, true
	case model.LlamaCpp:
		return Action{Change: "-ub " + c, Why: "smaller physical batches interleave prompt processing with generation", TradeOff: "slower prompt processing"}, true
	case model.TRTLLM:
		return Action{Change: "--enable_chunked_prefill --max_num_tokens " + c, Why: "context chunks share steps with generation", TradeOff: "slightly longer TTFT for long prompts"}, true
	}
	return Action{}, false
}

// replicas is the scale-out action. It knows how many data-parallel
// engines the server already runs: advising --data-parallel-size 2 to a
// server running two says nothing.
func replicas(ep Endpoint) Action {
	eng := ep.Engine()
	a := Action{Change: "add a replica behind the router", Why: "the queue grows while the batch is full: demand exceeds one engine's capacity", TradeOff: "another GPU"}
	n := dpSize(ep)
	now := ""
	if n > 1 {
		now = fmt.Sprintf(", from the %d engines it runs now", n)
	}
	switch eng {
	case model.VLLM:
		a.Change = fmt.Sprintf("--data-parallel-size %d%s (or another replica behind the router)", n+1, now)
	case model.SGLang:
		a.Change = fmt.Sprintf("--dp-size %d%s (or another replica behind the router)", n+1, now)
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
