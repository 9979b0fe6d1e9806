package engines

import "github.com/llmtop/llmtop/model"

// Ollama has no Prometheus metrics: llmtop reads /api/ps (ENGINES.md §6).
var Ollama = Spec{
	ID:    model.Ollama,
	Name:  "Ollama",
	Ports: []int{11434},
	// its runner is llama.cpp's server, and logs as it
	Runs: model.LlamaCpp,
	Levers: Levers{
		Warmup:        Change{Change: "OLLAMA_KEEP_ALIVE=-1 (or a longer keep_alive per request)", Why: "Ollama unloads idle models after 5 m and reloads on the next request", TradeOff: "the model keeps its VRAM while idle"},
		EnableMetrics: Change{Change: "attach the log (--log/--docker): Ollama has no Prometheus endpoint", Why: "per-request stats only exist in responses and logs", TradeOff: "none"},
		Template:      Change{Change: "fix TEMPLATE in the Modelfile (ollama show --modelfile MODEL), then ollama create", Why: "Ollama renders chat with the Modelfile's Go template", TradeOff: "none"},
		Tokenizer:     Change{Change: "pull the model again or rebuild it from a current GGUF", Why: "the tokenizer is inside the model file", TradeOff: "none"},
		Stop:          Change{Change: "PARAMETER stop \"<the turn-end token>\" in the Modelfile (ollama show --modelfile MODEL)", Why: "Ollama stops on the Modelfile's stop parameters", TradeOff: "none"},
		Sampling:      Change{Change: "set options.temperature 0 and options.seed, and check PARAMETER lines in the Modelfile (ollama show --modelfile)", Why: "Modelfile parameters apply when the request leaves them out", TradeOff: "none"},
		RepeatPenalty: "PARAMETER repeat_penalty 1.1 in the Modelfile (or options.repeat_penalty)",
		Quantize:      Change{Change: "a q4_K_M tag of the model; check /api/ps size_vram = size (no CPU offload)", Why: "fewer bytes per token; partial CPU offload is slow", TradeOff: "accuracy vs size"},
		Cap:           "OLLAMA_NUM_PARALLEL=%s",
		// 503 past the queue (envconfig/config.go); no /metrics counts it
		Admission: Admission{Flag: "OLLAMA_MAX_QUEUE", Rejects: "HTTP 503", Default: "512"},
		MaxLen:    "OLLAMA_CONTEXT_LENGTH=%s",
		FP8KV:     Change{Change: "OLLAMA_KV_CACHE_TYPE=q8_0 (with OLLAMA_FLASH_ATTENTION=1)", Why: "halves the KV cache", TradeOff: "small accuracy cost"},
		ShrinkKV:  Change{Change: "OLLAMA_CONTEXT_LENGTH=8192 (or num_ctx lower), OLLAMA_NUM_PARALLEL=1", Why: "the KV grows with context × parallel", TradeOff: "shorter context, less concurrency"},
		Prefill: func(int) Change {
			return Change{Change: "num_batch 1024 (request option or Modelfile PARAMETER)", Why: "default 512 prompt tokens per batch", TradeOff: "more VRAM"}
		},
		GrowContext: Change{Change: "OLLAMA_CONTEXT_LENGTH higher (or num_ctx per request)", Why: "the allocated context is too small", TradeOff: "more VRAM"},
	},
	Metrics: ollamaMetrics,
	Logs:    ollamaLogs,
	// /api/ps lists the loaded models only (server/routes.go PsHandler).
	Idle: "Ollama has no model loaded (/api/ps lists none): it loads one on the next request and unloads it after OLLAMA_KEEP_ALIVE (5 m) idle",
	Process: Process{Programs: []string{"ollama", "ollama_llama_server"}, Serves: []string{"ollama serve"},
		Host: "127.0.0.1", HostEnv: "OLLAMA_HOST",
		// envconfig.Models: OLLAMA_MODELS, else ~/.ollama/models (the
		// Linux service's HOME is /usr/share/ollama).
		Store: ModelStore{Env: []EnvDir{{"OLLAMA_MODELS", ""}}, Home: ".ollama/models", What: "Ollama models"}},
	Health: Health{Route: "/", Status: 503, BodyHas: "loading", Means: model.HealthLoading, Why: "loading (503)"},
	// No tokenize route (api/types.go).
	Probe: Probe{Identity: model.Ollama, Template: model.Ollama, Defaults: model.Ollama},
}

