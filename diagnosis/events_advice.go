package diagnosis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The log events' findings and their fixes: one per failure the log
// catalogue (engines/: each engine's Logs, and runtimes.go) knows. The
// engine's own words and flags come from its file: the line's Fix, or the
// engine's Levers; what is computed here is the value (a memory share
// from what is free, a context from the engine's estimate).

// eventRule is a finding a log line opens, with its specific fix; which
// lines open it is the catalogue's word (engines.LogLine.Finding).
type eventRule struct {
	id       string
	category Category
	title    string
	cause    string
	actions  func(x model.Event, ep Endpoint) []Action
}

// field returns the first present field among keys.
func field(x model.Event, keys ...string) string {
	for _, k := range keys {
		if v := x.Fields[k]; v != "" {
			return v
		}
	}
	return ""
}

func fieldInt(x model.Event, keys ...string) int {
	v := strings.ReplaceAll(field(x, keys...), ",", "")
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

var eventRules = []eventRule{
	{id: "startup_max_len_kv", category: Memory,
		title: "startup failed: context longer than the KV pool",
		cause: "the model's max length needs more KV memory than the pool has, so the engine refuses to start",
		actions: func(x model.Event, ep Endpoint) []Action {
			eng := lineEngine(x, ep)
			n := fieldInt(x, "estimated_max_len", "kv_tokens")
			acts := []Action{}
			if n > 0 {
				v := n
				if n >= 4096 {
					v = roundDown(n, 256)
				}
				why := engineName(eng) + "'s own estimate of the longest context the pool can hold is " + strconv.Itoa(n)
				if x.Fields["estimated_max_len"] == "" {
					why = "the KV pool holds " + strconv.Itoa(n) + " tokens"
				}
				acts = append(acts, Action{Change: maxLenChange(eng, v), Why: why + " (rounded down to a multiple of 256)",
					TradeOff: "prompts+outputs longer than this are rejected"})
			} else {
				acts = append(acts, Action{Change: maxLenChange(eng, 0) + " lower", Why: "the pool cannot hold one full-length request", TradeOff: "longer requests are rejected"})
			}
			if mem := levers(eng).MemFraction; mem != "" {
				acts = append(acts, Action{Change: mem + " 0.95 (if nothing else uses the GPU)", Why: "a bigger pool", TradeOff: "less room for activations"})
			}
			return append(acts, forEngine(eng, fp8KV)...)
		}},
	{id: "startup_no_kv_memory", category: Memory,
		title:   "startup failed: no memory left for the KV cache",
		cause:   "weights plus activation peak used the whole memory budget",
		actions: lineFix},
	{id: "startup_weights_oom", category: Memory,
		title:   "startup failed: weights do not fit",
		cause:   "the model's weights are larger than the GPU memory share given to the engine",
		actions: lineFix},
	{id: "startup_warmup_oom", category: Memory,
		title: "startup failed: OOM warming up the sampler",
		cause: "the sampler warm-up with max-num-seqs dummy requests ran out of memory",
		actions: func(x model.Event, ep Endpoint) []Action {
			n := fieldInt(x, "num_reqs")
			v := 0
			if n > 1 {
				v = n / 2
			}
			eng := lineEngine(x, ep)
			acts := []Action{{Change: capChange(eng, v), Why: "the warm-up allocates for that many requests", TradeOff: "lower peak concurrency"}}
			if mem := levers(eng).MemFraction; mem != "" {
				acts = append(acts, Action{Change: mem + " 0.85", Why: "leaves more room outside the KV pool", TradeOff: "smaller KV pool"})
			}
			return acts
		}},
	{id: "cuda_oom", category: Memory,
		title: "CUDA out of memory",
		cause: "an allocation outside the KV pool (activations, sampler, CUDA graphs) did not fit",
		actions: func(x model.Event, ep Endpoint) []Action {
			eng := ep.Engine()
			a := forEngine(eng, activationRoom)
			if m, ok := memOOM(ep); ok {
				a = m
			}
			if ep.Life == model.LifeStarting || ep.Life == model.LifeCrashed && servingSince(ep).IsZero() {
				// Out of memory before serving: CUDA graph capture (after
				// the KV pool took its share) is the usual place.
				a = append(forEngine(eng, graphsOff), a...)
			}
			return append(a, Action{Change: "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", Why: "reduces fragmentation when 'reserved but unallocated' is large", TradeOff: "none known"})
		}},
	{id: "startup_vram_held", category: GPU,
		title: "startup: another process holds GPU memory",
		cause: "free memory at start is below what the memory fraction asks for",
		actions: func(x model.Event, ep Endpoint) []Action {
			mem := nonEmpty(levers(lineEngine(x, ep)).MemFraction, "the memory fraction")
			lower := mem + " below the free share"
			free, err1 := strconv.ParseFloat(field(x, "free_gib"), 64)
			total, err2 := strconv.ParseFloat(field(x, "total_gib"), 64)
			if err1 == nil && err2 == nil && total > 0 && free/total > 0.1 {
				lower = mem + " " + strconv.FormatFloat(math.Floor((free/total-0.02)*100)/100, 'f', 2, 64)
			}
			return []Action{{Change: "stop the other process (the GPU pane lists who holds VRAM)", Why: "the fraction is of total VRAM, not of free VRAM", TradeOff: "none"},
				{Change: lower, Why: "fits the pool in what is free", TradeOff: "smaller KV pool"}}
		}},
	{id: "kv_retraction_log", category: Memory,
		title:   "KV pool full: requests preempted/retracted",
		cause:   "decode ran out of KV blocks: the engine evicts running requests and recomputes them later",
		actions: lineFix},
	{id: "token_pool_oom", category: Memory,
		title:   "token pool out of memory",
		cause:   "the engine could not allocate KV tokens for a batch",
		actions: lineFix},
	{id: "req_slots_oom", category: Memory,
		title:   "request-slot pool exhausted",
		cause:   "more requests than the request-to-token pool has slots",
		actions: lineFix},
	{id: "startup_mem_fraction", category: Memory,
		title: "startup failed: KV pool would be empty",
		cause: "mem_fraction_static leaves nothing for the KV cache after the weights",
		actions: func(x model.Event, ep Endpoint) []Action {
			v := "0.9"
			if f, err := strconv.ParseFloat(field(x, "mem_fraction_static"), 64); err == nil && f > 0 {
				v = strconv.FormatFloat(math.Min(0.95, f+0.05), 'f', 2, 64)
			}
			eng := lineEngine(x, ep)
			return []Action{{Change: levers(eng).MemFraction + " " + v, Why: engineName(eng) + "'s own advice: the static pool got nothing after the weights", TradeOff: "less activation room"}}
		}},
	{id: "startup_tgi_memory", category: Memory,
		title:   "startup failed: warm-up batch does not fit",
		cause:   "the requested token budget does not fit in memory during the engine's warm-up",
		actions: lineFix},
	{id: "ggml_oom", category: Memory,
		title: "ggml: GPU allocation failed",
		cause: "the context (KV) or compute buffers do not fit in VRAM",
		actions: func(x model.Event, ep Endpoint) []Action {
			l := levers(lineEngine(x, ep))
			return changes(l.ShrinkKV, l.FP8KV, l.Offload)
		}},
	{id: "context_exceeded", category: Behaviour,
		title: "requests exceed the context size",
		cause: "prompt (+ generation) is longer than a slot's context",
		actions: func(x model.Event, ep Endpoint) []Action {
			return changes(levers(lineEngine(x, ep)).GrowContext)
		}},
	{id: "startup_port_in_use", category: Availability,
		title: "startup failed: port already in use",
		cause: "another process (often an old engine instance) listens on the port",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "find it with `ss -ltnp 'sport = :" + nonEmpty(field(x, "port"), "PORT") + "'` and stop it, or start on another --port", Why: "two servers cannot bind one port", TradeOff: "none"}}
		}},
	{id: "startup_gated_model", category: Availability,
		title: "startup failed: gated model, no access",
		cause: "the HuggingFace repo is gated and the token is missing or not authorised",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "HF_TOKEN=<token with access> in the engine's environment (and accept the licence on the model page)", Why: "the download returns 401/403", TradeOff: "none"}}
		}},
	{id: "nccl_failure", category: Availability,
		title: "multi-GPU communication failed (NCCL)",
		cause: "a collective timed out or failed: a hung rank, a bad interconnect, or too little shared memory in a container",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "NCCL_DEBUG=INFO and restart; in Docker add --shm-size 16g (or --ipc=host)", Why: "shows which rank and transport failed; NCCL needs shared memory", TradeOff: "verbose logs"},
				{Change: "NCCL_P2P_DISABLE=1 to test a broken peer-to-peer path", Why: "isolates PCIe/NVLink faults", TradeOff: "slower collectives"}}
		}},
	{id: "cuda_illegal_access", category: Availability,
		title: "CUDA illegal memory access",
		cause: "a kernel bug or corrupted state; the engine usually dies (health then 503)",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "CUDA_LAUNCH_BLOCKING=1 to find the kernel; try " + noGraphs(ep.Engine()), Why: "CUDA graphs and custom kernels are the usual suspects", TradeOff: "slower decode while testing"}}
		}},
	{id: "illegal_instruction", category: Availability,
		title: "illegal instruction (CPU lacks an instruction set)",
		cause: "the binary was built for CPU features (AVX2/AVX-512) this host lacks",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "use a build for this CPU (GGML_NATIVE=OFF / the generic release)", Why: "SIGILL on start", TradeOff: "slightly slower CPU paths"}}
		}},
	{id: "cuda_device_assert", category: Availability,
		title: "CUDA device-side assert",
		cause: "a kernel's bounds check failed: a token id beyond the vocabulary (a tokenizer that does not match the model, a bad request) or an engine bug; the engine usually dies",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "check that the tokenizer is the model's own (no tokenizer option pointing at another model) and that requests send valid token ids", Why: "an id past the embedding table trips the assert", TradeOff: "none"},
				{Change: "CUDA_LAUNCH_BLOCKING=1 and restart, to name the kernel", Why: "CUDA reports the error late, at some other call", TradeOff: "slower while testing"}}
		}},
	{id: "worker_died", category: Availability,
		title: "an engine worker process died",
		cause: "a GPU worker is gone: the kernel's OOM killer, a segfault or an NCCL failure; the engine shuts down with it",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "read the lines before it and `dmesg -T | grep -i -e 'killed process' -e xid` for why", Why: "the worker's own error is printed before this line, the kernel's in dmesg", TradeOff: "none"},
				{Change: "in Docker with tensor parallelism: --shm-size 16g (or --ipc=host)", Why: "workers exchange tensors through /dev/shm", TradeOff: "host memory"}}
		}},
	{id: "startup_model_unavailable", category: Availability,
		title: "startup failed: model not found or not downloadable",
		cause: "the engine cannot find the model locally and cannot fetch it from the Hugging Face Hub",
		actions: func(x model.Event, ep Endpoint) []Action {
			if x.Kind == "hf_offline" {
				return []Action{{Change: "download the model where the engine can reach it (huggingface-cli download MODEL) and pass its local path, or give the engine network access", Why: "offline, only the cache is read", TradeOff: "disk for the weights"}}
			}
			return []Action{{Change: "check the model name (owner/name on the Hub) or that the local path exists inside the engine's container; HF_TOKEN for a private repository", Why: "neither a folder nor a Hub repository has that name", TradeOff: "none"}}
		}},
	{id: "startup_trust_remote_code", category: Availability,
		title: "startup failed: the model needs --trust-remote-code",
		cause: "the model's repository ships Python code that the engine must run to load it",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "--trust-remote-code (after reading the repository's .py files)", Why: "without it the loader refuses custom code", TradeOff: "runs the repository's code in the engine"}}
		}},
	{id: "startup_unsupported_gpu", category: GPU,
		title: "the engine's build or dtype does not fit this GPU",
		cause: "the GPU's compute capability is outside what the build's kernels or the model's dtype support",
		actions: func(x model.Event, ep Endpoint) []Action {
			if a := lineFix(x, ep); len(a) > 0 {
				return a
			}
			return []Action{{Change: "install a build for this GPU's architecture (a newer release or wheel for new GPUs such as Blackwell; TORCH_CUDA_ARCH_LIST when building)", Why: "no kernel was compiled for this compute capability", TradeOff: "an upgrade or a rebuild"}}
		}},
	{id: "lora_not_found", category: API,
		title:   "LoRA adapter not found",
		cause:   "the adapter's path holds no adapter, or is not visible inside the engine's container: requests that name it fail",
		actions: lineFix},
	{id: "mm_limit", category: API,
		title:   "requests over the per-prompt media limit",
		cause:   "requests carry more images (or other media) than the engine accepts per prompt; each is rejected with 400",
		actions: lineFix},
	{id: "guided_decoding", category: API,
		title:   "guided decoding rejected requests (schema or grammar it cannot compile)",
		cause:   "clients send response_format / guided_json / grammars with features the structured-output backend does not support; each such request fails with 400, the rest are served",
		actions: lineFix},
	{id: "health_check_failed", category: Availability,
		title: "engine health check failed",
		cause: "the scheduler or detokenizer stopped answering",
		actions: func(x model.Event, ep Endpoint) []Action {
			return []Action{{Change: "restart the engine and read the lines before this one", Why: "a hung scheduler does not recover", TradeOff: "in-flight requests lost"}}
		}},
}

