package core

import (
	"github.com/llmtop/llmtop/model"
)

// applyOrigin records who reads an endpoint for llmtop (Prometheus) and,
// when the target left that source, drops its numbers and shows it gone:
// a pod deleted must not stay frozen at its last values.
func (m *Monitor) applyOrigin(o model.Origin) {
	e := m.endpoint(o.Endpoint)
	prev := e.Origin
	oc := o
	e.Origin = &oc
	m.ver.Store++
	if !o.Gone {
		return
	}
	if prev != nil && prev.Gone {
		return
	}
	for _, k := range m.store.Keys() {
		if k.Endpoint == o.Endpoint {
			m.store.Forget(k)
		}
	}
	why := o.GoneWhy
	if why == "" {
		why = "gone from " + o.Source
	}
	if t := m.now; !t.IsZero() {
		m.setLife(e, model.LifeUnreachable, t, why)
		if r := e.Current(); r != nil && r.Ended == nil {
			m.endRun(e, t, model.RunUnknown, why, "")
		}
	}
	e.Err, e.ErrKind = why, model.ErrUnreachable
	if e.downSince.IsZero() {
		e.downSince = m.now // a target that comes back starts a new run
	}
	m.addEvent(model.Event{Time: m.now, Endpoint: o.Endpoint, Source: o.Source, Kind: "target_gone",
		Severity: model.SevWarn, Category: "availability", Title: why})
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
