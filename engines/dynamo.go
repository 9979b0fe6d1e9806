package engines

// DynamoFrontend is NVIDIA Dynamo's HTTP frontend and router
// (SERVING-LAYERS.md §3c; lib/runtime/src/metrics/prometheus_names.rs at
// 04070c75): dynamo_frontend_* on DYN_HTTP_PORT (8000).
var DynamoFrontend = Layer{
	ID:           "dynamo-frontend",
	Name:         "NVIDIA Dynamo frontend",
	Role:         RoleRouter,
	Prefixes:     []string{"dynamo_frontend_", "dynamo_router_"}, // the KV router's overhead, in the frontend's process
	Ports:        []int{8000},
	MetricsPath:  "/metrics",
	TTFT:         []string{"dynamo_frontend_time_to_first_token_seconds"},
	RouterQueue:  DynamoRouterPending,
	BalanceLever: "Dynamo's KV router --kv-overlap-score-weight lower, or --router-temperature above 0 (at its default 0 it always picks the best-scored worker)",
	WorkerCheck:  "worker list (" + DynamoWorkerBlocks + " per worker_id: a worker missing there is not registered with it)",
	Overhead:     &DynamoRouterOverhead,
	Source:       "github.com/ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs @04070c75",
	Reads:        "its own router queue by worker_type (with --router-queue-threshold), its end-to-end TTFT and its KV router's own overhead",
}

// DynamoRouterOverhead is the KV router's own time per routing decision:
// dynamo_router_overhead_total_ms{router_id}, a histogram in milliseconds
// (RoutingOverheadMetrics::observe writes Duration.as_secs_f64()*1000),
// registered on the frontend's own registry (port 8000) and filled only by
// the KV router (--router-mode kv); its phases block_hashing,
// seq_hashing, indexer_find_matches and scheduling say which part costs.
// Routing happens before dispatch, so the frontend's TTFT contains it.
var DynamoRouterOverhead = Overhead{
	Name: "dynamo_router_overhead_total_ms", Unit: 0.001,
	TTFT: "dynamo_frontend_time_to_first_token_seconds", TTFTIncludes: true,
	Source: "github.com/ai-dynamo/dynamo lib/llm/src/kv_router/metrics.rs @c7810b03 (RoutingOverheadMetrics), lib/runtime/src/metrics/prometheus_names.rs @04070c75 (routing_overhead)",
	Levers: []string{
		"more dynamo.frontend replicas: each runs its own router (Dynamo's Router Operations: serving multiple router replicas), so each decides for fewer requests",
		"compare --router-mode round-robin on the same load, as Dynamo's KV routing docs advise: if the cache hits KV routing buys do not pay for its time, route without it",
	},
}

// DynamoOverheadPhases are the KV router's overhead phases, beside its
// total.
var DynamoOverheadPhases = []string{"dynamo_router_overhead_block_hashing_ms", "dynamo_router_overhead_seq_hashing_ms",
	"dynamo_router_overhead_indexer_find_matches_ms", "dynamo_router_overhead_scheduling_ms"}

// DynamoWorker is a Dynamo worker's system port (DYN_SYSTEM_PORT, 9090 in
// Kubernetes): its engine's own families (vllm:…, sglang:…) beside
// dynamo_component_*. The endpoint is that engine, served through Dynamo;
// dynamo_component_*'s worker_type label says prefill or decode.
var DynamoWorker = Layer{
	ID:          "dynamo-worker",
	Name:        "NVIDIA Dynamo worker",
	Role:        RoleEngine,
	Prefixes:    []string{"dynamo_component_"},
	Beside:      true,
	Ports:       []int{9090},
	MetricsPath: "/metrics",
	Source:      "github.com/ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs @04070c75",
	Reads:       "the engine's own families, as the engine; worker_type as its prefill/decode role",
}

// DynamoWorkerType is the label on dynamo_component_* naming the worker's
// role (prefill, decode; backend for an aggregated worker).
const DynamoWorkerType = "worker_type"

// Dynamo frontend families the tests read back from its capture.
const (
	DynamoInflight = "dynamo_frontend_inflight_requests"
	DynamoQueued   = "dynamo_frontend_queued_requests"
	// DynamoRouterPending is the requests the frontend's router holds
	// before dispatching any ({worker_type}; registered only with
	// --router-queue-threshold). Above zero while the workers' own queues
	// are empty is the threshold's back-pressure, by design.
	DynamoRouterPending = "dynamo_frontend_router_queue_pending_requests"
	// DynamoWorkerBlocks is the KV blocks the frontend's router counts
	// active on each decode worker it knows ({worker_id}).
	DynamoWorkerBlocks = "dynamo_frontend_worker_active_decode_blocks"
)