// criticalEvent is the finding of a critical log line that has no fix of
// its own: the engine's own words are the evidence.
var criticalEvent = eventRule{id: "log_critical", category: Availability,
	title: "critical line in the engine's log",
	cause: "the engine logged a critical error that llmtop has no specific fix for: its line and hint say what it is",
	actions: func(x model.Event, ep Endpoint) []Action {
		a := []Action{{Change: "read the lines around it (the log pane, l) for the root cause, usually the first error before it", Why: "engines print the cause before the consequence", TradeOff: "none"}}
		if h := x.Fields["hint"]; h != "" {
			a = append(a, Action{Change: h, Why: "the log catalogue's advice for this line", TradeOff: "see the line"})
		}
		return a
	}}

// memOOM is the CUDA OOM advice for an engine whose configuration reports
// the memory share it serves with (Levers.MemFractionKey): the share
// lowered from that (never a constant that may be a raise), and the
// per-step prefill bounded the way its version allows (an engine of the
// V0 kind refuses a step budget below max_model_len unless chunked prefill
// is on). False
// for any other engine: its Levers.ActivationRoom is the advice.
func memOOM(ep Endpoint) ([]Action, bool) {
	s := engines.Of(ep.Engine())
	if s == nil || s.Levers.MemFractionKey == "" {
		return nil, false
	}
	ar := s.Levers.ActivationRoom
	mem := Action{Change: ar.Change, Why: ar.Why, TradeOff: ar.TradeOff}
	if v, ok := served(ep, s.Levers.MemFractionKey); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0.1 {
			mem.Change = fmt.Sprintf("%s %.2f (from %s)", s.Levers.MemFraction, math.Floor((f-0.05)*100+1e-9)/100, v)
		}
	}
	acts := []Action{mem}
	if a, ok := chunkedPrefill(ep, 4096); ok {
		a.Why = "bounds the activation peak of one step; " + a.Why
		if ml, ok := served(ep, "max_model_len"); ok && !vllmV1(ep) {
			a.Why += " (" + s.Name + " " + nonEmpty(version(ep), "V0") + " with max_model_len " + ml + " refuses a smaller budget without chunked prefill)"
		}
		acts = append(acts, a)
	}
	return acts, true
}

