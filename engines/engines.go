// Package engines is everything llmtop knows about each serving system, one
// file per system: how to recognise it, where it publishes each concept (with
// the releases that use each name), how its series aggregate, its display
// name, its metrics route, the flags the advice names, what the fleet source
// asks Prometheus and what `llmtop rules` alerts on. The adapters
// (sources/engine), the fleet source (sources/prometheus), the alert rules
// (exporter), the diagnosis's actions and the screen read it; a test
// (spelling_test.go) fails when an engine's metric name or flag is spelled
// anywhere else.
//
// Adding an engine: a file here with its Spec, and one line in all.
//
// The package is pure data over model: it does no I/O.
package engines

import (
	"fmt"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// all is the registry: one line per serving system, in detection order
// (a more specific signature first).
var all = []*Spec{
	&VLLM,
	&SGLang,
	&TGI,
	&LlamaCpp,
	&TRTLLM,
	&Triton,
	&Ollama,
	&RayServe,
	&KServe,
	&NIM,
	&SGLangGateway,
}

// Spec is one serving system.
type Spec struct {
	ID model.Engine
	// Name is how the screen, the advice and the notes name it.
	Name string
	// FlagAliases are its flags spelled two ways or more (llama-server's
	// short and long forms): a change is matched against any of them.
	FlagAliases [][]string
	// Aliases are other spellings --engine accepts for it.
	Aliases []string
	// Prefixes are the metric-name prefixes that identify it on a metrics
	// route (the first is its own family prefix: "answers, but without any
	// vllm: metrics").
	Prefixes []string
	// Unread are the families it serves that llmtop reads nowhere: the
	// scrape's parser skips their samples (Unread, unread.go).
	Unread []string
	// Ports are the ports it listens on by default (the first its own;
	// nil when unknown): a local process whose command line names no
	// port is this endpoint's engine only on one of them.
	Ports []int
	// PortNote says where the default port differs ("80 in the Docker
	// image").
	PortNote string
	// MetricsPath is its default metrics route ("" when it has none).
	MetricsPath string
	// Hint404 says what to do when the metrics route is missing;
	// HintEmpty when it answers without the engine's metrics ("" =
	// Hint404).
	Hint404, HintEmpty string
	// Idle says why an engine that answers has no model's numbers to
	// show ("" when it always has them while up): Ollama loads a model on
	// its first request and unloads it when idle.
	Idle string
	// ModelLabel names the served model on its metrics ("" none).
	ModelLabel string
	// DPLabel is the label that tells its data-parallel engines apart on
	// one endpoint ("" when it has none).
	DPLabel string
	// KVAgg is how a KV-usage ratio over several series of one endpoint
	// aggregates, in PromQL's words: "max" (the fullest pool: one engine
	// at 99.9 % preempts while the mean reads 50 %) or "avg" (ranks that
	// share one pool report the same value). The adapter, the fleet
	// source and the alert rules all read it.
	KVAgg string
	// TotalMatch, when set, is the label matcher that selects a gauge's
	// total where the engine writes a breakdown beside it: SGLang writes
	// each queue gauge (running, waiting, the P/D queues) as a total under
	// priority="" and, with priority scheduling, again by priority
	// (metrics_collector.py _log_gauge_queue_count). The fleet source and
	// the alert rules add it to every gauge selector; the adapter reads
	// the same series.
	TotalMatch string
	// Metrics are its concepts, newest name first.
	Metrics []MetricSource
	// Fleet is what the Prometheus source asks for it (nil: not read from
	// Prometheus).
	Fleet *Fleet
	// Rules, when set, get alert rules written for it (`llmtop rules`);
	// KVNote then says when its KV expression is an approximation.
	Rules  bool
	KVNote string
	// Levers are the flags the advice names.
	Levers Levers
	// Probe names its own routes the behaviour probe reads.
	Probe Probe
	// Process is how it runs on a machine: what local discovery and
	// llmtop run recognise it by, and where it listens by default.
	Process Process
	// Health is its health route and what a failure there means.
	Health Health
	// OwnedBy are the owned_by values its /v1/models cards carry.
	OwnedBy []string
	// Logs are the lines of its log llmtop knows (logs.go), most specific
	// first.
	Logs []LogLine
	// Like is the engine whose adapter reads this one's metrics (a serving
	// layer that re-exports an engine's metrics); Unknown for an engine of
	// its own. Reexport is the prefix the layer puts before Like's names,
	// and DPLabel names the layer's replicas, each
	// read as one of Like's data-parallel engines.
	Like     model.Engine
	Reexport string
	// Strips is the prefix of Like's names the layer drops ("" when it
	// keeps them): NVIDIA NIM serves vLLM's names without vllm:, SGLang's
	// gateway re-exposes sglang:token_usage as sglang_token_usage
	// (Reexport "sglang_", Strips "sglang:").
	Strips string
	// Own are a wrapping layer's families beside Like's, read as one
	// gauge or counter each (summed over the model's series); they are
	// also in Metrics. NIM's cap on running requests and its failures.
	Own []MetricSource
	// KVSentSide: its KV hand-overs are observed where they are sent (the
	// prefill instance), so a decode instance counts none of them.
	KVSentSide bool
	// RoleLabel, when set, is the label whose value says an engine's
	// prefill/decode role (KServe's llm_isvc_role).
	RoleLabel string
	// MetricsAlways: it always serves its metrics route on its API port,
	// so a 404 there is another port or route, or a proxy in front.
	MetricsAlways bool
	// StatsOff is the flag that keeps its metrics route answering
	// without its own metrics ("" none); Levers.StatsOn undoes it.
	StatsOff string
	// StepBatchNewest, when set, says its batch per step
	// (model.BatchPerStep) is the requests scheduled in the newest
	// iteration, not an average, and names where it is read.
	StepBatchNewest string
	// Slots: its concurrency cap is a fixed set of slots, each holding its
	// request's context in its share of one -c pool (llama-server): a
	// request waits only when no slot is free, so the busy slots are the
	// cap; a slot never gives its KV up to another request.
	Slots bool
	// Runs, when set, is the engine that runs under this server and
	// writes the log lines of its own (Triton runs TensorRT-LLM;
	// Ollama's runner is llama.cpp and logs as it): a log that names it
	// is this server's.
	Runs model.Engine
	// Preemption is what it does with a running request its KV pool
	// cannot hold.
	Preemption Preemption
}

// Preemption is what an engine does when its KV pool cannot hold every
// running request's growing context.
type Preemption struct {
	// Counted names the requests it evicts, as its counter counts them
	// (vLLM "preemptions", SGLang "retractions"); "" where it counts none
	// the adapters read.
	Counted string
	// Never: it never evicts a running request; what does not fit waits
	// or is rejected (llama-server's slots).
	Never bool
}

// HasSlots reports whether an engine's concurrency cap is slots
// (Spec.Slots).
func HasSlots(e model.Engine) bool {
	s := Of(e)
	return s != nil && s.Slots
}

// PreemptionOf is an engine's Preemption (zero when unknown).
func PreemptionOf(e model.Engine) Preemption {
	if s := Of(e); s != nil {
		return s.Preemption
	}
	return Preemption{}
}

// Wrapped is how a wrapping layer serves one of Like's names: Strips cut,
// Reexport put before.
func (s *Spec) Wrapped(name string) string { return wrapName(s.Reexport, s.Strips, name) }

// wrapName is name (or a formula of names) as a layer serves it that puts
// p before each name and cuts strip off it.
func wrapName(p, strip, name string) string {
	if strip == "" {
		return p + name
	}
	return strings.ReplaceAll(name, strip, p)
}

// Unwrapped is Like's name for one a wrapping layer serves, and whether
// the name is one of the layer's re-exports.
func (s *Spec) Unwrapped(name string) (string, bool) {
	if !strings.HasPrefix(name, s.Reexport) {
		return name, false
	}
	return s.Strips + strings.TrimPrefix(name, s.Reexport), true
}

// Fleet says which concepts the fleet source reads through PromQL; the
// names come from Metrics.
type Fleet struct {
	// Present is the gauge every target of the engine serves: its series
	// are how the targets are found.
	Present model.Gauge
	Gauges  []model.Gauge
	// Counters map a Counter to the concept that names it (vLLM's finished
	// requests are its FinishReasons counter, summed).
	Counters map[model.Counter]string
	// Ratios map a ratio Gauge to its numerator and denominator concepts.
	Ratios map[model.Gauge][2]string
	Hists  []model.Latency
	// Extra are counters Metrics does not list (TGI's token counts are
	// histogram sums), by their one name.
	Extra map[model.Counter]string
	// HistSums are counters Metrics lists under a histogram's name, read
	// as that histogram's sum (the bytes KV transfers moved).
	HistSums []model.Counter
}

// Levers are an engine's flags for the advice, each a format with one %s
// for the value ("N" when the advice cannot fill it in). Empty: the engine
// has no such flag.
type Levers struct {
	// Cap bounds the running batch.
	Cap string
	// MaxLen caps the context length.
	MaxLen string
	// MemFraction is the KV-pool memory knob: its flag and default (0
	// unknown).
	MemFraction        string
	MemFractionDefault float64
	// MemFractionKey is the name its configuration reports the share it
	// serves with under (vLLM's cache_config_info gpu_memory_utilization),
	// so an advice lowers it from what it is; "" where it reports none.
	MemFractionKey string
	// CapDefaultMax is the largest value Cap takes by default (vLLM: 1024
	// on GPUs of 70 GiB or more other than A100, else 256): a floor for
	// advice that must not go under the cap when the cap is not exposed.
	CapDefaultMax int
	// FP8KV quantises the KV cache.
	FP8KV Change
	// Chunked bounds the prefill work per step (%s the tokens).
	Chunked Change
	// DataParallel adds an engine behind the same server (%d the count).
	DataParallel string
	// Front gives the engine's HTTP front-end (API server, tokenizer,
	// detokenizer) more CPU: more processes or threads.
	Front Change
	// FrontRunsModel: the process that holds the port also runs the
	// model (llama-server decodes in itself), so its busiest thread is the
	// model's compute, not a saturated HTTP front end.
	FrontRunsModel bool
	// MaxLoRAs is how many LoRA adapters one batch may hold (%s the count).
	MaxLoRAs string
	// StepBudget bounds the tokens one engine step carries (%s the
	// tokens).
	StepBudget string
	// ChunkedDefault, when set, says it chunks prefill by default (vLLM's
	// V1 engine), so its StepBudget is the prefill lever.
	ChunkedDefault ChunkedDefault
	// BudgetOverCap: it refuses to start with a StepBudget below its Cap
	// (an advice that lowers the budget must not go under the cap).
	BudgetOverCap bool
	// Prefill gives prompts more tokens per prefill step, for a mean
	// prompt of about n tokens (nil: no such lever).
	Prefill func(n int) Change
	// ActivationRoom makes room for activations outside the KV pool
	// after a CUDA out-of-memory error (vLLM's is computed from the share
	// it serves with: diagnosis/rules_events.go).
	ActivationRoom Change
	// NoGraphs turns CUDA graph capture off; GraphSizes captures fewer.
	NoGraphs, GraphSizes string
	// ShrinkKV allocates a smaller KV cache (context and parallel slots);
	// GrowContext gives a request more of it; Offload keeps fewer layers
	// on the GPU.
	ShrinkKV, GrowContext, Offload Change
	// DraftTokens sets how many tokens a speculative draft proposes (%d
	// the count).
	DraftTokens string
	// Speculate turns speculative decoding on; SpeculateLess drafts fewer
	// tokens (or turns it off) when drafts are rejected.
	Speculate, SpeculateLess Change
	// Warmup is how to send it traffic only once it is warm after a start.
	Warmup Change
	// Threads sets the CPU threads that decode (a CPU-only engine).
	Threads Change
	// EnableMetrics is how to make it serve the metrics llmtop reads.
	EnableMetrics Change
	// CapPool is the concurrency cap that keeps the KV pool as it is
	// (llama-server: -kvu keeps one pool of -c tokens for all slots); its
	// format takes the cap (%d) and the pool (%s: its size, or "as it
	// is").
	CapPool Change
	// Quantize serves the model's weights in fewer bytes.
	Quantize Change
	// HostBuffers are the flags that size its buffers in host memory
	// (CPU KV offload, swap, weight offload).
	HostBuffers string
	// Sampling, Template, Tokenizer and Stop are its remedies for what the
	// behaviour probe finds: answers that differ for one greedy request,
	// a chat template or tokenizer that is not the model's own, answers
	// that run past the turn's end. RepeatPenalty discourages repeated
	// tokens ("" when the engine has none of its own: per request).
	Sampling, Template, Tokenizer, Stop Change
	RepeatPenalty                       string
	// MoreGPUs are the other flags that ask for more GPUs (short forms of
	// DataParallel, pipeline parallelism): llmtop run will not apply them.
	MoreGPUs []string
	// TensorParallel are the flags that set the tensor-parallel degree
	// (read from the engine's command line, not advised).
	TensorParallel []string
	// StatsOn turns its own metrics back on where StatsOff turned them
	// off.
	StatsOn Change
	// APIKey is the flag that makes it ask every request for a key, the
	// scrape of its metrics route included ("" none).
	APIKey string
	// Admission is its limit on requests admitted at once, past which it
	// turns requests away instead of queueing them (zero: it has none).
	Admission Admission
	// Precision are the flags whose value names a number format the GPU
	// must compute in (weights dtype, quantisation, KV-cache dtype), read
	// from the engine's command line to judge them against the GPU's
	// compute capability.
	Precision []string
}

// ChunkedDefault is chunked prefill on by default: Off is the flag that
// turns it off, Before the lever that turns it on in a release from before
// it was the default (%s the step budget), Budget the default step budget
// in words.
type ChunkedDefault struct {
	Off, Before, Budget string
}

// Admission is an engine's admission limit: the flag (or environment
// variable) that sets it, what a client gets past it, and its default.
type Admission struct {
	Flag, Rejects, Default string
}

// Probe names an engine's own routes that the behaviour probe reads beyond
// the OpenAI API, each by the server whose request and answer shapes it
// shares (sources/behaviour/routes.go speaks each shape): an engine that
// copies vLLM's /tokenize says VLLM there and needs no code. Unknown: the
// engine has no such route.
type Probe struct {
	// Identity is where the model's file, digest or sha is read
	// (llama.cpp GET /props, Ollama POST /api/show and GET /api/tags, TGI
	// GET /info).
	Identity model.Engine
	// Template is the route that renders the chat template (vLLM POST
	// /tokenize with messages, then /detokenize; TGI /chat_tokenize;
	// llama.cpp /apply-template; Ollama /api/show's template source).
	Template model.Engine
	// Tokenize is POST /tokenize, text to token ids (vLLM {prompt}, TGI
	// {inputs}, llama.cpp {content}).
	Tokenize model.Engine
	// Defaults is where the server's generation defaults are read
	// (llama.cpp /props, Ollama /api/show); DefaultsNote says where they
	// are instead, for an engine that does not serve them.
	Defaults     model.Engine
	DefaultsNote string
	// RawPrompt: /v1/completions takes add_special_tokens=false, so the
	// probe's rendered prompt is sent as it is (vLLM).
	RawPrompt bool
}

// Process is how an engine runs on a machine.
type Process struct {
	// Programs are the executables or process titles that are this
	// engine (a name ending in "*" is a prefix: llama-server-cuda).
	Programs []string
	// Modules are the Python packages that are it (python -m vllm…).
	Modules []string
	// Serves are the command lines that start its server, for llmtop run:
	// a program, with its subcommand when it has several ("ollama
	// serve"), or "-m pkg" for an interpreter running one of the
	// package's modules (python -m sglang.launch_server).
	Serves []string
	// Host is where it binds by default; PortFlags and HostFlags set the
	// port and the address (the first of each is the one llmtop names);
	// HostEnv, when set, is the environment variable that sets host:port
	// (OLLAMA_HOST). The default port is Ports[0].
	Host                 string
	PortFlags, HostFlags []string
	HostEnv              string
	// Store is where it keeps its models (zero: HFStore), for the free
	// disk under them.
	Store ModelStore
}

// ModelStore is where an engine keeps its models: the directory a flag
// names, else the directory of a model file on its command line, else an
// environment variable's, else Home under $HOME.
type ModelStore struct {
	// Flags name the directory on the command line.
	Flags []string
	// FileSuffix: an argument ending in it is the model file itself, on
	// the disk of its directory (llama.cpp's .gguf).
	FileSuffix string
	// Env are the variables that name it, first set wins, each with the
	// subdirectory under it (HF_HOME's hub).
	Env []EnvDir
	// Home is its default under $HOME.
	Home string
	// What is how the screen names it.
	What string
}

// EnvDir is a variable naming a directory, and the subdirectory under it.
type EnvDir struct{ Var, Sub string }

// HFStore is the Hugging Face hub cache the Python engines download into
// (huggingface_hub's constants: HF_HUB_CACHE, its old name
// HUGGINGFACE_HUB_CACHE, HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub,
// ~/.cache/huggingface/hub); vLLM and SGLang take --download-dir for it.
var HFStore = ModelStore{Flags: []string{"--download-dir"},
	Env:  []EnvDir{{"HF_HUB_CACHE", ""}, {"HUGGINGFACE_HUB_CACHE", ""}, {"HF_HOME", "hub"}, {"XDG_CACHE_HOME", "huggingface/hub"}},
	Home: ".cache/huggingface/hub", What: "model cache"}

// StoreOf is where engine e keeps its models (HFStore when unknown).
func StoreOf(e model.Engine) ModelStore {
	if s := Of(e); s != nil && s.Process.Store.What != "" {
		return s.Process.Store
	}
	return HFStore
}

// Health is an engine's health route and what a failure there means: a
// failure answered with Status (0: any status) whose body holds BodyHas
// ("" any body) is Means, said as Why; any other failure is unhealthy.
type Health struct {
	// Unhealthy says what an unhealthy answer means for this engine ("" the
	// diagnosis's generic words).
	Unhealthy string
	Route     string
	Status    int
	BodyHas   string
	Means     model.Health
	Why       string
}

// DefaultHealth is what an engine without a Health of its own (or an
// unknown one) is asked: /health, a 503 that says it is loading is
// loading.
var DefaultHealth = Health{Route: "/health", Status: 503, BodyHas: "loading", Means: model.HealthLoading, Why: "loading (503)"}

// HealthOf is an engine's Health, DefaultHealth when it has none.
func HealthOf(e model.Engine) Health {
	if s := Of(e); s != nil && s.Health.Route != "" {
		return s.Health
	}
	return DefaultHealth
}

// ByProgram is the engine a program or process title is (Unknown none).
func ByProgram(name string) model.Engine {
	name = strings.ToLower(name)
	for _, s := range all {
		for _, p := range s.Process.Programs {
			if name == p || strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
				return s.ID
			}
		}
	}
	return model.Unknown
}

