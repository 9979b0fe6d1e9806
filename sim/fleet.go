package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// A routed fleet (issue 26): a router in front of a prefill pool and a
// decode pool of simulated vLLM engines, the decode side pulling each
// request's KV from prefill. The router's policy is each engine's share of
// the arrivals (its TrafficScale), set every second; its own /metrics are
// the vLLM production-stack router's (vllm:num_requests_running and
// vllm:num_requests_waiting per server, never model_name), so llmtop
// classifies it as the router it is.

// The routed scenarios.
const (
	RoutedHealthy   = "routed-healthy"
	RoutedStarved   = "routed-starved"
	RoutedOneWorker = "routed-one-worker"
	RoutedKVStall   = "routed-kv-stall"
	// RoutedDeadBackend: a decode worker's engine died and the router,
	// which counts it unhealthy, still has requests on it.
	RoutedDeadBackend = "routed-dead-backend"
	// RoutedRouterQueue: Dynamo's frontend holds requests in its own
	// queue while the engines behind it have room.
	RoutedRouterQueue = "routed-router-queue"
	// RoutedRouterOverhead: Dynamo's KV router spends most of each
	// request's time to first token on its own routing decision.
	RoutedRouterOverhead = "routed-router-overhead"
)

// The routers a routed scenario puts in front of the pools.
const (
	frontProdStack = "" // vLLM production-stack router's /metrics
	frontDynamo    = "dynamo"
)

// routed is one routed scenario: what the router does and what the
// connector does.
type routed struct {
	summary string
	// share is decode worker i's traffic scale of n (1: an even share).
	share func(i, n int) float64
	// xfer is the decode side's mean KV hand-over.
	xfer time.Duration
	// dead marks decode worker i dead: its API answers 503 (vLLM's
	// EngineDeadError) while the router keeps sending it requests, which
	// hang there. nil: none.
	dead func(i, n int) bool
	// front is the router's shape (frontProdStack, frontDynamo); held the
	// requests a Dynamo frontend holds in its own queue.
	front string
	held  float64
	// overhead is a Dynamo frontend's KV-router time per request.
	overhead time.Duration
}

var routedScenarios = map[string]routed{
	RoutedHealthy: {summary: "round robin over 2 prefill and 5 decode workers at ~35% load, KV handed over in ~40 ms",
		share: func(int, int) float64 { return 1 }, xfer: 40 * time.Millisecond},
	RoutedStarved: {summary: "a KV-aware router piles the decode traffic onto 3 of 5 workers (full, queueing) while 2 get none (dynamo #7836)",
		share: func(i, _ int) float64 {
			if i >= 3 {
				return 0
			}
			return 5
		}, xfer: 40 * time.Millisecond},
	RoutedOneWorker: {summary: "the router's load signal reads 0 for every worker: nearly every decode request goes to the first (sglang #15473)",
		share: func(i, _ int) float64 {
			if i == 0 {
				return 1.6
			}
			return 0.03
		}, xfer: 40 * time.Millisecond},
	RoutedKVStall: {summary: "the KV hand-over stalls: each decode request waits ~2.5 s for its KV, most of its TTFT (LMCache #1106)",
		share: func(int, int) float64 { return 1 }, xfer: 2500 * time.Millisecond},
	RoutedDeadBackend: {summary: "the last decode worker's engine died (its API answers 503, EngineDeadError): the router's health check counts it unhealthy, yet it still has requests in flight there, which hang (production-stack router)",
		share: func(int, int) float64 { return 1 }, xfer: 40 * time.Millisecond,
		dead: func(i, n int) bool { return i == n-1 }},
	RoutedRouterQueue: {summary: "a Dynamo frontend whose --router-queue-threshold reads the workers busy too early holds ~12 requests in its own queue while every decode worker has room (Dynamo's router docs)",
		share: func(int, int) float64 { return 0.3 }, xfer: 40 * time.Millisecond, front: frontDynamo, held: 12, overhead: 2 * time.Millisecond},
	RoutedRouterOverhead: {summary: "a Dynamo frontend whose KV router spends ~120 ms deciding each request (dynamo_router_overhead_total_ms) while the engines give their first token in ~80 ms: the router is most of the time to first token",
		share: func(int, int) float64 { return 1 }, xfer: 40 * time.Millisecond, front: frontDynamo, overhead: 120 * time.Millisecond},
}