// lineEngine is the engine whose flags fix a log line: the endpoint's
// where it prints such lines (or the line is any engine's), else the
// first of those that print it (engines/: a runtime's line is printed by
// each engine on that runtime, an engine's own line by that engine).
func lineEngine(x model.Event, ep Endpoint) model.Engine {
	eng := ep.Engine()
	l, ok := engines.LogLineByID(x.Kind)
	if !ok || len(l.Engines) == 0 || slices.Contains(l.Engines, eng) {
		return eng
	}
	return l.Engines[0]
}

// lineFix is the fix the engine's file gives for the event's log line
// (engines.LogLine.Fix).
func lineFix(x model.Event, _ Endpoint) []Action {
	l, _ := engines.LogLineByID(x.Kind)
	return changes(l.Fix...)
}

// changes turns an engine file's changes into actions, leaving out the
// ones an engine does not have.
func changes(cs ...engines.Change) []Action {
	var out []Action
	for _, c := range cs {
		if c.Change != "" {
			out = append(out, Action{Change: c.Change, Why: c.Why, TradeOff: c.TradeOff})
		}
	}
	return out
}

// levers are an engine's flags (none for an unknown engine).
func levers(e model.Engine) engines.Levers {
	if s := engines.Of(e); s != nil {
		return s.Levers
	}
	return engines.Levers{}
}

// activationRoom is the CUDA OOM fix by engine, graphsOff the one for an
// OOM during start-up (CUDA graph capture): engines/, each one's Levers.
var (
	activationRoom = byEngine(func(l engines.Levers) engines.Change { return l.ActivationRoom })
	graphsOff      = byEngine(func(l engines.Levers) engines.Change {
		if l.NoGraphs == "" {
			return engines.Change{}
		}
		return engines.Change{Change: l.NoGraphs + " (or " + l.GraphSizes + ")",
			Why: "the OOM came during start-up, where CUDA graph capture allocates after the KV pool", TradeOff: "slower decode without CUDA graphs"}
	})
)

// noGraphs names the flag that turns CUDA graphs off: the engine's, or
// every engine's with its name.
func noGraphs(e model.Engine) string {
	if f := levers(e).NoGraphs; f != "" {
		return f
	}
	return everyEngine(func(l engines.Levers) string { return l.NoGraphs }, " / ")
}
