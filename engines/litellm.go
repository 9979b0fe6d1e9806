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
