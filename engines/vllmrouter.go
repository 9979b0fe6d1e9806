package engines

// VLLMRouter is vLLM's Rust router (vllm-project/router, SERVING-LAYERS.md
// §3a'; src/metrics.rs at 02b9331f): vllm_router_* (and its tokenizer's
// vllm_tokenizer_*) on its own Prometheus listener, :29000 by default. Its
// names share no prefix with vLLM's vllm: families, so it is never read as
// an engine; its per-worker load, health and circuit-breaker gauges are
// what a router rule would read.
var VLLMRouter = Layer{
	ID:           "vllm-router",
	Name:         "vLLM router (Rust)",
	Role:         RoleRouter,
	Prefixes:     []string{"vllm_router_", "vllm_tokenizer_"},
	Ports:        []int{29000},
	MetricsPath:  "/metrics",
	Workers:      &VLLMRouterWorkers,
	BalanceLever: "vllm-router " + routerBalanceLever,
	WorkerCheck:  "workers (--worker-urls or its service discovery), " + VLLMRouterHealth + " and " + VLLMRouterBreaker + " per worker",
	Source:       "github.com/vllm-project/router src/metrics.rs @02b9331f",
	Reads:        "per worker (worker label): health, circuit breaker, requests in flight; its max/min load where it acted on them",
}

// The Rust router's per-worker gauges ({worker} = the worker's URL) the
// dead_backend_traffic rule reads: health 1/0, requests in flight, and the
// circuit breaker (0 closed, 1 open, 2 half-open, by its own HELP text).
const (
	VLLMRouterWorkerLabel = "worker"
	VLLMRouterHealth      = "vllm_router_worker_health"
	VLLMRouterRunning     = "vllm_router_running_requests"
	VLLMRouterBreaker     = "vllm_router_cb_state"
)
