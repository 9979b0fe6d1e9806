package engines

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// WorkerGauges are a router's per-worker gauges: its own word on each
// engine it routes to. Each list names the family under its current name
// first, then under the names older releases served (first found is read).
type WorkerGauges struct {
	// Labels name the worker on each series, first found read.
	Labels []string
	// Health is 1 healthy, 0 not.
	Health []string
	// Running is the router's count of its requests in flight there.
	Running []string
	// QPS is the router's sliding-window rate of requests sent there.
	QPS []string
	// Breaker is the worker's circuit breaker, 0 closed, 1 open, 2
	// half-open (the routers' HELP text).
	Breaker []string
	// Failures are the breaker's consecutive failures for the worker.
	Failures []string
	// MaxLoad and MinLoad are the router's own load range across its
	// workers, unlabelled; LoadEvents counts the times it acted on it.
	// The range is set only when the router acts (its cache-aware
	// policy found the load imbalanced and sent the request to the least
	// loaded worker instead): between events the gauges keep the last
	// range, so they are read only over a window in which LoadEvents
	// grew.
	MaxLoad, MinLoad, LoadEvents []string
	// EjectLever is the router's own settings for when it takes a worker
	// out (its circuit breaker and health check), as its CLI names them.
	EjectLever string
}

// The worker label of each router.
const (
	// SMGWorkerLabel is the gateway's worker label (its URL).
	SMGWorkerLabel = "worker"
)

// SGLang's model gateway (lightseekorg/smg model_gateway/src/observability/
// metrics.rs @73da68ca, the gateway's home since it left the SGLang tree;
// the same names in sgl-project/sglang sgl-model-gateway @d315eb72), and
// the names before the smg_ rename (sgl-project/sglang sgl-router/src/
// metrics.rs @06261b2a: sgl_router_*, the names vllm-router forked).
const (
	SMGHealth           = "smg_worker_health"
	SMGRunning          = "smg_worker_requests_active"
	SMGBreaker          = "smg_worker_cb_state"
	SMGFailures         = "smg_worker_cb_consecutive_failures"
	SGLRouterHealth     = "sgl_router_worker_health"
	SGLRouterRunning    = "sgl_router_running_requests"
	SGLRouterBreaker    = "sgl_router_cb_state"
	SGLRouterMaxLoad    = "sgl_router_max_load"
	SGLRouterMinLoad    = "sgl_router_min_load"
	SGLRouterLoadEvents = "sgl_router_load_balancing_events_total"
)

// The Rust vllm-router's load range and its worker load (src/metrics.rs;
// docs/metrics.md: "Max/min load across all workers", "Current in-flight
// request count per worker").
const (
	VLLMRouterMaxLoad    = "vllm_router_max_load"
	VLLMRouterMinLoad    = "vllm_router_min_load"
	VLLMRouterLoadEvents = "vllm_router_load_balancing_events_total"
	VLLMRouterWorkerLoad = "vllm_router_worker_load"
)

// routerEjectLever is the circuit-breaker and health-check flags the SGLang
// gateway and vllm-router share (smg model_gateway/src/main.rs @73da68ca,
// "Circuit Breaker" and "Health Checks"; vllm-project/router src/main.rs
// @03e9af5c), with their defaults.
const routerEjectLever = "--cb-failure-threshold (default 10 failures within --cb-window-duration-secs 120) and --cb-timeout-duration-secs " +
	"(60 s open before it tries the worker again); --health-failure-threshold (3) and --health-check-timeout-secs (5) for its health check " +
	"of --health-check-endpoint (/health)"

// routerBalanceLever is the cache-aware policy's balance thresholds
// (vllm-project/router src/main.rs @03e9af5c: --balance-abs-threshold 64,
// --balance-rel-threshold 1.5; sgl-router the same).
const routerBalanceLever = "--balance-abs-threshold (default 64) and --balance-rel-threshold (1.5) lower, or --policy power_of_two"

// ProdStackWorkers are the production-stack router's per-server gauges.
var ProdStackWorkers = WorkerGauges{
	Labels:  []string{ProdStackServerLabel},
	Health:  []string{ProdStackHealthy},
	Running: []string{ProdStackRunning},
	QPS:     []string{ProdStackQPS},
}

// VLLMRouterWorkers are the Rust vllm-router's per-worker gauges.
var VLLMRouterWorkers = WorkerGauges{
	Labels:     []string{VLLMRouterWorkerLabel},
	Health:     []string{VLLMRouterHealth},
	Running:    []string{VLLMRouterRunning, VLLMRouterWorkerLoad},
	Breaker:    []string{VLLMRouterBreaker},
	MaxLoad:    []string{VLLMRouterMaxLoad},
	MinLoad:    []string{VLLMRouterMinLoad},
	LoadEvents: []string{VLLMRouterLoadEvents},
	EjectLever: "vllm-router " + routerEjectLever,
}

// ModelGatewayWorkers are the SGLang gateway's per-worker gauges, current
// names first, then sgl-router's.
var ModelGatewayWorkers = WorkerGauges{
	Labels:     []string{SMGWorkerLabel},
	Health:     []string{SMGHealth, SGLRouterHealth},
	Running:    []string{SMGRunning, SGLRouterRunning},
	Breaker:    []string{SMGBreaker, SGLRouterBreaker},
	Failures:   []string{SMGFailures},
	MaxLoad:    []string{SGLRouterMaxLoad},
	MinLoad:    []string{SGLRouterMinLoad},
	LoadEvents: []string{SGLRouterLoadEvents},
	EjectLever: "the SGLang gateway's " + routerEjectLever,
}

