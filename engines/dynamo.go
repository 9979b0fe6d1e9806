package engines

// DynamoFrontend is NVIDIA Dynamo's HTTP frontend and router
// (SERVING-LAYERS.md §3c; lib/runtime/src/metrics/prometheus_names.rs at
// 04070c75): dynamo_frontend_* on DYN_HTTP_PORT (8000). A Dynamo worker
// serves its engine's own families (vllm:…) beside dynamo_component_*: that
// endpoint is the engine, and is read as one.
var DynamoFrontend = Layer{
	ID:          "dynamo-frontend",
	Name:        "NVIDIA Dynamo frontend",
	Role:        RoleRouter,
	Prefixes:    []string{"dynamo_frontend_"},
	Ports:       []int{8000},
	MetricsPath: "/metrics",
	Source:      "github.com/ai-dynamo/dynamo lib/runtime/src/metrics/prometheus_names.rs @04070c75",
	Reads:       NotJudged,
}

// Dynamo frontend families the tests read back from its capture.
const (
	DynamoInflight = "dynamo_frontend_inflight_requests"
	DynamoQueued   = "dynamo_frontend_queued_requests"
)
