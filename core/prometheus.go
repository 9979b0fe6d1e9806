package core

import (
	"slices"
	"time"

	"github.com/llmtop/llmtop/model"
)

// applyOrigin records who reads an endpoint for llmtop (Prometheus) and,
// when the target left that source, drops its numbers and shows it gone:
// a pod deleted must not stay frozen at its last values, nor read as an
// outage (a scale-down is not one). A gone endpoint is judged by no rule
// and leaves the core model.GoneExpiry later (expireGone).
func (m *Monitor) applyOrigin(o model.Origin) {
	e := m.endpoint(o.Endpoint)
	prev := e.Origin
	oc := o
	e.Origin = &oc
	m.ver.Store++
	if !o.Gone {
		return // back (its scrape says how it is), or news of its labels
	}
	if prev != nil && prev.Gone {
		return
	}
	for _, k := range m.store.Keys() {
		if k.Endpoint == o.Endpoint {
			m.store.Forget(k)
			delete(m.series, k)
		}
	}
	why := o.GoneWhy
	if why == "" {
		why = "gone from " + o.Source
	}
	t := m.now
	if t.IsZero() {
		t = time.Now()
	}
	m.setLife(e, model.LifeGone, t, why)
	if r := e.Current(); r != nil && r.Ended == nil {
		m.endRun(e, t, model.RunPlanned, why, "")
	}
	e.Err, e.ErrKind, e.Hint = why, "", ""
	// A router's word on its backends and its queue are numbers too.
	e.Identity.Backends, e.Identity.RouterQueue, e.Identity.LayerDetail = nil, nil, ""
	if e.downSince.IsZero() {
		e.downSince = t // a target that comes back starts a new run
	}
	m.clearAcks(o.Endpoint)
	m.addEvent(model.Event{Time: t, Endpoint: o.Endpoint, Source: o.Source, Kind: "target_gone",
		Severity: model.SevInfo, Category: "availability", Title: why})
}

// expireGone forgets the endpoints gone for longer than model.GoneExpiry.
func (m *Monitor) expireGone(now time.Time) {
	expired := func(u string) bool {
		e := m.eps[u]
		return e != nil && e.Life == model.LifeGone && e.Origin != nil && e.Origin.Gone && now.Sub(e.LifeSince) > model.GoneExpiry
	}
	if !slices.ContainsFunc(m.order, expired) {
		return
	}
	// a new list, the old one left as it was: URLs hands it out
	keep := make([]string, 0, len(m.order))
	for _, u := range m.order {
		if expired(u) {
			delete(m.eps, u)
			m.ver.Store++
			continue
		}
		keep = append(keep, u)
	}
	m.order = keep
}

// originJSON adds the endpoint's name, source and what the source cannot
// give to its JSON entry.
func originJSON(ej *model.EndpointJSON, e *Endpoint) {
	if e == nil || e.Origin == nil {
		return
	}
	ej.Name, ej.Source = e.Origin.Name, e.Origin.Source
	ej.Missing = append([]string(nil), e.Origin.Missing...)
}

// Name is the endpoint's human name: its Origin's (namespace/pod or
// job/instance) when another source reads it, else its URL.
func (e *Endpoint) Name() string {
	if e != nil && e.Origin != nil && e.Origin.Name != "" {
		return e.Origin.Name
	}
	if e == nil {
		return ""
	}
	return e.URL
}