var ollamaMetrics = []MetricSource{
	absent(string(model.TTFT), "not exposed (per request prompt_eval_duration)"),
	absent(string(model.TPOT), "eval_duration / eval_count per request"),
	absent(string(model.E2E), "total_duration per request"),
	absent(string(model.Running), "not exposed (/api/ps lists loaded models only)"),
	absent(string(model.KVUsage), "not exposed (size_vram/size is the offload ratio)"),
}

// ollamaLogs are its log lines, most specific first (LOG-PATTERNS.md).
var ollamaLogs = []LogLine{
	{ID: "ollama_request", Sev: info, Category: "stats", Needle: "[GIN] ",
		Regex:   `\[GIN\] \d{4}/\d\d/\d\d - \d\d:\d\d:\d\d \|\s*(?P<status>\d{3})\s*\|\s*(?P<latency>\S+)\s*\|\s*(?P<client>\S*)\s*\|\s*(?P<method>[A-Z]+)\s+"(?P<path>[^"]*)"`,
		Title:   "Ollama {method} {path}: {status} in {latency}",
		Meaning: "Ollama's (gin) access log line, one per HTTP request"},
	{ID: "ollama_system_memory", Finding: "ggml_oom", Sev: crit, Category: "memory", Needle: "model requires more system memory",
		Regex:   `model requires more system memory(?: \((?P<needed>[^)]+)\) than is available \((?P<available>[^)]+)\)| than is currently available)`,
		Title:   "Ollama: not enough system memory for the model",
		Meaning: "host RAM is short (Ollama ≤ v0.2x): free RAM or pick a smaller model"},
	{ID: "ollama_runner_oom", Finding: "ggml_oom", Sev: crit, Category: "memory", Needle: "llama-server reported out-of-memory during startup",
		Regex:   `llama-server reported out-of-memory during startup: (?P<detail>.*)`,
		Title:   "Ollama: model runner out of memory at start",
		Meaning: "lower num_ctx / num_gpu or pick a smaller quantisation"},
	{ID: "go_address_in_use", Finding: "startup_port_in_use", Sev: crit, Category: "availability", Needle: "bind: address already in use",
		Regex:   `listen tcp (?P<host>\S*):(?P<port>\d+): bind: address already in use`,
		Title:   "port {port} already in use",
		Meaning: "another process (often another ollama serve) holds the port: stop it or set OLLAMA_HOST"},
	{ID: "ollama_listening", Sev: info, Category: "availability", Phase: model.PhaseReady, Needle: "Listening on ",
		Regex: `Listening on (?P<address>\S+) \(version (?P<version>[^)]+)\)`,
		Title: "Ollama {version} listening on {address}", Meaning: "the server is up"},
	{ID: "ollama_default_context", Sev: info, Category: "config", Needle: "vram-based default context",
		Regex: `vram-based default context.*?total_vram=(?P<total_vram>\S+).*?default_num_ctx=(?P<default_num_ctx>\d+)`,
		Title: "Ollama default context {default_num_ctx} tokens ({total_vram} VRAM)", Meaning: "num_ctx used when a request does not set one"},
	{ID: "ollama_runner_started", Sev: info, Category: "availability", Needle: "llama-server started in|llama runner started in",
		Regex: `(?:llama-server|llama runner) started in (?P<seconds>[\d.]+) seconds`,
		Title: "Ollama model runner started in {seconds} s", Meaning: "a model was loaded"},
	{ID: "ollama_server_config", Sev: info, Category: "lifecycle", Phase: model.PhaseStart, Needle: `msg="server config"`,
		Regex: `msg="server config" env="(?P<args>map\[.*\])"`,
		Title: "Ollama starting (server config)", Meaning: "Ollama's first line: a new process, and the OLLAMA_* settings this run was started with (the runs view compares them)"},
}