// RoutedScenarios lists the routed scenarios with what each shows.
func RoutedScenarios() map[string]string {
	out := map[string]string{}
	for k, v := range routedScenarios {
		out[k] = v.summary
	}
	return out
}

// RoutedScenarioNames lists the routed scenarios, sorted.
func RoutedScenarioNames() []string {
	names := make([]string, 0, len(routedScenarios))
	for k := range routedScenarios {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// FleetConfig configures a routed fleet.
type FleetConfig struct {
	Scenario string
	Seed     uint64
	Clock    Clock // default the real clock; a *FakeClock for tests
	Model    string
	// Prefill and Decode are the pools' sizes; default 2 and 5.
	Prefill, Decode int
	StartupTime     time.Duration
	Log             io.Writer // every engine's log, interleaved; nil = discard
}

// Fleet is a routed fleet: the engines and the router's policy.
type Fleet struct {
	cfg      FleetConfig
	sc       routed
	front    frontCounts // a Dynamo frontend's own histograms
	Prefills []*Sim
	Decodes  []*Sim
	mu       sync.Mutex
	urls     map[*Sim]string
}

// NewFleet builds the fleet's engines (not started).
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	sc, ok := routedScenarios[cfg.Scenario]
	if !ok {
		return nil, fmt.Errorf("unknown routed scenario %q (known: %s)", cfg.Scenario, strings.Join(RoutedScenarioNames(), ", "))
	}
	if cfg.Prefill <= 0 {
		cfg.Prefill = 2
	}
	if cfg.Decode <= 0 {
		cfg.Decode = 5
	}
	f := &Fleet{cfg: cfg, sc: sc, urls: map[*Sim]string{}}
	mk := func(pd string, i int) (*Sim, error) {
		return New(Config{Model: cfg.Model, ServedModelName: "", Scenario: Healthy, Background: true, Seed: cfg.Seed*100 + uint64(i) + 1,
			Clock: cfg.Clock, Log: cfg.Log, StartupTime: cfg.StartupTime, PD: pd, KVTransfer: sc.xfer, TrafficScale: 1})
	}
	for i := range cfg.Prefill {
		s, err := mk(PDPrefill, i)
		if err != nil {
			return nil, err
		}
		f.Prefills = append(f.Prefills, s)
	}
	for i := range cfg.Decode {
		s, err := mk(PDDecode, 50+i)
		if err != nil {
			return nil, err
		}
		f.Decodes = append(f.Decodes, s)
	}
	f.route()
	return f, nil
}

// SetScenario switches the router's policy and the connector to another
// routed scenario while the fleet runs (the routed demo's timeline).
func (f *Fleet) SetScenario(name string) error {
	sc, ok := routedScenarios[name]
	if !ok {
		return fmt.Errorf("unknown routed scenario %q", name)
	}
	f.mu.Lock()
	f.sc, f.cfg.Scenario = sc, name
	f.front = frontCounts{} // another router in front: its counts start over
	f.mu.Unlock()
	for _, s := range f.Decodes {
		s.SetKVTransfer(sc.xfer)
	}
	f.route()
	return nil
}

// Scenario is the routed scenario now.
func (f *Fleet) Scenario() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.Scenario
}

// RoutedDemoTimeline is what `llmtop demo --routed` cycles through.
var RoutedDemoTimeline = []struct {
	Name string
	For  time.Duration
}{{RoutedHealthy, 60 * time.Second}, {RoutedStarved, 75 * time.Second}, {RoutedHealthy, 40 * time.Second},
	{RoutedOneWorker, 75 * time.Second}, {RoutedHealthy, 40 * time.Second}, {RoutedKVStall, 60 * time.Second},
	{RoutedHealthy, 40 * time.Second}, {RoutedDeadBackend, 60 * time.Second}, {RoutedHealthy, 40 * time.Second},
	{RoutedRouterQueue, 60 * time.Second}, {RoutedHealthy, 40 * time.Second}, {RoutedRouterOverhead, 60 * time.Second}}

// Engines are the prefill engines, then the decode engines.
func (f *Fleet) Engines() []*Sim { return append(append([]*Sim{}, f.Prefills...), f.Decodes...) }

// route applies the router's policy: each decode worker's share of the
// arrivals. The prefill pool is round robin.
func (f *Fleet) route() {
	f.mu.Lock()
	sc := f.sc
	f.mu.Unlock()
	for i, s := range f.Decodes {
		s.SetTrafficScale(sc.share(i, len(f.Decodes)))
	}
}

