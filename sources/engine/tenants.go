package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

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
	reqs, ok := r.Counted[src.Requests]
	if !ok {
		return nil, 0
	}
	none := func(v string) bool { return v == "" || slices.Contains(src.None, v) }
	for _, tl := range src.Labels {
		name := func(m *dto.Metric) string {
			if tl.Alias != "" {
				if a := label(m, tl.Alias); !none(a) {
					return a
				}
			}
			if v := label(m, tl.Label); !none(v) {
				if src.Overflow != "" && v == src.Overflow {
					return v + " (past the layer's cap on distinct " + tl.Kind + "s)"
				}
				return v
			}
			return ""
		}
		by := map[string]*model.Tenant{}
		add := func(fam string, set func(t *model.Tenant, v float64)) {
			f, ok := r.Counted[fam]
			if !ok {
				return
			}
			for _, m := range f.GetMetric() {
				n, v := name(m), scalar(m)
				if h := m.GetHistogram(); h != nil {
					v = h.GetSampleSum() // tokens per request: their sum
				}
				if n == "" || !finite(v) {
					continue
				}
				if tl.Kind == "key hash" && len(n) > 12 {
					n = n[:12] + "…" // a hash, shortened: enough to tell keys apart
				}
				t := by[n]
				if t == nil {
					t = &model.Tenant{Kind: tl.Kind, Name: n}
					by[n] = t
				}
				set(t, v)
			}
		}
		unnamed := 0.0
		for _, m := range reqs.GetMetric() {
			if v := scalar(m); name(m) == "" && finite(v) {
				unnamed += v
			}
		}
		add(src.Requests, func(t *model.Tenant, v float64) { t.Requests += v })
		if len(by) == 0 {
			continue
		}
		if src.Failed != "" {
			add(src.Failed, func(t *model.Tenant, v float64) { t.Failed += v })
		}
		for _, tok := range src.Tokens {
			add(tok, func(t *model.Tenant, v float64) { t.Tokens += v; t.TokensOK = true })
		}
		out := make([]model.Tenant, 0, len(by))
		for _, t := range by {
			out = append(out, *t)
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].Requests != out[j].Requests {
				return out[i].Requests > out[j].Requests
			}
			return out[i].Name < out[j].Name
		})
		return out, unnamed
	}
	return nil, 0
}

// tenantDetail says a proxy's tenants in a line: the three busiest, and
// how many more; "no tenant source" when its requests name none.
func tenantDetail(src *engines.TenantSource, ts []model.Tenant, unnamed float64) string {
	if len(ts) == 0 {
		return "no tenant source (" + src.NoneSay + ")"
	}
	var parts []string
	for i, t := range ts {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(ts)-3))
			break
		}
		p := fmt.Sprintf("%s %.0f req", t.Name, t.Requests)
		if t.Failed > 0 {
			p += fmt.Sprintf(" (%.0f failed)", t.Failed)
		}
		if t.TokensOK {
			p += fmt.Sprintf(", %.0f tok", t.Tokens)
		}
		parts = append(parts, p)
	}
	if unnamed > 0 {
		parts = append(parts, fmt.Sprintf("%.0f req with no %s", unnamed, ts[0].Kind))
	}
	return "by " + ts[0].Kind + " since start: " + strings.Join(parts, "; ")
}
