package diagnosis

import (
	"time"

	"github.com/llmtop/llmtop/model"
)

// edgeShare is how close under the SLO a bucket estimate must be to count
// as sitting on the bucket edge: an interpolated p99 of 49.7 ms in vLLM's
// 25–50 ms ITL bucket only says the true p99 is at most 50 ms.
const edgeShare = 0.02

// SLOEdge reports whether a quantile estimated from histogram buckets lies
// within 2 % under the SLO, where the estimate cannot tell how close to the
// SLO the true value is, only that it is at most the bucket's upper edge
// (the SLO). text is what to show instead of a confident "ok":
// "≤50 ms (bucket edge)". Exact quantiles and values over the SLO are not
// edges.
func SLOEdge(v model.Opt, d model.Dist, slo time.Duration) (text string, ok bool) {
	s := slo.Seconds()
	if !v.OK || !d.Estimate || s <= 0 || v.V > s || v.V < (1-edgeShare)*s {
		return "", false
	}
	return "≤" + dur(slo) + " (bucket edge)", true
}
