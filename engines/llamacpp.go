package engines

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// LlamaCpp is llama.cpp's llama-server (ENGINES.md §4).
var LlamaCpp = Spec{
	ID:       model.LlamaCpp,
	Name:     "llama.cpp",
	Ports:    []int{8080},
	PortNote: "9931 in future builds",
	Aliases:  []string{"llama.cpp", "llama-server", "llama_cpp"},
	// llama-server's short and long forms (tools/server/README.md).
	FlagAliases: [][]string{
		{"-np", "--parallel"}, {"-c", "--ctx-size"}, {"-ub", "--ubatch-size"}, {"-b", "--batch-size"},
		{"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-fa", "--flash-attn"},
		{"-kvu", "--kv-unified"}, {"-ngl", "--n-gpu-layers", "--gpu-layers"}, {"-m", "--model"},
	},
	Prefixes:    []string{"llamacpp:"},
	MetricsPath: "/metrics",
	Hint404: "start llama-server with --metrics (env LLAMA_ARG_ENDPOINT_METRICS=1); " +
		"in router mode pass --metrics-path '/metrics?model=ID'",
	KVAgg: "max",
	// A slot holds its request's context for the request's life: what
	// does not fit a slot is rejected, what finds no free slot waits.
	Preemption: Preemption{Never: true},
	Slots:      true,
	// Older llama-server builds only; newer ones have no KV metric (llmtop reads /slots).
	Rules: true,
	Fleet: &Fleet{Present: model.Running,
		Gauges:   []model.Gauge{model.Running, model.Waiting, model.KVUsage},
		Counters: map[model.Counter]string{model.PromptTokens: string(model.PromptTokens), model.GenTokens: string(model.GenTokens)}},
	Levers: Levers{
		Threads:       Change{Change: "-t <physical cores> (not the hyper-threads)", Why: "decode is memory-bound: threads past the physical cores contend for the same bandwidth", TradeOff: "none"},
		Warmup:        Change{Change: "wait for 'model loaded' / /health 200 before sending load", Why: "503 'Loading model' until then", TradeOff: "none"},
		SpeculateLess: Change{Change: "--spec-draft-n-max 4 (or drop -md)", Why: "shorter drafts waste less", TradeOff: "less speed-up"},
		Speculate:     Change{Change: "-md <small draft model of the same family>.gguf", Why: "the draft proposes tokens the big model verifies in one pass", TradeOff: "the draft's memory; gains only when it agrees often"},
		EnableMetrics: Change{Change: "--metrics (env LLAMA_ARG_ENDPOINT_METRICS=1)", Why: "llama-server serves /metrics only with this flag", TradeOff: "none; each scrape resets its throughput gauges' window"},
		CapPool: Change{Change: "-np %d -kvu (keep -c %s)",
			Why:      "-kvu keeps one KV cache of -c tokens shared by every slot: an explicit -np without it turns the default unified cache off and splits -c into per-slot parts",
			TradeOff: "no more KV memory, but the slots share it: a few long requests can fill the pool, and each slot generates slower as more share every step"},
		Template:       Change{Change: "--jinja (use the GGUF's own template) or --chat-template-file PATH", Why: "without them llama-server guesses a built-in template from the GGUF", TradeOff: "none"},
		Tokenizer:      Change{Change: "re-convert the GGUF with a current convert_hf_to_gguf.py (the tokenizer is inside the file)", Why: "old conversions carry wrong pre-tokenizers", TradeOff: "none"},
		Stop:           Change{Change: "--jinja (the GGUF's template, whose turn end is the EOG token) and check tokenizer.ggml.eos_token_id in the GGUF; or send stop", Why: "llama-server stops on end-of-generation tokens", TradeOff: "none"},
		Sampling:       Change{Change: "check --samplers and --temp on the command line, and -np (each slot keeps its own cache: a cache hit can change the result)", Why: "llama-server's sampler chain is set at start-up", TradeOff: "none"},
		RepeatPenalty:  "--repeat-penalty 1.1 (or repeat_penalty per request)",
		Quantize:       Change{Change: "a smaller quant (e.g. Q4_K_M instead of Q8_0), and -ngl 999 so no layer runs on the CPU", Why: "fewer bytes per token; CPU layers are far slower", TradeOff: "accuracy vs size"},
		Front:          Change{Change: "--threads-http N (default: the CPU count)", Why: "more threads serve HTTP", TradeOff: "more CPU"},
		FrontRunsModel: true,
		// An explicit -np turns the default unified KV cache off and splits
		// -c over the slots; -kvu keeps one shared pool (issue 14 item 16).
		Cap:         "-np %s -kvu (keep -c)",
		MaxLen:      "-c %s",
		FP8KV:       Change{Change: "-ctk q8_0 -ctv q8_0 (with -fa on)", Why: "halves the KV cache", TradeOff: "small accuracy cost; V quantisation needs flash attention"},
		Chunked:     Change{Change: "-ub %s", Why: "smaller physical batches interleave prompt processing with generation", TradeOff: "slower prompt processing"},
		ShrinkKV:    Change{Change: "-c lower (it is shared by all -np slots) or -np lower", Why: "the KV is allocated for -c tokens", TradeOff: "shorter context / less concurrency"},
		GrowContext: Change{Change: "-c higher or -np lower (per-slot context is -c / -np unless --kv-unified)", Why: "each slot gets a share of -c", TradeOff: "more VRAM / less concurrency"},
		Prefill: func(n int) Change {
			return Change{Change: fmt.Sprintf("-b %d -ub %d", max(n, 2048), min(n, 2048)), Why: "bigger batches process prompts faster", TradeOff: "more compute buffer VRAM"}
		},
		Offload: Change{Change: "-ngl lower (offload fewer layers)", Why: "frees VRAM for buffers", TradeOff: "slower"},
	},
	Metrics: llamacppMetrics,
	Logs:    llamacppLogs,
	Process: Process{Programs: []string{"llama-server*"}, Serves: []string{"llama-server*"},
		Host: "127.0.0.1", PortFlags: []string{"--port"}, HostFlags: []string{"--host"},
		// -m names the GGUF file; -hf downloads into LLAMA_CACHE, else
		// $XDG_CACHE_HOME/llama.cpp, else ~/.cache/llama.cpp (common's
		// fs_get_cache_directory).
		Store: ModelStore{FileSuffix: ".gguf", Env: []EnvDir{{"LLAMA_CACHE", ""}, {"XDG_CACHE_HOME", "llama.cpp"}}, Home: ".cache/llama.cpp", What: "model files"}},
	Health:  Health{Route: "/health", Status: 503, Means: model.HealthLoading, Why: "loading model"},
	OwnedBy: []string{"llamacpp"},
	Probe:   Probe{Identity: model.LlamaCpp, Template: model.LlamaCpp, Tokenize: model.LlamaCpp, Defaults: model.LlamaCpp},
}

