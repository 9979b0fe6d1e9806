package model

import (
	"cmp"
	"slices"
	"time"
)

// Bucket is one cumulative histogram bucket: Count observations ≤ UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Histogram is a cumulative distribution as an engine exposes it.
//
// Three shapes occur:
//   - buckets + sum + count: quantiles (estimated) and mean;
//   - sum + count only (llama.cpp's seconds/tokens counters, Triton's
//     duration counters): mean only;
//   - Parts: a composite whose mean is the sum of its parts' means (TGI's
//     TTFT approximation = validation + queue + prefill batch).
type Histogram struct {
	Buckets []Bucket
	Sum     float64
	Count   float64
	// Approx, when set, says the distribution is an approximation and how it
	// is made; it is shown next to the number.
	Approx string
	Parts  []Histogram
}

// Sample is one endpoint+model's state at one time, in model concepts.
// Gauges are instantaneous, Counters and Latencies cumulative since the engine
// started. A concept absent from its map is not exposed by the engine.
type Sample struct {
	Endpoint string
	Model    string
	Time     time.Time
	Source   Source
	// Engine is who printed the log line a log sample was read from (""
	// for a scrape, whose Identity says): an engine that never answered is
	// still named by its log.
	Engine        Engine
	Gauges        map[Gauge]float64
	Counters      map[Counter]float64
	Latencies     map[Latency]Histogram
	FinishReasons map[string]float64 // cumulative finished requests by reason
	// Started is when the engine process started, when it says so
	// (process_start_time_seconds); zero when unknown. It is kept out of
	// Info because it changes on every restart while Info is the
	// configuration a restart is compared by.
	Started time.Time
	// Info holds static facts worth showing or advising on, e.g. vLLM
	// cache_config_info's block_size, cache_dtype, gpu_memory_utilization,
	// num_gpu_blocks.
	Info map[string]string
	// Notes are adapter remarks about this sample (approximations, summed
	// labels), shown on the explain screen.
	Notes []string
	// Derived carries rates and distributions an outside evaluator
	// (Prometheus) computed over its window (model/derived.go); nil for a
	// direct scrape.
	Derived *Derived
	// Observations are requests that finished with this sample, timed by
	// the engine's own log lines (not cumulative: each is one request).
	Observations []Observation `json:",omitempty"`
	// Engines holds each engine's own gauges when several serve behind one
	// endpoint (vLLM data parallel); nil for one engine.
	Engines []EngineShare
	// LoRA is the engine's adapters now; nil without LoRA.
	LoRA *LoRA `json:",omitempty"`
	// From names the metric each value was read from, by concept (the
	// Gauge, Counter or Latency name: "itl" → "vllm:time_per_output_token_seconds"
	// on an older vLLM), so the diagnosis cites what was read, not what
	// the current release would publish.
	From map[string]string
}

// NewSample returns a Sample with its maps allocated.
func NewSample(endpoint, modelName string, t time.Time, src Source) Sample {
	return Sample{
		Endpoint:      endpoint,
		Model:         modelName,
		Time:          t,
		Source:        src,
		Gauges:        map[Gauge]float64{},
		Counters:      map[Counter]float64{},
		Latencies:     map[Latency]Histogram{},
		FinishReasons: map[string]float64{},
		Info:          map[string]string{},
	}
}

// Engine identifies a serving engine.
type Engine string

const (
	VLLM     Engine = "vllm"
	SGLang   Engine = "sglang"
	TGI      Engine = "tgi"
	LlamaCpp Engine = "llamacpp"
	TRTLLM   Engine = "trtllm"
	Triton   Engine = "triton"
	Ollama   Engine = "ollama"
	Unknown  Engine = ""
)

// Engines lists the supported engines.
var Engines = []Engine{VLLM, SGLang, TGI, LlamaCpp, TRTLLM, Triton, Ollama}

// Health is an endpoint's serving health as its health route says.
type Health string

const (
	HealthUp        Health = "up"        // health route 200
	HealthLoading   Health = "loading"   // 503 while loading / starting
	HealthUnhealthy Health = "unhealthy" // answers, but says it is not healthy
	HealthDown      Health = "down"      // connection refused / timeout
	HealthUnknown   Health = "unknown"
)

// ModelInfo is one served model.
type ModelInfo struct {
	ID         string `json:"id"`
	MaxContext int    `json:"max_context,omitempty"` // tokens; 0 = unknown
	// Extra carries engine-specific facts (Ollama: size_vram, expires_at…).
	Extra map[string]string `json:"extra,omitempty"`
}

// ExtraLoaded is the Extra key that says whether the engine has the model
// loaded ("true", "false"): Ollama lists what it could load (/api/tags)
// beside what it has loaded (/api/ps).
const ExtraLoaded = "loaded"

