package prometheus

// What a refresh hands the core: each target's Origin and Scrape, built from
// the fleet's kept state (fleet.go) once the answers are read.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// instanceURL is the endpoint's ID: the instance as Prometheus labels it,
// as a URL.
func instanceURL(instance string) string {
	instance = model.Clean(instance)
	if strings.Contains(instance, "://") {
		return instance
	}
	return "http://" + instance
}

// nameOf is the endpoint's human name: namespace/pod in Kubernetes, else
// job/instance.
func nameOf(ls map[string]string) string {
	pod, ns := ls["pod"], ls["namespace"]
	if pod == "" {
		pod, ns = ls["kubernetes_pod_name"], ls["kubernetes_namespace"]
	}
	switch {
	case pod != "" && ns != "":
		return ns + "/" + pod
	case pod != "":
		return pod
	}
	return ls["job"] + "/" + ls["instance"]
}

// target returns the known target for k, adding it (with a unique ID)
// when new.
func (s *Source) target(k tkey, e *epData) *target {
	t := s.targets[k]
	if t == nil {
		id := instanceURL(k.instance)
		for _, o := range s.targets {
			if o.id == id {
				id += "#" + model.Clean(k.job)
				break
			}
		}
		t = &target{id: model.RedactURL(id), name: nameOf(e.labels), labels: e.labels, engine: e.engine}
		s.targets[k] = t
		s.order = append(s.order, k)
	}
	return t
}

// messages turns the refresh into the core's messages: an Origin for each
// target new or back, a Scrape for each target found, and for each known
// target not found the reason (Prometheus cannot scrape it, it serves no
// engine metrics now, it left Prometheus's targets, or this refresh
// failed).
func (s *Source) messages(r *Refresh, fl *fleet, up answer, now time.Time) {
	byKey := func(a, b *epData) int {
		return cmp.Or(strings.Compare(a.key.job, b.key.job), strings.Compare(a.key.instance, b.key.instance))
	}
	if !slices.IsSortedFunc(fl.order, byKey) {
		slices.SortStableFunc(fl.order, byKey)
	}
	upOf := s.upOf
	clear(upOf)
	if up.err == nil {
		for _, row := range up.vec {
			upOf[keyOf(row.labels)] = row.v
		}
	}
	// The samples are built clean (model names are cleaned as they are
	// read, the notes here once a refresh, and From holds the table's
	// names): model.CleanScrape cleans the rest of each scrape without
	// copying their maps.
	notes := model.CleanAll(slices.Clone(r.Warnings))
	r.Msgs = slices.Grow(r.Msgs, len(fl.order)+len(s.order)/8+8)
	for _, e := range fl.order {
		k := e.key
		t := s.target(k, e)
		if !t.sent || t.gone {
			t.sent, t.gone = true, false
			r.Msgs = append(r.Msgs, s.origin(t, false, ""))
		}
		sc := s.scrape(t, e, upOf, k, notes, now, fl.w)
		samples := sc.Samples
		sc.Samples = nil
		sc = model.CleanScrape(sc)
		sc.Samples = samples
		r.Msgs = append(r.Msgs, sc)
		r.Targets++
	}
	keep := s.order[:0]
	for _, k := range s.order {
		t := s.targets[k]
		if t.gone && now.Sub(t.goneAt) > model.GoneExpiry {
			delete(s.targets, k) // the core forgets it too; back later, it is new
			continue
		}
		keep = append(keep, k)
	}
	clear(s.order[len(keep):])
	s.order = keep
	for _, k := range s.order {
		t := s.targets[k]
		if fl.found(k) != nil || t.gone {
			continue
		}
		sc := model.Scrape{Endpoint: t.id, Time: now, Identity: model.Identity{Engine: t.engine}}
		v, listed := upOf[k]
		switch {
		case up.err != nil || r.Err != "":
			sc.Err, sc.ErrKind = "not read from Prometheus this refresh: "+r.Err, model.ErrServer
		case listed && v == 0:
			sc.Err, sc.ErrKind = "Prometheus cannot scrape this target (up=0)", model.ErrUnreachable
			sc.Hint = "Prometheus's targets page says why (/targets); the engine may be down or restarting"
		case listed:
			sc.Err, sc.ErrKind = fmt.Sprintf("Prometheus scrapes this target but it serves no %s metrics now", t.engine), model.ErrNotFound
		default:
			t.gone, t.goneAt = true, now
			r.Gone++
			r.Msgs = append(r.Msgs, s.origin(t, true, "no longer among Prometheus's targets (pod gone or target dropped)"))
			continue
		}
		r.Msgs = append(r.Msgs, model.CleanScrape(sc))
	}
}