// ByModule is the engine a Python package is (Unknown none).
func ByModule(pkg string) model.Engine {
	for _, s := range all {
		for _, m := range s.Process.Modules {
			if pkg == m {
				return s.ID
			}
		}
	}
	return model.Unknown
}

// ByOwner is the engine whose /v1/models cards say owned_by (Unknown none).
func ByOwner(owner string) model.Engine {
	owner = strings.ToLower(owner)
	for _, s := range all {
		for _, o := range s.OwnedBy {
			if owner == o {
				return s.ID
			}
		}
	}
	return model.Unknown
}

// Change is one flag change with what it does and costs.
type Change struct {
	Change, Why, TradeOff string
}

// Fill puts v into a lever's format.
func Fill(format, v string) string {
	if !strings.Contains(format, "%") {
		return format
	}
	return fmt.Sprintf(format, v)
}

// All lists the registered serving systems, in detection order.
func All() []*Spec { return all }

// IDs lists the registered engines' identifiers.
func IDs() []model.Engine {
	out := make([]model.Engine, len(all))
	for i, s := range all {
		out[i] = s.ID
	}
	return out
}

// Of returns an engine's Spec (nil when unknown).
func Of(e model.Engine) *Spec {
	for _, s := range all {
		if s.ID == e {
			return s
		}
	}
	return nil
}

