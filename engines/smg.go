package engines

// ModelGateway is SGLang's model gateway (SERVING-LAYERS.md §3b;
// sgl-model-gateway/src/observability/metrics.rs @d315eb72): smg_* on its
// Prometheus port (29000), and on /engine_metrics every worker's metrics
// re-exposed with ':' turned into '_' and a worker_addr label. Either is the
// gateway, never one engine.
var ModelGateway = Layer{
	ID:          "sglang-model-gateway",
	Name:        "SGLang model gateway",
	Role:        RoleRouter,
	Prefixes:    []string{"smg_", "sgl_router_"},
	WorkerLabel: "worker_addr",
	Ports:       []int{29000},
	MetricsPath: "/metrics",
	Source:      "github.com/sgl-project/sglang sgl-model-gateway/src/observability/metrics.rs, metrics_aggregator.rs @d315eb72",
	Reads:       NotJudged,
}