// llama.cpp metrics the adapter reads beyond the table.
const (
	LlamaCppPromptCached     = "llamacpp:prompt_tokens_cached_total"
	LlamaCppPredictedSeconds = "llamacpp:tokens_predicted_seconds_total"
)

var llamacppMetrics = []MetricSource{
	src(string(model.Running), "", "llamacpp:requests_processing"),
	src(string(model.Waiting), "", "llamacpp:requests_deferred"),
	{Concept: string(model.KVUsage), Names: []string{"llamacpp:kv_cache_usage_ratio"},
		Derived: []string{"/slots: context held by busy slots ÷ the pool (unified cache: one slot's n_ctx; split: their sum)"},
		Note:    "the metric was removed 2025-05-21 and is read from older builds; newer ones give /slots (model/slotkv.go)"},
	src(string(model.PromptTokens), "", "llamacpp:prompt_tokens_total"),
	src(string(model.GenTokens), "", "llamacpp:tokens_predicted_total"),
	// Tokens ÷ the slots' processing seconds (1e3 / t_prompt_processing ×
	// n_prompt_tokens_processed): a rate over busy time, per slot, not
	// the server's throughput over the wall clock.
	busy(src(string(model.PromptTPSGauge), "tokens per second of prompt processing time (busy time, summed over slots), not over the wall clock", "llamacpp:prompt_tokens_seconds")),
	busy(src(string(model.GenTPSGauge), "tokens per second of generation time (busy time, summed over slots), not over the wall clock", "llamacpp:predicted_tokens_seconds")),
	// Since 2026-08-13 prompt_tokens_total excludes the cached tokens,
	// which prompt_tokens_cached_total counts: the hit rate is cached ÷ both.
	derived(string(model.PrefixHits), "prompt tokens reused from the cache", LlamaCppPromptCached),
	derived(string(model.PrefixQueries), "prompt tokens: computed + cached", "llamacpp:prompt_tokens_total+"+LlamaCppPromptCached),
	src(string(model.SpecDraftTokens), "", "llamacpp:spec_decode_num_draft_tokens_total"),
	src(string(model.SpecAcceptTokens), "", "llamacpp:spec_decode_num_accepted_tokens_total"),
	src(string(model.SpecDrafts), "drafts proposed: the denominator of the acceptance by position", "llamacpp:spec_decode_num_drafts_total"),
	src(model.SpecAcceptByPos, "by position (0 the first drafted token); read with the drafts counter", "llamacpp:spec_decode_num_accepted_tokens_per_pos_total"),
	src(string(model.BatchPerStep), "mean busy slots per decode since start", "llamacpp:n_busy_slots_per_decode"),
	absent(string(model.TTFT), "not exposed (per request only, in timings.prompt_ms)"),
	// An aggregate over tokens: its count is the tokens generated, not requests.
	counting(derived(string(model.TPOT), "aggregate mean over generated tokens", "llamacpp:tokens_predicted_seconds_total/llamacpp:tokens_predicted_total"), "tokens"),
}

