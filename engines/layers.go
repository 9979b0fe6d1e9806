package engines

import "strings"

// Role is what an endpoint is in a serving stack. An engine computes; the
// other roles stand in front of engines or beside them, and llmtop judges
// none of them yet: an endpoint classified into one of them is shown as
// what it is, "not yet judged", and its numbers are never read as an
// engine's (issue 26).
type Role string

const (
	// RoleEngine computes tokens: every Spec in this package.
	RoleEngine Role = "engine"
	// RoleRouter is a router or gateway that picks an engine per request
	// (vLLM production-stack router, Dynamo frontend, llm-d's endpoint
	// picker, SGLang's model gateway).
	RoleRouter Role = "router"
	// RoleKVCache is a KV cache layer that engines store to and load
	// from (LMCache).
	RoleKVCache Role = "kv-cache"
	// RoleProxy is an API proxy in front of providers and engines
	// (LiteLLM).
	RoleProxy Role = "proxy"
)

// Role of an engine's Spec: every Spec is an engine; the layers in front of
// or beside engines are Layers.
func (s *Spec) Role() Role { return RoleEngine }

// Layer is one serving system that is not an engine: what it is, and the
// metric families that give it away. Detection classifies an endpoint
// against every Layer before it trusts an engine prefix, because some
// layers reuse engine names (the production-stack router serves vllm:
// gauges of its own).
type Layer struct {
	ID   string
	Name string
	Role Role
	// Prefixes are metric-name prefixes only this layer serves.
	Prefixes []string
	// Marks are families only this layer serves, though they carry an
	// engine's prefix.
	Marks []string
	// Shadow, when set, is the engine names the layer reuses for numbers
	// of its own, told apart by their labels.
	Shadow *Shadow
	// Deprecated are families the layer emits under an old name beside
	// the current one, by prefix: old prefix → current prefix (each old
	// family's twin is the same name under the current prefix unless
	// Renamed says otherwise). A family whose twin is present is counted
	// once, as the twin.
	Deprecated map[string]string
	// Renamed are old families whose twin is not a plain prefix swap.
	Renamed map[string]string
	// Beside is true for a layer whose families appear on an engine's own
	// endpoint (LMCache as vLLM's KV connector): with an engine's families
	// there, the endpoint is that engine, with this layer beside it.
	Beside bool
	// Ports and MetricsPath are where it serves its metrics by default.
	Ports       []int
	MetricsPath string
	// TTFT are the histograms of the layer's own end-to-end time to first
	// token (the user's, across prefill and decode), first found read.
	TTFT []string
	// Workers are its per-worker gauges, where it serves them (nil when
	// it serves none llmtop reads).
	Workers *WorkerGauges
	// Tenants is where it counts requests by tenant (nil: it does not, "no
	// tenant source").
	Tenants *TenantSource
	// WorkerCheck is, for a router, where it says which workers it routes
	// to and whether it thinks them healthy: what to check when a worker
	// behind it gets nothing, read after the layer's name ("the vLLM
	// production-stack router's backends (…)"; "" for a layer that routes
	// nothing).
	WorkerCheck string
	// BalanceLever is, for a router, its setting that makes load count
	// beside cache overlap (or session affinity) when it picks a worker,
	// as its CLI names it ("" when it has none llmtop knows).
	BalanceLever string
	// RouterQueue is the gauge of the requests it holds in its own queue
	// before sending any to a worker, by worker_type ("" when none).
	RouterQueue string
	// Overhead is the histogram of the layer's own added latency per
	// request, nil for a layer that reports none.
	Overhead *Overhead
	// Source is where the names were read (repository, file, commit).
	Source string
	// Reads says what llmtop reads of it today.
	Reads string
}

// Overhead is how a layer reports its own added latency: the histogram,
// the seconds one of its units is, the time-to-first-token histogram it is
// compared with and whether that TTFT contains the overhead, where the
// names and units were read, and the layer's own knobs for it.
type Overhead struct {
	Name         string
	Unit         float64 // seconds per unit (0.001: milliseconds)
	TTFT         string
	TTFTIncludes bool
	// TTFTNote says when its TTFT histogram counts only some requests ("" all).
	TTFTNote string
	Source   string
	Levers   []string
}

// Shadow is a layer's reuse of an engine's metric names.
type Shadow struct {
	// Names are the engine's families the layer serves numbers of its own
	// under.
	Names []string
	// Label is on every one of the layer's series (the production-stack
	// router: server, the engine's URL).
	Label string
	// Lacks is the engine's own label the layer's series never carry
	// (vLLM's model_name).
	Lacks string
}

// NotJudged is what llmtop says of every layer today.
const NotJudged = "not yet judged: llmtop has no rules for this layer yet"

// layers is the registry of serving layers, in classification order.
var layers = []*Layer{
	&ProdStackRouter,
	&DynamoFrontend,
	&DynamoWorker,
	&EndpointPicker,
	&ModelGateway,
	&LiteLLM,
	&LMCache,
	&VLLMRouter,
}

// Layers lists the serving layers llmtop recognises.
func Layers() []*Layer { return layers }

// LayerOf returns a layer by ID (nil when unknown).
func LayerOf(id string) *Layer {
	for _, l := range layers {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// Twin is the current family a deprecated one stands for ("" when name is
// not one of the layer's deprecated families).
func (l *Layer) Twin(name string) string {
	if t, ok := l.Renamed[name]; ok {
		return t
	}
	for old, cur := range l.Deprecated {
		if strings.HasPrefix(name, old) {
			return cur + strings.TrimPrefix(name, old)
		}
	}
	return ""
}

// Owns reports whether a family name carries one of the layer's own
// prefixes or marks (deprecated prefixes included).
func (l *Layer) Owns(name string) bool {
	for _, p := range l.Prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for old := range l.Deprecated {
		if strings.HasPrefix(name, old) {
			return true
		}
	}
	for _, m := range l.Marks {
		if name == m {
			return true
		}
	}
	return false
}

// What is how the screen names an endpoint of this layer: "vLLM
// production-stack router (router)".
func (l *Layer) What() string { return l.Name + " (" + string(l.Role) + ")" }

// LayerByWhat returns the layer What names (nil when none does): how an
// endpoint's identity names its layer.
func LayerByWhat(what string) *Layer {
	for _, l := range layers {
		if l.What() == what {
			return l
		}
	}
	return nil
}

// Judged is what llmtop says it reads of the layer: its Reads, or that it
// judges none of it yet.
func (l *Layer) Judged() string {
	if l.Reads == "" || l.Reads == NotJudged {
		return NotJudged
	}
	return "llmtop reads its word " + l.Reads
}
