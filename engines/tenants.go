package engines

// TenantSource is where a layer counts requests by tenant: who sent them,
// by a label it sets from the request (a LiteLLM team or key, an llm-d
// fairness id).
type TenantSource struct {
	// Requests and Failed are counter families of requests and failed
	// requests; Tokens are families of tokens, counters or histograms of
	// tokens per request (their sums), added up.
	Requests, Failed string
	Tokens           []string
	// Labels name the tenant, in the order preferred: the first with a
	// value on any request series names them.
	Labels []TenantLabel
	// None are label values that name no tenant (LiteLLM's "None"; llm-d's
	// "default-flow", a request without the fairness header); NoneSay
	// says so when no request names one.
	None    []string
	NoneSay string
	// Overflow is the value the layer reports past its cap on distinct
	// tenants ("" when it has none).
	Overflow string
}

// TenantLabel is a label that names a tenant (Alias, when set, stands for
// it where it has a value) and what it names ("team", "fairness id").
type TenantLabel struct{ Label, Alias, Kind string }