// WorkersDetail sums a router's word on its workers for its fleet line:
// "2 servers, 1 healthy; 8 running by its count", "3 workers, 2 healthy,
// breaker open on 1 (http://w3:8000); 14 running by its count" ("" when it
// says nothing). word names them ("servers", "workers").
func WorkersDetail(word string, bs []model.Backend) string {
	if len(bs) == 0 {
		return ""
	}
	d := fmt.Sprintf("%d %s", len(bs), word)
	var healthy int
	var running float64
	var sawHealth, sawRunning bool
	var open, half []string
	for _, b := range bs {
		if b.HealthyOK {
			sawHealth = true
			if b.Healthy >= 1 {
				healthy++
			}
		}
		if b.RunningOK {
			sawRunning = true
			running += b.Running
		}
		switch b.Breaker {
		case "open":
			open = append(open, b.Server)
		case "half-open":
			half = append(half, b.Server)
		}
	}
	if sawHealth {
		d += fmt.Sprintf(", %d healthy", healthy)
	}
	if len(open) > 0 {
		d += fmt.Sprintf(", breaker open on %d (%s)", len(open), few(open))
	}
	if len(half) > 0 {
		d += fmt.Sprintf(", half-open on %d (%s)", len(half), few(half))
	}
	if sawRunning {
		d += fmt.Sprintf("; %.0f running by its count", running)
	}
	return d
}

// few lists at most three names.
func few(ns []string) string {
	if len(ns) > 3 {
		return strings.Join(ns[:3], ", ") + fmt.Sprintf(" and %d more", len(ns)-3)
	}
	return strings.Join(ns, ", ")
}

// FleetNames are the families a fleet source asks Prometheus for about a
// layer: its per-worker gauges, its load range and acts, its own queue,
// its TTFT histogram and its requests by tenant. Present are those only the layer serves (its own
// prefixes or marks: how its targets are found; a name it shares with an
// engine, the production-stack router's vllm:num_requests_running, finds
// engines too).
func (l *Layer) FleetNames() (present []string) {
	var all []string
	if w := l.Workers; w != nil {
		for _, ns := range [][]string{w.Health, w.QPS, w.Running, w.Breaker, w.Failures, w.MaxLoad, w.MinLoad, w.LoadEvents} {
			all = append(all, ns...)
		}
	}
	if l.RouterQueue != "" {
		all = append(all, l.RouterQueue)
	}
	for _, t := range l.TTFT {
		all = append(all, t+"_count")
	}
	if l.Tenants != nil {
		all = append(all, l.Tenants.Requests)
	}
	for _, n := range all {
		if l.Owns(n) {
			present = append(present, n)
		}
	}
	return present
}

// BreakerState is a router's circuit-breaker gauge in words (0 closed, 1
// open, 2 half-open, by the routers' HELP text; "" for anything else).
func BreakerState(v float64) string {
	switch v {
	case 0:
		return "closed"
	case 1:
		return "open"
	case 2:
		return "half-open"
	}
	return ""
}

// TTFTDetail is a router's end-to-end TTFT for its fleet line: "end-to-end
// TTFT mean 1.00 s over 10 requests since start" (over says over what).
func TTFTDetail(mean, count float64, over string) string {
	m := fmt.Sprintf("%.2f s", mean)
	if mean < 1 {
		m = fmt.Sprintf("%.0f ms", mean*1000)
	}
	return fmt.Sprintf("end-to-end TTFT mean %s over %.0f requests %s", m, count, over)
}

// WorkerConcept is one of a router's per-worker gauges: what it says
// ("health", "qps", "running", "breaker", "failures") and its names,
// newest first.
type WorkerConcept struct {
	What  string
	Names []string
}

// Concepts are the gauges the router serves per worker, in the order the
// readings list them (From).
func (w *WorkerGauges) Concepts() []WorkerConcept {
	var out []WorkerConcept
	for _, c := range []WorkerConcept{{"health", w.Health}, {"qps", w.QPS}, {"running", w.Running}, {"breaker", w.Breaker}, {"failures", w.Failures}} {
		if len(c.Names) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// BackendSet gathers a router's word on its workers, gauge by gauge, as
// either source reads it (its /metrics, or Prometheus).
type BackendSet struct {
	by          map[string]*model.Backend
	order, read []string
}

// Read notes the family a concept was read from.
func (s *BackendSet) Read(name string) { s.read = append(s.read, name) }

// Set files one worker's value of a concept (a server without a name, or
// a value that is not a number, is left out).
func (s *BackendSet) Set(what, server string, v float64) {
	if server == "" || v != v || v > 1e308 || v < -1e308 {
		return
	}
	if s.by == nil {
		s.by = map[string]*model.Backend{}
	}
	b := s.by[server]
	if b == nil {
		b = &model.Backend{Server: server}
		s.by[server] = b
		s.order = append(s.order, server)
	}
	switch what {
	case "health":
		b.Healthy, b.HealthyOK = v, true
	case "qps":
		b.QPS, b.QPSOK = v, true
	case "running":
		b.Running, b.RunningOK = v, true
	case "breaker":
		b.Breaker = BreakerState(v)
	case "failures":
		b.Failures, b.FailuresOK = v, true
	}
}

// List is the workers by server, each with the families read (nil when
// none was).
func (s *BackendSet) List() []model.Backend {
	if len(s.order) == 0 {
		return nil
	}
	sort.Strings(s.order)
	from := strings.Join(s.read, ", ")
	out := make([]model.Backend, 0, len(s.order))
	for _, srv := range s.order {
		b := *s.by[srv]
		b.From = from
		out = append(out, b)
	}
	return out
}
