package engine

import (
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// A router's own added latency (issue 26: router overhead vs engine
// time): read from the histogram its layer names (engines.Overhead), with
// the time to first token it is compared with, as cumulative sums; the
// session turns them into means over the last minute of scrapes.

// routerOverhead reads a router's or proxy's overhead histogram and the
// TTFT it is compared with, cumulative since the layer started; for a
// layer that reports none it says so (nil for a KV cache layer, which
// routes nothing).
func routerOverhead(r role) *model.RouterOverhead {
	if r.Layer == nil || (r.Role != engines.RoleRouter && r.Role != engines.RoleProxy) {
		return nil
	}
	spec := r.Layer.Overhead
	if spec == nil {
		return &model.RouterOverhead{Missing: "the " + r.Layer.Name + " reports no latency of its own"}
	}
	o := &model.RouterOverhead{Metric: spec.Name, TTFTMetric: spec.TTFT, TTFTIncludes: spec.TTFTIncludes}
	sum, n, ok := histSum(r, spec.Name)
	if !ok {
		o.Missing = "the " + r.Layer.Name + " serves no " + spec.Name + overheadAbsent(r.Layer)
		return o
	}
	o.Sum, o.Requests = sum*spec.Unit, n
	if n > 0 {
		o.Mean = o.Sum / n
	}
	if tsum, tn, ok := histSum(r, spec.TTFT); ok {
		o.TTFTSum, o.TTFTRequests = tsum, tn
		if tn > 0 {
			o.TTFTMean = tsum / tn
		}
	}
	return o
}

// overheadAbsent says when a layer leaves its overhead histogram out.
func overheadAbsent(l *engines.Layer) string {
	if l == &engines.DynamoFrontend {
		return " (it is registered where the frontend runs the KV router: --router-mode kv)"
	}
	return ""
}

// histSum is a histogram family's sum and count over all its series (ok
// false when the family is absent or no series is a histogram).
func histSum(r role, name string) (sum, n float64, ok bool) {
	fam, found := r.Counted[name]
	if !found {
		return 0, 0, false
	}
	for _, m := range fam.GetMetric() {
		h := m.GetHistogram()
		if h == nil || !finite(h.GetSampleSum()) {
			continue
		}
		sum += h.GetSampleSum()
		n += float64(h.GetSampleCount())
		ok = true
	}
	return sum, n, ok
}

// overheadWindow keeps a router's cumulative overhead and TTFT sums of the
// last minute of scrapes, so the means are the last minute's, not since
// the router started (a router that slowed down a minute ago would take
// hours to move a mean since its start).
type overheadWindow struct {
	snaps []overheadSnap
}

type overheadSnap struct {
	t                  time.Time
	sum, n, tsum, tn   float64
	metric, ttftMetric string
}

// overheadSpan is how far back the window reaches; overheadMinSpan the
// shortest span read as a window (before it: the means since start).
const (
	overheadSpan    = time.Minute
	overheadMinSpan = 10 * time.Second
)

// over returns o's means over the window, keeping o's sums for the next
// scrape; o without numbers passes through (and empties the window).
func (w *overheadWindow) over(now time.Time, o *model.RouterOverhead) *model.RouterOverhead {
	if o == nil || o.Missing != "" {
		w.snaps = w.snaps[:0]
		return o
	}
	cur := overheadSnap{t: now, sum: o.Sum, n: o.Requests, tsum: o.TTFTSum, tn: o.TTFTRequests, metric: o.Metric, ttftMetric: o.TTFTMetric}
	if k := len(w.snaps); k > 0 {
		last := w.snaps[k-1]
		// a restart (counts going back) or another layer: start over
		if cur.n < last.n || cur.tn < last.tn || cur.metric != last.metric || cur.ttftMetric != last.ttftMetric || !now.After(last.t) {
			w.snaps = w.snaps[:0]
		}
	}
	// drop what is older than the span, keeping one at or beyond it as
	// the base
	for len(w.snaps) > 1 && now.Sub(w.snaps[1].t) >= overheadSpan {
		w.snaps = w.snaps[1:]
	}
	w.snaps = append(w.snaps, cur)
	base := w.snaps[0]
	span := now.Sub(base.t)
	if span < overheadMinSpan {
		return o // since the router started, until a window is kept
	}
	out := *o
	out.Window = span
	out.Requests, out.Mean = cur.n-base.n, 0
	if out.Requests > 0 {
		out.Mean = (cur.sum - base.sum) / out.Requests
	}
	out.TTFTRequests, out.TTFTMean = cur.tn-base.tn, 0
	if out.TTFTRequests > 0 {
		out.TTFTMean = (cur.tsum - base.tsum) / out.TTFTRequests
	}
	return &out
}
