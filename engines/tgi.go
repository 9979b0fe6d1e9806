package engines

import (
	"fmt"

	"github.com/llmtop/llmtop/model"
)

// TGI is Hugging Face Text Generation Inference (ENGINES.md §3).
var TGI = Spec{
	ID:          model.TGI,
	Name:        "TGI",
	Ports:       []int{3000, 80},
	PortNote:    "80 in the Docker image",
	Aliases:     []string{"text-generation-inference"},
	Prefixes:    []string{"tgi_"},
	MetricsPath: "/metrics",
	Hint404:     "TGI serves /metrics on its main port and on --prometheus-port (default 9000); pass --metrics-path if a proxy moved it",
	KVAgg:       "max",
	Rules:       true,
	KVNote:      " (approximation: tokens reserved by the running batch ÷ max batch total tokens; TGI has no KV metric)",
	Fleet: &Fleet{Present: model.Waiting,
		Gauges: []model.Gauge{model.Running, model.Waiting},
		Extra: map[model.Counter]string{model.PromptTokens: TGIInputLength + "_sum",
			model.GenTokens: TGIGeneratedTokens + "_sum", model.Requests: TGIRequestSuccess},
		Hists: []model.Latency{model.TPOT, model.E2E, model.Queue}},
	Levers: Levers{
		Warmup:         Change{Change: "route traffic after /health returns 200 (warm-up finished)", Why: "TGI warms up before serving", TradeOff: "slower rollout"},
		SpeculateLess:  Change{Change: "--speculate 1 (or unset)", Why: "rejected speculation costs compute", TradeOff: "less speed-up"},
		Speculate:      Change{Change: "--speculate 2 (n-gram, or a Medusa/MLP-speculator checkpoint)", Why: "several tokens per bandwidth-bound step when drafts are accepted", TradeOff: "gains shrink at large batch"},
		EnableMetrics:  Change{Change: "scrape the --prometheus-port (default 9000) if the main port's /metrics is blocked", Why: "TGI serves metrics on both", TradeOff: "none"},
		Template:       Change{Change: "serve a tokenizer_config.json with the model's chat_template (--tokenizer-config-path)", Why: "TGI renders chat with the tokenizer config's template", TradeOff: "none"},
		Tokenizer:      Change{Change: "--tokenizer-config-path from the model's own repository", Why: "a tokenizer from another model splits text badly", TradeOff: "none"},
		Stop:           Change{Change: "check the model's generation_config.json eos_token_id; or send stop", Why: "TGI stops on the EOS ids it knows", TradeOff: "none"},
		Sampling:       Change{Change: "send do_sample false (TGI samples only when asked) and check a proxy is not adding sampling parameters", Why: "greedy decoding is the default only without sampling parameters", TradeOff: "none"},
		RepeatPenalty:  "repetition_penalty 1.1 per request",
		Quantize:       Change{Change: "--quantize fp8 (or awq/gptq checkpoints)", Why: "fewer weight bytes per token", TradeOff: "small accuracy cost"},
		Front:          Change{Change: "--validation-workers 4 (default 2)", Why: "the router tokenises and validates in more workers", TradeOff: "more CPU"},
		TensorParallel: []string{"--num-shard"},
		Prefill: func(n int) Change {
			return Change{Change: fmt.Sprintf("--max-batch-prefill-tokens %d", n), Why: "more prompt tokens per prefill batch", TradeOff: "more VRAM for activations"}
		},
		ActivationRoom: Change{Change: "--max-batch-prefill-tokens lower, --cuda-memory-fraction 0.9", Why: "smaller prefill peak", TradeOff: "slower long prompts"},
		Precision:      []string{"--dtype", "--quantize"},
		// 429 past the semaphore (router/src/infer/mod.rs:
		// limit_concurrent_requests.try_acquire_owned), counted as
		// tgi_request_failure{err="overloaded"}
		Admission: Admission{Flag: "--max-concurrent-requests", Rejects: "HTTP 429", Default: "128"},
		// TGI batches by tokens: --max-batch-size only binds on hardware
		// without unpadded inference (launcher --help); on GPUs the running
		// batch is bounded by --max-batch-total-tokens.
		Cap:                "--max-batch-total-tokens for about %[1]s requests (TGI batches by tokens: %[1]s × prompt+output tokens per request)",
		MaxLen:             "--max-total-tokens %s (and --max-input-tokens below it)",
		MemFraction:        "--cuda-memory-fraction",
		MemFractionDefault: 1.0,
		FP8KV:              Change{Change: "--kv-cache-dtype fp8_e4m3fn", Why: "halves KV bytes per token", TradeOff: "small accuracy cost"},
		Chunked:            Change{Change: "--max-batch-prefill-tokens %s", Why: "bounds the prefill batched with decodes", TradeOff: "slightly longer TTFT for long prompts"},
	},
	Metrics: tgiMetrics,
	Logs:    tgiLogs,
	Process: Process{Programs: []string{"text-generation-launcher", "text-generation-router", "text-generation-server"},
		Modules: []string{"text_generation_server"}, Serves: []string{"text-generation-launcher"},
		Host: "0.0.0.0", PortFlags: []string{"--port", "-p"}, HostFlags: []string{"--hostname"}},
	Probe: Probe{Identity: model.TGI, Template: model.TGI, Tokenize: model.TGI,
		DefaultsNote: "not served over HTTP: TGI applies the model's generation_config.json; /info does not show it"},
}