// Parse reads --engine: an engine's ID or one of its aliases, any case.
func Parse(s string) (model.Engine, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, e := range all {
		if s == string(e.ID) {
			return e.ID, true
		}
		for _, a := range e.Aliases {
			if s == a {
				return e.ID, true
			}
		}
	}
	return model.Unknown, false
}

// Name is how an engine is named to a person; "this engine" when unknown.
func Name(e model.Engine) string {
	if s := Of(e); s != nil {
		return s.Name
	}
	return "this engine"
}

// Prefix is an engine's own metric family prefix ("" none).
func (s *Spec) Prefix() string {
	if len(s.Prefixes) == 0 {
		return ""
	}
	return s.Prefixes[0]
}

// EmptyHint is the hint for a metrics route that answers without the
// engine's metrics.
func (s *Spec) EmptyHint() string {
	if s.HintEmpty != "" {
		return s.HintEmpty
	}
	return s.Hint404
}

// RuleBy is what the alert rules and the fleet source group an engine's
// series by: the target and, when its metrics name one, the model.
func (s *Spec) RuleBy() []string {
	ls := []string{"job", "instance"}
	if s.ModelLabel != "" {
		ls = append(ls, s.ModelLabel)
	}
	return ls
}

// ByMetricName returns the engine whose metric prefix a name carries
// (the longest prefix wins), nil when none.
func ByMetricName(name string) *Spec {
	var best *Spec
	bestLen := 0
	for _, s := range all {
		for _, p := range s.Prefixes {
			if strings.HasPrefix(name, p) && len(p) > bestLen {
				best, bestLen = s, len(p)
			}
		}
	}
	return best
}

// PrefixList is every engine's own prefix, for a message ("vllm:, sglang:,
// tgi_ …").
func PrefixList() string {
	var ps []string
	for _, s := range all {
		if p := s.Prefix(); p != "" {
			ps = append(ps, p)
		}
	}
	return strings.Join(ps, ", ")
}
