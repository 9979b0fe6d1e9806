package engine

import (
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// tenants are a layer's requests, failures and tokens per tenant, since
// it started (engines.Layer.Tenants: LiteLLM's team, key or user; llm-d's
// fairness id), named by the first of its tenant labels that has a value
// on any request series (nil for a layer that counts none, and for one
// whose requests name none: then there is no tenant source).
func tenants(r role) []model.Tenant {
	ts, _ := tenantsOf(r)
	return ts
}

// tenantsOf is tenants, and the requests that name none of the kind the
// tenants are read by (the master key's, in a view by team; llm-d's
// default-flow).
func tenantsOf(r role) ([]model.Tenant, float64) {
	src := r.Layer.Tenants
	if src == nil {
		return nil, 0
	}
	if _, ok := r.Counted[src.Requests]; !ok {
		return nil, 0
	}
	return src.Tally(func(_ engines.TenantLabel, fam string) []engines.TenantRow {
		f, ok := r.Counted[fam]
		if !ok {
			return nil
		}
		out := make([]engines.TenantRow, 0, len(f.GetMetric()))
		for _, m := range f.GetMetric() {
			v := scalar(m)
			if h := m.GetHistogram(); h != nil {
				v = h.GetSampleSum() // tokens per request: their sum
			}
			out = append(out, engines.TenantRow{Get: func(l string) string { return label(m, l) }, V: v})
		}
		return out
	})
}

// tenantDetail says a layer's tenants since it started (engines.TenantSource.Detail).
func tenantDetail(src *engines.TenantSource, ts []model.Tenant, unnamed float64) string {
	return src.Detail(ts, unnamed, "since start")
}