// TGI metrics the adapter reads beyond the table.
const (
	TGIBatchMaxTotalTokens   = "tgi_batch_max_total_tokens"
	TGIBatchCurrentMaxTokens = "tgi_batch_current_max_tokens"
	TGIRequestSuccess        = "tgi_request_success"
	TGIRequestFailure        = "tgi_request_failure"
	TGIInputLength           = "tgi_request_input_length"
	TGIGeneratedTokens       = "tgi_request_generated_tokens"
	TGIBatchInference        = "tgi_batch_inference_duration"
	TGIBatchForward          = "tgi_batch_forward_duration"
	TGIValidation            = "tgi_request_validation_duration"
	TGIQueue                 = "tgi_request_queue_duration"
	// TGIOverloaded is the failure counter's selector for requests turned
	// away past --max-concurrent-requests.
	TGIOverloaded = TGIRequestFailure + `{err="overloaded"}`
)

var tgiMetrics = []MetricSource{
	src(string(model.Running), "", "tgi_batch_current_size"),
	src(string(model.Waiting), "", "tgi_queue_size"),
	derived(string(model.KVUsage), "approximation: tokens reserved by the batch", "tgi_batch_current_max_tokens/tgi_batch_max_total_tokens"),
	derived(string(model.TTFT), "approximation: sum of the means", "tgi_request_validation_duration+tgi_request_queue_duration+tgi_batch_inference_duration{method=prefill}"),
	src(string(model.TPOT), "histogram", "tgi_request_mean_time_per_token_duration"),
	src(string(model.E2E), "histogram", "tgi_request_duration"),
	src(string(model.Queue), "histogram", "tgi_request_queue_duration"),
	derived(model.FinishReasons, "", "tgi_request_success, tgi_request_failure{err}"),
}

// tgiLogs are its log lines, most specific first (LOG-PATTERNS.md).
var tgiLogs = []LogLine{
	// TGI records these span fields (Rust Duration Debug: "4.065504959s",
	// "440.038965ms", "94.981µs") just before its "Success" event, in text
	// (`generate{… total_time="…" …}: …: Success`) and --json-output
	// ("span":{"total_time":"…",…}) logs: router/src/server.rs.
	{ID: "tgi_request", Sev: info, Category: "stats", Needle: "time_per_token",
		Regex:   `(?:\btotal_time=|"total_time":)"(?P<total>[^"]+)"`,
		Title:   "TGI request done in {total}",
		Meaning: "TGI's per-request timings (total, validation, queue, inference, time per token), logged with its Success line"},
	{ID: "tgi_max_total_tokens", Finding: "startup_tgi_memory", Fix: tgiWarmupFix, Sev: crit, Category: "memory", Needle: "Not enough memory to handle `max_total_tokens=",
		Regex:   "Not enough memory to handle `max_total_tokens=(?P<max_total_tokens>\\d+)`",
		Title:   "TGI: not enough memory for max_total_tokens={max_total_tokens}",
		Meaning: "lower --max-total-tokens / --max-batch-total-tokens"},
	{ID: "tgi_prefill_tokens", Finding: "startup_tgi_memory", Fix: tgiWarmupFix, Sev: crit, Category: "memory", Needle: "prefill tokens. You need to decrease",
		Regex:   `Not enough memory to handle (?P<tokens>\d+) prefill tokens\. You need to decrease .?--max-batch-prefill-tokens`,
		Title:   "TGI: OOM warming up {tokens} prefill tokens",
		Meaning: "lower --max-batch-prefill-tokens"},
	{ID: "tgi_warmup", Sev: info, Category: "availability", Phase: model.PhaseLoading, Needle: "Warming up model",
		Regex: `Warming up model`,
		Title: "TGI warming up", Meaning: "the shard is measuring how many tokens fit"},
	{ID: "tgi_batch_tokens", Sev: info, Category: "config", Needle: "max batch total tokens",
		Regex: `(?:Setting max batch total tokens to|Inferred max batch total tokens:) (?P<tokens>\d+)`,
		Title: "TGI max batch total tokens: {tokens}", Meaning: "the KV budget in tokens across the batch"},
	{ID: "tgi_connected", Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "Connected",
		Regex: `text_generation_router[\w:]*: .*: Connected\s*$`,
		Title: "TGI router connected", Meaning: "the router is ready"},
}

// tgiWarmupFix is the fix of TGI's warm-up failures (LogLine.Fix).
var tgiWarmupFix = []Change{
	{Change: "--max-batch-prefill-tokens lower (e.g. 4096) and/or --max-batch-total-tokens lower", Why: "TGI's own advice", TradeOff: "smaller batches"},
	{Change: "--kv-cache-dtype fp8_e4m3fn", Why: "half the KV bytes", TradeOff: "small accuracy cost"},
}
