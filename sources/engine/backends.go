package engine

import (
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// identify puts what a serving layer says of itself and of the engines
// behind it into the endpoint's identity, read at now.
func (s *session) identify(r role, id *model.Identity, now time.Time) {
	id.Layer, id.LayerDetail, id.Backends, id.RouterQueue, id.Tenants = r.Layer.What(), layerDetail(r), layerBackends(r), routerQueue(r), tenants(r)
	id.LoadRange = loadRange(r)
	id.Overhead = s.overhead.over(now, routerOverhead(r))
	if lr := id.LoadRange; lr != nil && lr.EventsOK {
		// The range is the one the router last acted on: now's only
		// while its count of acts grows. A count that fell is a restart.
		if s.loadEventsOK && lr.Events > s.loadEvents || s.loadEventsOK && lr.Events < s.loadEvents && lr.Events > 0 {
			s.loadActed = now
		}
		s.loadEvents, s.loadEventsOK = lr.Events, true
		lr.ActedAt = s.loadActed
	}
}

// firstFamily is the first of names r serves (nil and "" when none).
func firstFamily(r role, names []string) (*dto.MetricFamily, string) {
	for _, n := range names {
		if fam, ok := r.Counted[n]; ok && len(fam.GetMetric()) > 0 {
			return fam, n
		}
	}
	return nil, ""
}

// layerBackends is a router's word on each engine behind it, from its
// per-worker gauges (engines.Layer.Workers): health, the rate it sends
// there, its count of requests in flight, its circuit breaker and that
// breaker's consecutive failures, each known only where the router served
// its gauge (nil for a layer without per-worker gauges). From names the
// families read.
func layerBackends(r role) []model.Backend {
	wg := r.Layer.Workers
	if wg == nil {
		return nil
	}
	var set engines.BackendSet
	for _, c := range wg.Concepts() {
		fam, name := firstFamily(r, c.Names)
		if fam == nil {
			continue
		}
		set.Read(name)
		for _, m := range fam.GetMetric() {
			s := ""
			for _, l := range wg.Labels {
				if s = label(m, l); s != "" {
					break
				}
			}
			set.Set(c.What, s, scalar(m))
		}
	}
	return set.List()
}

// loadRange is a router's own max/min worker load and the count of times
// it acted on the range (nil where it serves neither gauge). The range is
// the one it last acted on: only the events counter's growth says it is
// now's.
func loadRange(r role) *model.LoadRange {
	wg := r.Layer.Workers
	if wg == nil {
		return nil
	}
	hi, hiName := firstFamily(r, wg.MaxLoad)
	lo, loName := firstFamily(r, wg.MinLoad)
	if hi == nil || lo == nil {
		return nil
	}
	lr := &model.LoadRange{Max: scalar(hi.GetMetric()[0]), Min: scalar(lo.GetMetric()[0]), From: hiName + ", " + loName}
	if !finite(lr.Max) || !finite(lr.Min) {
		return nil
	}
	if ev, evName := firstFamily(r, wg.LoadEvents); ev != nil {
		var n float64
		for _, m := range ev.GetMetric() {
			if v := scalar(m); finite(v) {
				n += v
			}
		}
		lr.Events, lr.EventsOK = n, true
		lr.From += ", " + evName
	}
	return lr
}

// layerDetail is what a router says of the engines behind it, where llmtop
// reads it: its workers, how many it counts healthy, whose breaker is open
// and the requests it counts in flight on them; a proxy's tenants; else
// the layer's own end-to-end TTFT.
func layerDetail(r role) string {
	var parts []string
	for _, p := range []string{workersDetail(r), routerTTFT(r)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if src := r.Layer.Tenants; src != nil {
		if _, ok := r.Counted[src.Requests]; ok {
			ts, unnamed := tenantsOf(r)
			parts = append(parts, tenantDetail(src, ts, unnamed))
		}
	}
	return strings.Join(parts, "; ")
}

// workersDetail sums a router's word on its workers (engines.WorkersDetail).
func workersDetail(r role) string {
	word := "workers"
	if r.Layer == &engines.ProdStackRouter {
		word = "servers"
	}
	return engines.WorkersDetail(word, layerBackends(r))
}