// NotLoaded reports whether the engine lists the model without having it
// loaded (Ollama after its keep-alive expired): its next request pays the
// load.
func (mi ModelInfo) NotLoaded() bool { return mi.Extra[ExtraLoaded] == "false" }

// Identity is what an endpoint says about itself.
type Identity struct {
	Engine       Engine      `json:"engine"`
	Version      string      `json:"version"`
	Models       []ModelInfo `json:"models"`
	Health       Health      `json:"health"`
	HealthDetail string      `json:"health_detail,omitempty"`
	Simulated    bool        `json:"simulated,omitempty"`
	// Role is its prefill/decode role when its metrics say (RoleFrom the
	// series that said it); empty when they do not.
	Role     PDRole `json:"role,omitempty"`
	RoleFrom string `json:"role_from,omitempty"`
	// Via names the layer the engine is served through, when one sits on
	// its endpoint beside its metrics (a Dynamo worker's system port).
	Via string `json:"via,omitempty"`
	// Layer, when set, says the endpoint is a serving layer in front of
	// engines ("vLLM production-stack router (router)"), not an engine.
	Layer string `json:"layer,omitempty"`
	// LayerDetail is what the layer says of the engines behind it, where
	// llmtop reads it ("2 servers, 1 healthy; 8 running by its count").
	LayerDetail string `json:"layer_detail,omitempty"`
	// Backends is the layer's own word on each engine it routes to, where
	// it exposes one (the production-stack router's per-server gauges);
	// nil when it does not.
	Backends []Backend `json:"backends,omitempty"`
	// RouterQueue is the requests a router holds in its own queue before
	// sending them to any engine, by the worker type it says (Dynamo's
	// frontend with --router-queue-threshold); nil when it serves none.
	RouterQueue []RouterQueued `json:"router_queue,omitempty"`
	// LoadRange is the router's own max and min load across its workers,
	// where it serves them (the Rust vllm-router, sgl-router); nil when
	// it does not.
	LoadRange *LoadRange `json:"load_range,omitempty"`
	// Overhead is a router's or proxy's own added latency per request
	// beside the time to first token it reports (Dynamo's KV router,
	// LiteLLM); for a layer that reports none, Missing says so. nil for
	// an engine.
	Overhead *RouterOverhead `json:"router_overhead,omitempty"`
	// Tenants are a proxy's own figures per tenant (LiteLLM's team, key or
	// user labels), counted since the proxy started; nil where the layer
	// labels no request by tenant ("no tenant source").
	Tenants []Tenant `json:"tenants,omitempty"`
}

// Tenant is one tenant's counts at a proxy, since it started. Kind says
// what names it ("team", "key", "user", "key hash"); TokensOK is false
// when the proxy counts no tokens by tenant.
type Tenant struct {
	Kind     string  `json:"kind"`
	Name     string  `json:"name"`
	Requests float64 `json:"requests"`
	Failed   float64 `json:"failed"`
	Tokens   float64 `json:"tokens"`
	TokensOK bool    `json:"tokens_ok,omitempty"`
}

// LoadRange is a router's max and min worker load (requests in flight),
// as it last acted on them: its cache-aware policy sets both only when it
// finds the load imbalanced and sends a request to the least loaded worker
// instead, and counts each such event (Events, a counter since it
// started). Between events the gauges hold the last range: a range is
// now's only over a window in which Events grew.
type LoadRange struct {
	Max      float64 `json:"max"`
	Min      float64 `json:"min"`
	Events   float64 `json:"events"`
	EventsOK bool    `json:"events_ok,omitempty"`
	// EventsWindow, when set, says Events counts the acts over that
	// window (read through Prometheus), not since the router started.
	EventsWindow time.Duration `json:"events_window,omitempty"`
	// ActedAt is when llmtop last saw Events grow (zero: not since it
	// started watching): the range is now's while that is recent.
	ActedAt time.Time `json:"acted_at,omitempty"`
	From    string    `json:"from,omitempty"`
}