// llamacppLogs are its log lines, most specific first (LOG-PATTERNS.md).
var llamacppLogs = []LogLine{
	{ID: "llamacpp_timing", Sev: info, Category: "stats", Needle: "time = ",
		Regex:   `id +(?P<slot>\d+) \| task (?P<task>\d+) \| +(?P<what>prompt eval|eval|total) time = +(?P<ms>[\d.]+) ms / +(?P<tokens>\d+) tokens`,
		Title:   "llama.cpp task {task}: {what} {tokens} tokens in {ms} ms",
		Meaning: "llama-server's per-request timing, printed when a slot is released"},
	{ID: "llamacpp_draft_acceptance", Sev: info, Category: "stats", Needle: "draft acceptance",
		Regex:   `draft acceptance(?: rate)? = (?P<rate>[\d.]+) \(\s*(?P<accepted>\d+) accepted /\s*(?P<drafted>\d+) generated\)(?:, mean acceptance length =\s*(?P<mean_len>[\d.]+))?(?:, acceptance rate per position = \((?P<per_pos>[^)]*)\))?`,
		Title:   "llama.cpp speculative decoding: {accepted} of {drafted} draft tokens accepted",
		Meaning: "llama-server's speculative-decoding tally for one request, printed when its slot is released",
		Drafts:  drafts("accepted", "drafted", "per_pos")},
	{ID: "llamacpp_no_memory_slot", Finding: "ggml_oom", Sev: warn, Category: "memory", Needle: "failed to find a memory slot for batch",
		Regex:   `failed to find a memory slot for batch of size (?P<batch>\d+)`,
		Title:   "llama.cpp: KV cache full for a batch of {batch}",
		Meaning: "the KV cache is full; the server retries with a smaller batch"},
	{ID: "llamacpp_kv_retry", Finding: "ggml_oom", Sev: warn, Category: "memory", Needle: "failed to find free space in the KV cache",
		Regex:   `failed to find free space in the KV cache, retrying with smaller batch size, off = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp: KV cache full, retrying with batch {n_batch}",
		Meaning: "KV pressure: raise -c or lower -np"},
	{ID: "llamacpp_bind", Finding: "startup_port_in_use", Sev: crit, Category: "availability", Needle: "couldn't bind HTTP server socket",
		Regex:   `couldn't bind HTTP server socket, hostname: (?P<host>\S+), port: (?P<port>\d+)`,
		Title:   "llama-server could not bind port {port}",
		Meaning: "the HTTP port is busy: stop the other process or pass another --port"},
	{ID: "llamacpp_decode_failed", Finding: "context_exceeded", Sev: crit, Category: "availability", Needle: "Context size has been exceeded.",
		// Older builds print "i = " where current ones print "off = ".
		Regex:   `Context size has been exceeded\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: context size exceeded",
		Meaning: "every processing slot gets this error: raise -c or lower -np"},
	{ID: "llamacpp_invalid_batch", Sev: crit, Category: "availability", Needle: "Invalid input batch.",
		// Only the decode line, which carries off/n_batch/ret: the error then
		// sent to each processing slot ("send_error: task id = 7, error:
		// Invalid input batch.") is the same failure again.
		Regex:   `Invalid input batch\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: invalid input batch",
		Meaning: "every processing slot gets this error; see the lines before it"},
	{ID: "llamacpp_compute_error", Sev: crit, Category: "availability", Needle: "Compute error.",
		// As llamacpp_invalid_batch: the decode line, not each slot's send_error.
		Regex:   `Compute error\. (?:off|i) = (?P<off>\d+), n_batch = (?P<n_batch>\d+), ret = (?P<ret>-?\d+)`,
		Title:   "llama.cpp decode failed: compute error",
		Meaning: "the backend failed to compute the batch (often a GPU fault); every processing slot gets this error"},
	{ID: "llamacpp_prompt_too_long", Finding: "context_exceeded", Refused: true, Sev: warn, Category: "config", Needle: "exceeds the available context size",
		Regex:      `request \((?P<n_prompt>\d+) tokens\) exceeds the available context size \((?P<n_ctx>\d+) tokens\)`,
		Title:      "llama.cpp rejected a {n_prompt}-token prompt (slot context {n_ctx})",
		Meaning:    "the per-slot context is -c divided by -np (unless unified): raise -c or lower -np",
		PromptOver: promptOver("n_prompt", "n_ctx")},
	{ID: "llamacpp_context_shift_disabled", Finding: "context_exceeded", Refused: true, Sev: warn, Category: "config", Needle: "context shift is disabled",
		Regex:   `context shift is disabled`,
		Title:   "llama.cpp: generation hit the context limit",
		Meaning: "context shift is off: raise -c, or enable --context-shift"},
	{ID: "llamacpp_context_shift", Sev: warn, Category: "config", Needle: "slot context shift",
		Regex:   `slot context shift, n_keep = (?P<n_keep>\d+), n_left = (?P<n_left>\d+), n_discard = (?P<n_discard>\d+)`,
		Title:   "llama.cpp discarded {n_discard} tokens (context shift)",
		Meaning: "a request outgrew its slot context and lost tokens: raise -c or lower -np"},
	{ID: "llamacpp_ctx_capped", Sev: warn, Category: "config", Needle: "exceeds the training context of the model",
		Regex:   `the slot context \((?P<n_ctx_slot>\d+)\) exceeds the training context of the model \((?P<n_ctx_train>\d+)\) - capping`,
		Title:   "llama.cpp capped the context at {n_ctx_train}",
		Meaning: "-c is larger than the model was trained for"},
	{ID: "llamacpp_slots", Sev: info, Category: "config", Needle: "initializing, n_slots",
		// kv_unified is printed by builds with the unified cache (-kvu); the
		// core reads it to size the KV pool (model.SlotKV): unified, every
		// slot's n_ctx is the one shared pool.
		Regex:   `initializing, n_slots = (?P<n_slots>\d+), n_ctx_slot = (?P<n_ctx_slot>\d+)(?:, kv_unified = '(?P<kv_unified>true|false)')?`,
		Title:   "llama-server: {n_slots} slots of {n_ctx_slot} tokens",
		Meaning: "concurrency limit (-np) and per-slot context; with kv_unified = 'true' the slots share one pool of that size"},
	{ID: "llamacpp_port_notice", Sev: info, Category: "config", Needle: "server default port will be changed",
		Regex:   `server default port will be changed to :(?P<port>\d+)`,
		Title:   "llama-server default port will move to {port}",
		Meaning: "pin --port if clients rely on 8080"},
	{ID: "llamacpp_model_loaded", Sev: info, Category: "availability", Needle: "model loaded",
		Regex: `\bsrv +\S+: model loaded\s*$`,
		Title: "llama-server model loaded", Meaning: "the model is ready"},
	{ID: "llamacpp_listening", Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "listening on ",
		Regex: `\bsrv +\S+: (?:server is )?listening on (?P<address>\S+)`,
		Title: "llama-server listening on {address}", Meaning: "the HTTP server is up"},
	{ID: "llamacpp_loading", Sev: info, Category: "availability", Needle: `"message":"Loading model","type":"unavailable_error"`,
		Regex: `"message":"Loading model","type":"unavailable_error"`,
		Title: "llama-server is still loading the model", Meaning: "requests get 503 until it is loaded"},
	{ID: "llamacpp_loading_model", Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: "loading model '",
		Regex: `\bsrv +\S+: loading model '(?P<model>[^']*)'`,
		Title: "llama-server loading {model}", Meaning: "a new llama-server process is loading its model: a new run begins"},
	{ID: "llamacpp_exit", Sev: info, Category: "lifecycle", Phase: model.PhaseStopped, Needle: "cleaning up before exit...",
		Regex: `\bsrv +\S+: (?:\S+: )?cleaning up before exit\.\.\.`,
		Title: "llama-server exiting cleanly", Meaning: "SIGTERM or SIGINT: a planned end of this run"},
}

