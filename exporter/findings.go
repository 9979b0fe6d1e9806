package exporter

import (
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/diagnosis"
)

// findings writes each open finding as llmtop_finding{…} 1 (a closed one is
// absent), its title and first action as llmtop_finding_info, and when it
// opened (title and action as they read when first served: see Collector.titles). Two findings of one rule on one endpoint (one per model) are one
// series, at the higher severity: Prometheus alerts on the rule and the
// endpoint.
func (e *emitter) findings(v *View, title func(key, title string) string) {
	type key struct{ ep, id string }
	best := map[key]diagnosis.Finding{}
	var order []key
	for _, f := range v.Findings {
		if !f.Active() {
			continue
		}
		k := key{endpointLabel(f.Endpoint), labelValue(f.ID)}
		old, ok := best[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || f.Severity > old.Severity {
			best[k] = f
		}
	}
	for _, k := range order {
		f := best[k]
		e.gauge(dFinding, 1, k.ep, k.id, labelValue(string(f.Category)), f.Severity.String())
		action := ""
		if len(f.Actions) > 0 {
			action = f.Actions[0].Change
		}
		ta := title(k.ep+"\xff"+k.id+"\xff"+strconv.FormatInt(f.Opened.UnixNano(), 10), labelValue(f.Title)+"\xff"+labelValue(action))
		t, a, _ := strings.Cut(ta, "\xff")
		e.gauge(dFindingInfo, 1, k.ep, k.id, t, a)
		if !f.Opened.IsZero() {
			e.gauge(dFindingOpened, float64(f.Opened.UnixNano())/1e9, k.ep, k.id)
		}
	}
}
