package engines

import "github.com/llmtop/llmtop/model"

// ModelGateway is SGLang's model gateway (SERVING-LAYERS.md §3b;
// sgl-model-gateway/src/observability/metrics.rs @d315eb72): smg_* on its
// Prometheus port (29000). Its /engine_metrics route is read as the engines
// behind it (SGLangGateway).
var ModelGateway = Layer{
	ID:           "sglang-model-gateway",
	Name:         "SGLang model gateway",
	Role:         RoleRouter,
	Prefixes:     []string{"smg_", "sgl_router_"},
	Ports:        []int{29000},
	MetricsPath:  "/metrics",
	TTFT:         []string{"smg_router_ttft_seconds", "sgl_router_ttft_seconds"},
	Workers:      &ModelGatewayWorkers,
	BalanceLever: "the SGLang gateway's " + routerBalanceLever,
	WorkerCheck:  "workers (--worker-urls or its service discovery), " + SMGHealth + " and " + SMGBreaker + " per worker",
	Source: "github.com/sgl-project/sglang sgl-model-gateway/src/observability/metrics.rs, metrics_aggregator.rs @d315eb72; " +
		"github.com/lightseekorg/smg model_gateway/src/observability/metrics.rs @73da68ca",
	Reads: "per worker (worker label): health, circuit breaker and its consecutive failures, requests in flight",
}

// SGLangGatewayID is the gateway's /engine_metrics: every worker's SGLang
// metrics fetched and served again with ':' turned into '_'
// (sglang:token_usage → sglang_token_usage) and the worker's address as
// worker_addr (metrics_aggregator.rs @d315eb72).
const SGLangGatewayID model.Engine = "sglang-gateway"

// gatewayLabel is the label the gateway adds per worker.
const gatewayLabel = "worker_addr"

// SGLangGateway reads /engine_metrics with SGLang's adapter, the names put
// back and each worker one of SGLang's data-parallel groups: counts add
// up over the workers; KV is their mean, as for SGLang's DP ranks (a full
// worker beside an idle one reads half full: each worker's own endpoint,
// or --prometheus, shows which).
var SGLangGateway = Spec{
	ID:          SGLangGatewayID,
	Name:        "SGLang model gateway (/engine_metrics)",
	Aliases:     []string{"smg", "sglang-router"},
	Prefixes:    []string{"sglang_"},
	Ports:       []int{30000},
	MetricsPath: "/engine_metrics",
	Hint404:     "the SGLang model gateway re-exposes its workers' metrics on /engine_metrics of its serving port",
	ModelLabel:  "model_name",
	DPLabel:     gatewayLabel,
	KVAgg:       SGLang.KVAgg,
	Like:        model.SGLang,
	Reexport:    "sglang_",
	Strips:      "sglang:",
	Levers:      SGLang.Levers,
	Metrics:     wrapped("sglang_", "sglang:", sglangMetrics),
}
