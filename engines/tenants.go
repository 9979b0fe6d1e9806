package engines

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// TenantSource is where a layer counts requests by tenant: who sent them,
// by a label it sets from the request (a LiteLLM team or key, an llm-d
// fairness id).
type TenantSource struct {
	// Requests and Failed are counter families of requests and failed
	// requests; Tokens are families of tokens, counters or histograms of
	// tokens per request (their sums), added up.
	Requests, Failed string
	Tokens           []string
	// TokenHists says Tokens are histograms of tokens per request (their
	// sums are the tokens), not counters.
	TokenHists bool
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

// TenantRow is one series of a tenant family: its labels and its value
// (a histogram's sum for a family of tokens per request).
type TenantRow struct {
	Get func(label string) string
	V   float64
}

// Tally sums a layer's per-tenant families into tenants, named by the
// first of its labels that has a value on any request series, busiest
// first, and the requests that name none of that kind. rows gives a
// family's series as read for one tenant label (a Prometheus query groups
// by that label; a scrape has them all).
func (src *TenantSource) Tally(rows func(tl TenantLabel, family string) []TenantRow) ([]model.Tenant, float64) {
	none := func(v string) bool { return v == "" || slices.Contains(src.None, v) }
	for _, tl := range src.Labels {
		name := func(r TenantRow) string {
			if tl.Alias != "" {
				if a := r.Get(tl.Alias); !none(a) {
					return a
				}
			}
			v := r.Get(tl.Label)
			switch {
			case none(v):
				return ""
			case src.Overflow != "" && v == src.Overflow:
				return v + " (past the layer's cap on distinct " + tl.Kind + "s)"
			}
			return v
		}
		by := map[string]*model.Tenant{}
		add := func(fam string, set func(t *model.Tenant, v float64)) {
			for _, r := range rows(tl, fam) {
				n := name(r)
				if n == "" || r.V != r.V || r.V > 1e308 || r.V < -1e308 {
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
				set(t, r.V)
			}
		}
		unnamed := 0.0
		for _, r := range rows(tl, src.Requests) {
			if name(r) == "" && r.V == r.V {
				unnamed += r.V
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

// Detail says the tenants in a line: the three busiest and how many more,
// over what ("since start", "in the last 5m0s"); "no tenant source" when
// the requests name none.
func (src *TenantSource) Detail(ts []model.Tenant, unnamed float64, over string) string {
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
	return "by " + ts[0].Kind + " " + over + ": " + strings.Join(parts, "; ")
}