func (s *Source) origin(t *target, gone bool, why string) model.Origin {
	return model.Origin{Endpoint: t.id, Name: t.name, Source: model.SourcePrometheus, Via: s.URL(),
		Labels: t.labels, Missing: Missing, Gone: gone, GoneWhy: why}
}

func (s *Source) scrape(t *target, e *epData, upOf map[tkey]float64, k tkey, warn []string, now time.Time, w time.Duration) model.Scrape {
	sc := model.Scrape{Endpoint: t.id, Time: now, Identity: model.Identity{Engine: e.engine, Role: e.role, RoleFrom: e.roleFrom}}
	if ly := e.layer; ly != nil {
		sc.Identity.Engine, sc.Identity.Layer = model.Unknown, ly.What()
		why := "it serves " + strings.Join(ly.FleetNames(), ", ")
		if f := familyOf(e.engine); ly.Shadow != nil && len(f.present) > 0 {
			why = fmt.Sprintf("%s labelled %s, without %s", f.present[0], ly.Shadow.Label, ly.Shadow.Lacks)
		}
		sc.Err = fmt.Sprintf("%s is a %s, not an engine (%s): %s", t.id, ly.What(), why, ly.Judged())
		sc.ErrKind = model.ErrNotFound
		sc.Hint = "its engines are the other targets of this Prometheus; its own numbers are not read as an engine's"
		if e.router != nil {
			e.router.identify(ly, &sc.Identity, w, now)
		}
		return sc
	}
	if v, ok := upOf[k]; ok && v == 0 {
		// Down for Prometheus: unreachable, while its rates over the
		// window still hold what it did before.
		sc.Err, sc.ErrKind = "Prometheus cannot scrape this target (up=0); rates are over the window before it stopped answering", model.ErrUnreachable
		sc.Hint = "Prometheus's targets page says why (/targets); the engine may be down or restarting"
	}
	slices.SortFunc(e.models, func(a, b *modelState) int { return strings.Compare(a.name, b.name) })
	for _, m := range e.models {
		if m.name != "" {
			sc.Identity.Models = append(sc.Identity.Models, model.ModelInfo{ID: m.name})
		}
		var started time.Time
		var restarted []entry
		var note string
		if e.started > 0 {
			sec, frac := math.Modf(e.started)
			started = time.Unix(int64(sec), int64(frac*1e9))
			if age := now.Sub(started); age < w && age >= 0 {
				// histogram_quantile over the window would mix the run
				// before the restart with this one: no percentile until
				// the window holds this run only.
				restarted = familyOf(e.engine).hists
				note = model.Clean(fmt.Sprintf("restarted %s ago, inside the %s window: latency percentiles not shown until the window holds this run only", age.Round(time.Second), w))
			}
		}
		sm := m.sampleOf(s.fleet.entries, w, restarted)
		sm.Endpoint, sm.Time, sm.Started = t.id, now, started
		if note != "" {
			sm.Notes = append(sm.Notes, note)
		}
		sm.Notes = append(sm.Notes, warn...)
		if sc.Samples == nil {
			sc.Samples = make([]model.Sample, 0, len(e.models))
		}
		sc.Samples = append(sc.Samples, sm)
	}
	return sc
}
