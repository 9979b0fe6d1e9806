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
	Source:      "github.com/BerriAI/litellm enterprise/litellm_enterprise/integrations/prometheus.py @1aedde15",
	Reads:       NotJudged,
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
var LiteLLMTenantLabels = []struct{ Label, Alias, Kind string }{
	{"team", "team_alias", "team"},
	{"api_key_alias", "", "key"},
	{"user", "", "user"},
	{"hashed_api_key", "", "key hash"},
}