// RouterOverhead is what a serving layer says of its own added latency.
// Means are over Window (the scrapes llmtop kept, up to a minute) or, with
// Window 0, since the layer started; a figure with no requests behind it
// is unknown (Requests or TTFTRequests 0), never zero.
type RouterOverhead struct {
	// Missing says why nothing can be read ("" when the layer reports it).
	Missing string `json:"missing,omitempty"`
	// Metric is the histogram read; Mean its seconds per request over
	// Requests requests.
	Metric   string  `json:"metric,omitempty"`
	Mean     float64 `json:"mean_s"`
	Requests float64 `json:"requests"`
	// TTFTMetric is the layer's time-to-first-token histogram it is
	// compared with; TTFTIncludes says whether that TTFT contains the
	// overhead (Dynamo's frontend TTFT does; LiteLLM's is its backend's
	// call only).
	TTFTMetric   string        `json:"ttft_metric,omitempty"`
	TTFTMean     float64       `json:"ttft_mean_s"`
	TTFTRequests float64       `json:"ttft_requests"`
	TTFTIncludes bool          `json:"ttft_includes_overhead,omitempty"`
	Window       time.Duration `json:"window,omitempty"`
	// Sum and TTFTSum are the cumulative sums (seconds) the means come
	// from, for the source's window.
	Sum     float64 `json:"-"`
	TTFTSum float64 `json:"-"`
}

// Share is the overhead's part of the user's time to first token (ok
// false when either is unknown).
func (o *RouterOverhead) Share() (share, userTTFT float64, ok bool) {
	if o == nil || o.Missing != "" || o.Requests <= 0 || o.TTFTRequests <= 0 {
		return 0, 0, false
	}
	userTTFT = o.TTFTMean
	if !o.TTFTIncludes {
		userTTFT += o.Mean
	}
	if userTTFT <= 0 {
		return 0, 0, false
	}
	return o.Mean / userTTFT, userTTFT, true
}

// RouterQueued is one of a router's own queues: the requests it holds
// for a worker type ("prefill", "decode"; "" when it does not say).
type RouterQueued struct {
	WorkerType string  `json:"worker_type,omitempty"`
	Pending    float64 `json:"pending"`
}

// Backend is what a router reports of one engine behind it. Each figure
// is known only when its OK flag is set: a gauge the router does not
// serve is unknown, not zero.
type Backend struct {
	// Server is the engine's URL as the router names it.
	Server string `json:"server"`
	// Healthy is the router's health gauge for it (1 healthy, 0 not).
	Healthy   float64 `json:"healthy"`
	HealthyOK bool    `json:"healthy_ok,omitempty"`
	// QPS is the router's sliding-window rate of requests sent to it.
	QPS   float64 `json:"qps"`
	QPSOK bool    `json:"qps_ok,omitempty"`
	// Running is the router's count of its requests in flight there.
	Running   float64 `json:"running"`
	RunningOK bool    `json:"running_ok,omitempty"`
	// Breaker is its circuit breaker's state ("closed", "open",
	// "half-open"; "" when the router serves none).
	Breaker string `json:"breaker,omitempty"`
	// Failures are the breaker's consecutive failures for it.
	Failures   float64 `json:"failures,omitempty"`
	FailuresOK bool    `json:"failures_ok,omitempty"`
	// From names the router's gauges these were read from.
	From string `json:"from,omitempty"`
}

// ScrapeErrKind classifies a failed scrape so the UI and diagnosis can say
// what the user can do.
type ScrapeErrKind string

const (
	ErrNone        ScrapeErrKind = ""
	ErrRefused     ScrapeErrKind = "refused"     // connection refused: engine down
	ErrTimeout     ScrapeErrKind = "timeout"     // accepted, never answered in time
	ErrAuth        ScrapeErrKind = "auth"        // 401/403
	ErrNotFound    ScrapeErrKind = "not_found"   // 404 on the metrics route
	ErrServer      ScrapeErrKind = "server"      // 5xx
	ErrMalformed   ScrapeErrKind = "malformed"   // body is not what we expected
	ErrTooLarge    ScrapeErrKind = "too_large"   // body over the read cap
	ErrStalled     ScrapeErrKind = "stalled"     // answered, then the body stopped before its end
	ErrRedirect    ScrapeErrKind = "redirect"    // a redirect loop, or to another host (not followed)
	ErrUnreachable ScrapeErrKind = "unreachable" // DNS, no route, other network errors
)

// Scrape is one poll of one endpoint: what it said about itself and its
// metrics, or why it could not be read. Sources deliver these; the Store and
// the UI consume them. Endpoint is the endpoint's ID (its base URL).
type Scrape struct {
	Endpoint string
	Time     time.Time
	Took     time.Duration
	Identity Identity
	Samples  []Sample
	// Err is set when the metrics could not be read (Identity may still be
	// valid); ErrKind classifies it and Hint says what to do about it.
	Err     string
	ErrKind ScrapeErrKind
	Hint    string
}

// OK reports whether the scrape produced metrics.
func (s Scrape) OK() bool { return s.Err == "" }

// SortBuckets orders buckets by upper bound; adapters call it after parsing.
func SortBuckets(b []Bucket) {
	// slices, not sort.Slice: no reflection, nothing allocated
	slices.SortFunc(b, func(x, y Bucket) int { return cmp.Compare(x.UpperBound, y.UpperBound) })
}