// Start runs every engine on the real clock.
func (f *Fleet) Start(ctx context.Context) {
	for _, s := range f.Engines() {
		s.Start(ctx)
	}
}

// Advance moves a fleet on a FakeClock by d, a second at a time.
func (f *Fleet) Advance(d time.Duration) error {
	fc, ok := f.cfg.Clock.(*FakeClock)
	if !ok {
		return fmt.Errorf("sim: Advance needs a FakeClock")
	}
	for d > 0 {
		step := min(d, time.Second)
		fc.add(step)
		for _, s := range f.Engines() {
			if err := s.Advance(0); err != nil {
				return err
			}
		}
		d -= step
	}
	return nil
}

// SetURL names where an engine serves (the router's server label).
func (f *Fleet) SetURL(s *Sim, url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls[s] = url
}

// dead reports whether engine s is a dead decode worker in the scenario
// now.
func (f *Fleet) dead(s *Sim) bool {
	f.mu.Lock()
	sc := f.sc
	f.mu.Unlock()
	if sc.dead == nil {
		return false
	}
	for i, d := range f.Decodes {
		if d == s {
			return sc.dead(i, len(f.Decodes))
		}
	}
	return false
}

// EngineHandler serves engine s's HTTP surface (Sim.Handler), or, while the
// scenario has it dead, what vLLM's API server answers once its engine
// core died: 503 on every route, health included.
func (f *Fleet) EngineHandler(s *Sim) http.Handler {
	h := s.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.dead(s) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"object":"error","message":"EngineCore encountered an issue. See stack trace (above) for the root cause.","type":"EngineDeadError","code":503}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// RouterHandler serves the router's /metrics: in the production-stack
// router's shape (src/vllm_router/services/metrics_service/__init__.py),
// per engine (server label, never model_name) its running and waiting
// requests and health, and the host gauges; or, for a scenario with a
// Dynamo frontend in front, that frontend's (dynamoFrontend).
func (f *Fleet) RouterHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		f.mu.Lock()
		sc := f.sc
		f.mu.Unlock()
		if sc.front == frontDynamo {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			io.WriteString(w, f.dynamoFrontend(sc))
			return
		}
		f.mu.Lock()
		type row struct {
			url              string
			running, waiting int
			up               bool
		}
		var rows []row
		var urls []string
		engs := f.Engines()
		for _, s := range engs {
			urls = append(urls, f.urls[s])
		}
		f.mu.Unlock()
		for i, s := range engs {
			if u := urls[i]; u != "" {
				run, wait, up := s.Gauges()
				if f.dead(s) {
					// its health check fails; the requests the router
					// sent there stay in flight by its count
					up = false
				}
				rows = append(rows, row{u, run, wait, up})
			}
		}
		var b strings.Builder
		gauge := func(name, help string, v func(row) float64) {
			fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
			for _, x := range rows {
				fmt.Fprintf(&b, "%s{server=%q} %v\n", name, x.url, v(x))
			}
		}
		gauge("vllm:num_requests_running", "Number of running requests", func(x row) float64 { return float64(x.running) })
		gauge("vllm:num_requests_waiting", "Number of waiting requests", func(x row) float64 { return float64(x.waiting) })
		gauge("vllm:healthy_pods_total", "Number of healthy vLLM pods", func(x row) float64 {
			if x.up {
				return 1
			}
			return 0
		})
		fmt.Fprintf(&b, "# HELP router_cpu_usage_percent CPU usage percentage\n# TYPE router_cpu_usage_percent gauge\nrouter_cpu_usage_percent 3.5\n")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, b.String())
	})
}

