package engines

// LiteLLM is the LiteLLM proxy (SERVING-LAYERS.md §3e;
// enterprise/litellm_enterprise/integrations/prometheus.py @1aedde15):
// litellm_* on the proxy's /metrics (4000).
var LiteLLM = Layer{
	ID:          "litellm",
	Name:        "LiteLLM proxy",
	Role:        RoleProxy,
	Prefixes:    []string{"litellm_"},
	Ports:       []int{4000},
	MetricsPath: "/metrics",
	Overhead:    &LiteLLMOverhead,
	Tenants: &TenantSource{Requests: LiteLLMRequests, Failed: LiteLLMFailed, Tokens: []string{LiteLLMTokens},
		Labels: LiteLLMTenantLabels, None: []string{LiteLLMNone}, NoneSay: "its requests carry no team, key or user label"},
	Source: "github.com/BerriAI/litellm enterprise/litellm_enterprise/integrations/prometheus.py @1aedde15",
	Reads:  "its tenants (team, key, user) and its own overhead against its backends' TTFT",
}

// LiteLLM's per-request counters (exposed with _total by Python's client)
// and the labels that name who sent the request: a team, a key's alias,
// an internal user, the key's hash. A label LiteLLM has no value for reads
// "None" (tests/otel_tests/test_prometheus.py: team="None",
// team_alias="None", user="default_user_id").
const (
	LiteLLMRequests = "litellm_proxy_total_requests_metric_total"
	LiteLLMFailed   = "litellm_proxy_failed_requests_metric_total"
	LiteLLMTokens   = "litellm_total_tokens_metric_total"
	LiteLLMNone     = "None"
)

// LiteLLMTenantLabels are the labels a tenant is read from, in the order
// llmtop prefers them: the first with a value on any request series names
// the tenants (the team's alias stands for its id where it has one).
var LiteLLMTenantLabels = []TenantLabel{
	{"team", "team_alias", "team"},
	{"api_key_alias", "", "key"},
	{"user", "", "user"},
	{"hashed_api_key", "", "key hash"},
}

// LiteLLMOverhead is the latency LiteLLM adds to a request (its total time
// less its call to the backend): litellm_overhead_latency_metric, a
// histogram in seconds although its HELP says milliseconds — the proxy
// observes litellm_overhead_time_ms / 1000 ("set as seconds",
// litellm/integrations/prometheus.py @002de3dd). It is compared with
// litellm_llm_api_time_to_first_token_metric, the backend's TTFT as the
// proxy saw it (seconds; recorded for streaming calls only), which does not
// contain the overhead.
var LiteLLMOverhead = Overhead{
	Name: "litellm_overhead_latency_metric", Unit: 1,
	TTFT: "litellm_llm_api_time_to_first_token_metric", TTFTIncludes: false,
	TTFTNote: "LiteLLM records it for streaming calls only",
	Source:   "github.com/BerriAI/litellm litellm/integrations/prometheus.py @002de3dd",
	Levers: []string{
		"turn DEBUG logging off (LITELLM_LOG, set_verbose): LiteLLM's latency-overhead guide names it the first cause, and the x-litellm-overhead-duration-ms header or LITELLM_DETAILED_TIMING=true shows where the time goes",
		"run more proxy workers or pods (--num_workers) and avoid routing_strategy usage-based-routing, which LiteLLM's load-balancing docs mark bad for performance",
	},
}
