package engines

// EndpointPicker is llm-d's endpoint picker (EPP) and the Gateway API
// Inference Extension's it grew from (SERVING-LAYERS.md §3d: llm-d-router
// docs/metrics.md @ebab6879, GIE pkg/epp/metrics/metrics.go @1748e829). It
// serves llm_d_epp_* and, during the deprecation, the GIE names beside them
// (inference_objective_*, inference_pool_*, inference_extension_*, and the
// older inference_model_*): each old family is counted once, as its
// llm_d_epp_ twin where that is present. Its metrics port (9090) wants a
// bearer token.
var EndpointPicker = Layer{
	ID:       "llm-d-epp",
	Name:     "llm-d endpoint picker",
	Role:     RoleRouter,
	Prefixes: []string{"llm_d_epp_"},
	Deprecated: map[string]string{
		"inference_objective_": "llm_d_epp_",
		"inference_model_":     "llm_d_epp_",
		"inference_pool_":      "llm_d_epp_",
		"inference_extension_": "llm_d_epp_",
	},
	// Twins named in llm-d's own HELP texts ("[Deprecated: Use …]") and
	// metrics doc where the suffix changed too.
	Renamed: map[string]string{
		"inference_pool_ready_pods":            "llm_d_epp_ready_endpoints",
		"inference_pool_per_pod_queue_size":    "llm_d_epp_per_endpoint_queue_size",
		"inference_objective_running_requests": "llm_d_epp_request_running",
		"inference_model_running_requests":     "llm_d_epp_request_running",
	},
	Ports:       []int{9090},
	MetricsPath: "/metrics",
	Source:      "github.com/llm-d/llm-d-router docs/metrics.md @ebab6879; kubernetes-sigs/gateway-api-inference-extension pkg/epp/metrics/metrics.go @1748e829",
	Reads:       "pool: ready endpoints, average KV use and queue, per-endpoint queue; its end-to-end TTFT; its requests by fairness id",
	TTFT:        []string{"llm_d_epp_request_ttft_seconds"},
	Tenants:     &EPPTenants,
	BalanceLever: "the endpoint picker's EndpointPickerConfig: the prefix-cache-scorer's weight lower beside the queue-scorer's and kv-cache-scorer's " +
		"(load-aware-scorer in llm-d's samples)",
	WorkerCheck: "ready endpoints (" + EPPReadyEndpoints + ") and its InferencePool's selector: a pod it does not count ready gets no traffic",
}

// EPPTenants are the picker's requests by fairness_id (docs/metrics.md and
// pkg/epp/metrics @ebab6879: request_total, request_error_total and the
// token histograms carry {model_name, target_model_name, fairness_id,
// priority}; the id is the x-llm-d-inference-fairness-id header,
// "default-flow" without it (pkg/epp/metadata/consts.go), "other" past
// 1000 distinct ids (cardinality.go)).
var EPPTenants = TenantSource{
	Requests:   EPPRequestTotal,
	Failed:     "llm_d_epp_request_error_total",
	Tokens:     []string{"llm_d_epp_request_input_tokens", "llm_d_epp_request_output_tokens"},
	TokenHists: true,
	Labels:     []TenantLabel{{Label: "fairness_id", Kind: "fairness id"}},
	None:       []string{"default-flow"},
	NoneSay:    "its requests carry no x-llm-d-inference-fairness-id header (all default-flow)",
	Overflow:   "other",
}

// Endpoint picker pool gauges, current names (the deprecated twins are the
// Layer's to map).
const (
	EPPReadyEndpoints = "llm_d_epp_ready_endpoints"
	EPPAvgQueue       = "llm_d_epp_average_queue_size"
	EPPAvgKV          = "llm_d_epp_average_kv_cache_utilization"
	EPPRequestTotal   = "llm_d_epp_request_total"
)