// dynamoFrontend is a Dynamo frontend's /metrics (names from
// lib/runtime/src/metrics/prometheus_names.rs @04070c75, the
// dynamo_frontend_ prefix): its HTTP queue and requests in flight, and
// with --router-queue-threshold the requests its router holds per worker
// type (router_queue_pending_requests).
func (f *Fleet) dynamoFrontend(sc routed) string {
	model := f.cfg.Model
	if model == "" && len(f.Decodes) > 0 {
		model = f.Decodes[0].ModelName()
	}
	var inflight int
	for _, s := range f.Engines() {
		run, wait, _ := s.Gauges()
		inflight += run + wait
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP dynamo_frontend_queued_requests Number of requests waiting in HTTP queue before receiving the first response\n# TYPE dynamo_frontend_queued_requests gauge\n")
	fmt.Fprintf(&b, "dynamo_frontend_queued_requests{model=%q} %v\n", model, sc.held)
	fmt.Fprintf(&b, "# HELP dynamo_frontend_inflight_requests Number of inflight requests\n# TYPE dynamo_frontend_inflight_requests gauge\n")
	fmt.Fprintf(&b, "dynamo_frontend_inflight_requests{model=%q} %d\n", model, inflight)
	fmt.Fprintf(&b, "# HELP dynamo_frontend_router_queue_pending_requests Number of requests pending in the router's scheduler queue\n# TYPE dynamo_frontend_router_queue_pending_requests gauge\n")
	fmt.Fprintf(&b, "dynamo_frontend_router_queue_pending_requests{worker_type=\"prefill\"} 0\n")
	fmt.Fprintf(&b, "dynamo_frontend_router_queue_pending_requests{worker_type=\"decode\"} %v\n", sc.held)
	if sc.overhead > 0 {
		f.mu.Lock()
		c := f.front.at(f.clock().Now(), sc.overhead)
		f.mu.Unlock()
		// the KV router's time per decision (ms, with its router_id) and
		// the frontend's TTFT, which contains it
		ms := sc.overhead.Seconds() * 1000
		fmt.Fprintf(&b, "# HELP dynamo_router_overhead_total_ms Total routing overhead per request in milliseconds\n# TYPE dynamo_router_overhead_total_ms histogram\n")
		for _, le := range []float64{0.01, 0.09, 0.81, 7.29, 65.61, 590.49} {
			n := 0.0
			if ms <= le {
				n = c.n
			}
			fmt.Fprintf(&b, "dynamo_router_overhead_total_ms_bucket{router_id=\"7587888958843318822\",le=\"%g\"} %g\n", le, n)
		}
		fmt.Fprintf(&b, "dynamo_router_overhead_total_ms_bucket{router_id=\"7587888958843318822\",le=\"+Inf\"} %g\n", c.n)
		fmt.Fprintf(&b, "dynamo_router_overhead_total_ms_sum{router_id=\"7587888958843318822\"} %g\n", c.n*ms)
		fmt.Fprintf(&b, "dynamo_router_overhead_total_ms_count{router_id=\"7587888958843318822\"} %g\n", c.n)
		fmt.Fprintf(&b, "# HELP dynamo_frontend_time_to_first_token_seconds Time to first token in seconds\n# TYPE dynamo_frontend_time_to_first_token_seconds histogram\n")
		fmt.Fprintf(&b, "dynamo_frontend_time_to_first_token_seconds_bucket{model=%q,le=\"+Inf\"} %g\n", model, c.n)
		fmt.Fprintf(&b, "dynamo_frontend_time_to_first_token_seconds_sum{model=%q} %g\n", model, c.ttftSum)
		fmt.Fprintf(&b, "dynamo_frontend_time_to_first_token_seconds_count{model=%q} %g\n", model, c.n)
	}
	return b.String()
}

// frontCounts are a simulated Dynamo frontend's cumulative requests and
// TTFT sum: frontRate requests a second, each its router's overhead plus
// frontEngineTTFT.
type frontCounts struct {
	last       time.Time
	n, ttftSum float64
}

const (
	frontRate       = 10.0
	frontEngineTTFT = 80 * time.Millisecond
)

func (c *frontCounts) at(now time.Time, overhead time.Duration) frontCounts {
	if c.last.IsZero() {
		c.last = now
	}
	if now.After(c.last) {
		// whole requests only: a count is a count
		if dn := math.Floor(now.Sub(c.last).Seconds() * frontRate); dn > 0 {
			c.n += dn
			c.ttftSum += dn * (overhead + frontEngineTTFT).Seconds()
			c.last = c.last.Add(time.Duration(dn / frontRate * float64(time.Second)))
		}
	}
	return *c
}

// clock is the fleet's clock (the real one unless a test drives it).
func (f *Fleet) clock() Clock {
	if f.cfg.Clock != nil {
		return f.cfg.Clock
	}
	return realClock{}
}

// ModelName is the model the engine serves (its /v1/models id).
func (s *Sim) ModelName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.served
}
