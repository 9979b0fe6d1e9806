package engines

// ProdStackRouter is vLLM's production-stack router (SERVING-LAYERS.md §3a;
// src/vllm_router/services/metrics_service/__init__.py and
// routers/metrics_router.py at a6c01db0). It reuses vLLM's names for
// numbers it computes itself: vllm:num_requests_running{server=<engine
// URL>} is the router's own count of that engine's requests in prefill and
// decode, never labelled model_name. Read as a vLLM engine, it would sum
// every engine's requests into one and call the router an engine.
var ProdStackRouter = Layer{
	ID:   "prodstack-router",
	Name: "vLLM production-stack router",
	Role: RoleRouter,
	// Families no vLLM engine serves (router-side windows and health).
	Marks: []string{"vllm:current_qps", "vllm:healthy_pods_total", "vllm:avg_latency", "vllm:avg_itl",
		"vllm:avg_decoding_length", "vllm:num_prefill_requests", "vllm:num_decoding_requests",
		"vllm:num_incoming_requests", "vllm:num_incoming_requests_total", "vllm:request_latency_seconds",
		"vllm:routing_decisions", "vllm:routing_decisions_total",
		"router_cpu_usage_percent", "router_memory_usage_percent", "router_disk_usage_percent"},
	Shadow: &Shadow{
		Names: []string{"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:gpu_prefix_cache_hit_rate",
			"vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", "vllm:num_requests_swapped"},
		Label: "server",
		Lacks: "model_name",
	},
	MetricsPath: "/metrics",
	Workers:     &ProdStackWorkers,
	BalanceLever: "the production-stack router's --routing-logic roundrobin instead of prefixaware, kvaware or session " +
		"(each sends a request where its prefix or session went, loaded or not)",
	WorkerCheck: "backends (--static-backends or its service discovery) and " + ProdStackHealthy + " per server",
	Source:      "github.com/vllm-project/production-stack src/vllm_router/services/metrics_service/__init__.py, routers/metrics_router.py @a6c01db0",
	Reads:       "per engine (server label): running = in prefill + in decode, QPS, health; waiting is never set at a6c01db0",
}

// ProdStackServerLabel names the engine a production-stack router series is
// about.
const ProdStackServerLabel = "server"

// ProdStackRunning and ProdStackHealthy are the router's per-engine gauges
// the tests read back from its capture.
const (
	ProdStackRunning = "vllm:num_requests_running"
	ProdStackHealthy = "vllm:healthy_pods_total"
	ProdStackQPS     = "vllm:current_qps"
)