// isLlamaServer: the program (or the argument a wrapper runs) is llama-server.
func isLlamaServer(arg string) bool {
	return strings.HasPrefix(path.Base(strings.ReplaceAll(arg, "\\", "/")), "llama-server")
}

// LlamaKVLayout learns the KV layout of a llama-server run, best first:
// its log's start-up line (kv_unified = 'true'|'false'), then its command
// line (local endpoints), given the slot count /slots shows.
//
// From llama.cpp's source (tools/server/server.cpp): -kvu/--kv-unified and
// -no-kvu/--no-kv-unified set it; -np/--parallel N (N ≥ 1) without them
// leaves it off; n_parallel < 0 ("auto", the default on builds that have
// it) becomes 4 slots with kv_unified = true. Builds before auto default to
// one slot, where the layouts are the same. So with neither flag and 4
// slots the cache is unified; with neither flag and another count the
// slots were set elsewhere (LLAMA_ARG_N_PARALLEL): unknown. A command line
// that is not llama-server's (docker-proxy holding the port) says nothing.
func LlamaKVLayout(logUnified, cmdline string, slots int) model.KVLayout {
	switch strings.Trim(logUnified, "' ") {
	case "true":
		return model.KVLayout{Known: true, Unified: true, From: "the log: kv_unified = 'true'"}
	case "false":
		return model.KVLayout{Known: true, From: "the log: kv_unified = 'false'"}
	}
	if cmdline == "" {
		return model.KVLayout{From: "no log line with kv_unified, no command line"}
	}
	args := strings.Fields(cmdline)
	if !slices.ContainsFunc(args, isLlamaServer) {
		// docker-proxy, a wrapper: its flags say nothing of the engine's.
		return model.KVLayout{From: "the command line on the port is not llama-server's"}
	}
	kv, np, npGiven := "", "", false
	for i, a := range args {
		name, val, eq := strings.Cut(a, "=")
		switch name {
		case "-kvu", "--kv-unified", "-no-kvu", "--no-kv-unified":
			kv = name
		case "-np", "--parallel":
			npGiven = true
			if eq {
				np = val
			} else if i+1 < len(args) {
				np = args[i+1]
			}
		}
	}
	switch {
	case kv == "-kvu" || kv == "--kv-unified":
		return model.KVLayout{Known: true, Unified: true, From: "the command line: " + kv}
	case kv != "":
		return model.KVLayout{Known: true, From: "the command line: " + kv}
	}
	if npGiven {
		if v, err := strconv.Atoi(np); err == nil && v < 0 {
			return model.KVLayout{Known: true, Unified: true, From: "the command line: --parallel " + np + " (auto: unified)"}
		} else if err == nil {
			return model.KVLayout{Known: true, From: "the command line: -np " + np + " without -kvu"}
		}
		return model.KVLayout{From: "the command line's -np is not a number"}
	}
	if slots == 4 {
		return model.KVLayout{Known: true, Unified: true, From: "the command line: no -np, so llama-server's auto default of 4 unified slots"}
	}
	return model.KVLayout{From: fmt.Sprintf("no -np on the command line, yet %d slots: set elsewhere (LLAMA_ARG_N_PARALLEL?)", slots)}
}
