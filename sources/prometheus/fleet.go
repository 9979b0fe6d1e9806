package prometheus

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// sampleRow is one series of a query's answer: the labels llmtop reads and
// the value. The labels are shared and never changed once read: every row
// of a series whose labels' bytes were the same points at the same ones
// (decoder.memo).
type sampleRow struct {
	labels *rowLabels
	v      float64
}

// fleet is one refresh's picture: each target's samples per model.
type fleet struct {
	w     time.Duration
	eps   map[tkey]*epData
	order []tkey
	// models are the distinct model names seen; overModels counts the
	// series dropped for a model past maxModels (a target) or
	// maxFleetModels (the fleet).
	models     map[string]bool
	overModels int
}

type epData struct {
	engine  model.Engine
	labels  map[string]string
	samples map[string]*model.Sample
	models  []string
	started float64
	// role is the target's prefill/decode role as its role labels say
	// (roleFrom the label); layer, when set, is the router whose own
	// numbers these series are (the production-stack router's server
	// label without model_name): classified as the single-endpoint path
	// classifies it, and never read as an engine.
	role     model.PDRole
	roleFrom string
	layer    *engines.Layer
	// router is the layer's own word (routers.go): nil when the router
	// query found none for it.
	router *routerData
	// ranks are, per model and concept, where the name read stands in the
	// table (0 newest): an endpoint that serves two names of a concept
	// (a release that publishes the old one beside the new) is read
	// under the newest.
	ranks map[rankKey]int
}

type rankKey struct{ model, concept string }

// prefer reports whether a value read under the name of rank should be
// kept for the model's concept, and whether it displaces an older one.
func (e *epData) prefer(modelName, concept string, rank int) (keep, displaces bool) {
	k := rankKey{modelName, concept}
	prev, had := e.ranks[k]
	if had && prev < rank {
		return false, false
	}
	e.ranks[k] = rank
	return true, had && prev > rank
}

// classify reads the target's role from one row of the labels term.
func (e *epData) classify(ls *rowLabels) {
	for _, l := range engines.PDLabels() {
		v := ls.get(l)
		if r, ok := engines.PDRoleOf(l, v); ok {
			e.role, e.roleFrom = r, fmt.Sprintf("%s=%q in Prometheus", l, v)
		}
	}
	for _, ly := range engines.Layers() {
		if sh := ly.Shadow; sh != nil && ls.get(sh.Label) != "" && ls.get(sh.Lacks) == "" {
			e.layer = ly
		}
	}
}

func newFleet(w time.Duration) *fleet {
	return &fleet{w: w, eps: map[tkey]*epData{}, models: map[string]bool{}}
}

func keyOf(ls *rowLabels) tkey { return tkey{ls.Job, ls.Instance} }

func (fl *fleet) ep(f family, ls *rowLabels) *epData {
	k := keyOf(ls)
	e := fl.eps[k]
	if e == nil {
		e = &epData{engine: f.engine, labels: map[string]string{}, samples: map[string]*model.Sample{}, ranks: map[rankKey]int{}}
		for _, l := range targetLabels {
			if v := ls.get(l); v != "" {
				e.labels[l] = model.Clean(v)
			}
		}
		fl.eps[k] = e
		fl.order = append(fl.order, k)
	}
	return e
}

// sample is the target's Sample for the row's model; nil when the model
// is one too many (for the target or the fleet).
func (fl *fleet) sample(e *epData, f family, ls *rowLabels) *model.Sample {
	w := fl.w
	name := ""
	if f.modelLabel != "" {
		name = model.Clean(ls.get(f.modelLabel))
	}
	sm := e.samples[name]
	if sm == nil && (len(e.models) >= maxModels || !fl.models[name] && len(fl.models) >= maxFleetModels) {
		fl.overModels++
		return nil
	}
	if sm == nil {
		fl.models[name] = true
		s := model.Sample{Model: name, Source: model.FromScrape, Gauges: map[model.Gauge]float64{}, From: map[string]string{},
			Derived: &model.Derived{By: "prometheus", Window: w, Rates: map[model.Counter]float64{},
				Ratios: map[model.Gauge]float64{}, Latency: map[model.Latency]model.Dist{}}}
		sm = &s
		e.samples[name] = sm
		e.models = append(e.models, name)
	}
	return sm
}

// familyOf returns the engine's family (a zero one when it has none).
func familyOf(e model.Engine) family {
	for _, f := range families {
		if f.engine == e {
			return f
		}
	}
	return family{}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (fl *fleet) addState(f family, rs []sampleRow) {
	for _, r := range rs {
		if keyOf(r.labels) == (tkey{}) {
			continue
		}
		c := r.labels.Concept
		e := fl.ep(f, r.labels)
		if c == "labels" {
			for _, l := range targetLabels {
				if v := r.labels.get(l); v != "" {
					e.labels[l] = model.Clean(v)
				}
			}
			e.classify(r.labels)
			continue
		}
		if c == "started" {
			if finite(r.v) && r.v > 0 {
				e.started = r.v
			}
			continue
		}
		sm := fl.sample(e, f, r.labels)
		if sm == nil {
			continue
		}
		kind, name, _ := strings.Cut(c, ":")
		if !finite(r.v) || r.v < 0 {
			continue // 0/0 (no queries in the window) is unknown, not zero
		}
		en, ok := f.lookup(c)
		rank := en.rank(r.labels.From)
		if !ok || rank < 0 {
			continue // not a term this family asked for
		}
		if keep, _ := e.prefer(sm.Model, c, rank); !keep {
			continue
		}
		en.cites(sm.From, rank)
		switch kind {
		case "gauge":
			sm.Gauges[model.Gauge(name)] = r.v
		case "rate":
			sm.Derived.Rates[model.Counter(name)] = r.v
		case "ratio":
			sm.Derived.Ratios[model.Gauge(name)] = r.v
		}
	}
}

func (fl *fleet) addLatency(f family, rs []sampleRow) {
	for _, r := range rs {
		if keyOf(r.labels) == (tkey{}) {
			continue
		}
		// "lat:ttft:p99": cut, not split (no allocation per row)
		kind, rest, _ := strings.Cut(r.labels.Concept, ":")
		lat, stat, ok := strings.Cut(rest, ":")
		if kind != "lat" || !ok || strings.Contains(stat, ":") {
			continue
		}
		en, ok := f.lookup(r.labels.Concept)
		rank := en.rank(r.labels.From)
		if !ok || rank < 0 {
			continue
		}
		e := fl.ep(f, r.labels)
		sm := fl.sample(e, f, r.labels)
		if sm == nil {
			continue
		}
		// "lat:itl", cut from the concept rather than built: no allocation per row
		keep, displaces := e.prefer(sm.Model, r.labels.Concept[:len("lat:")+len(lat)], rank)
		if !keep {
			continue // the endpoint serves a newer name of this histogram
		}
		en.cites(sm.From, rank)
		l := model.Latency(lat)
		d, ok := sm.Derived.Latency[l]
		if !ok || displaces {
			d = model.Dist{Exposed: true}
		}
		v := model.None
		if finite(r.v) && r.v >= 0 {
			v = model.Some(r.v)
		}
		if strings.HasPrefix(stat, "p") {
			d.Estimate = true // interpolated in the buckets by histogram_quantile
		}
		switch stat {
		case "p50":
			d.P50 = v
		case "p90":
			d.P90 = v
		case "p99":
			d.P99 = v
		case "mean":
			d.Mean = v
		case "count":
			d.Count = v.V
		}
		sm.Derived.Latency[l] = d
	}
}

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
	sort.SliceStable(fl.order, func(i, j int) bool {
		a, b := fl.order[i], fl.order[j]
		return a.job+"\x00"+a.instance < b.job+"\x00"+b.instance
	})
	upOf := map[tkey]float64{}
	if up.err == nil {
		for _, row := range up.vec {
			upOf[keyOf(row.labels)] = row.v
		}
	}
	for _, k := range fl.order {
		e := fl.eps[k]
		t := s.target(k, e)
		if !t.sent || t.gone {
			t.sent, t.gone = true, false
			r.Msgs = append(r.Msgs, s.origin(t, false, ""))
		}
		r.Msgs = append(r.Msgs, model.CleanScrape(s.scrape(t, e, upOf, k, r.Warnings, now, fl.w)))
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
		if _, found := fl.eps[k]; found || t.gone {
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
	sort.Strings(e.models)
	for _, name := range e.models {
		if name != "" {
			sc.Identity.Models = append(sc.Identity.Models, model.ModelInfo{ID: name})
		}
		sm := e.samples[name]
		sm.Endpoint, sm.Time = t.id, now
		if e.started > 0 {
			sec, frac := math.Modf(e.started)
			sm.Started = time.Unix(int64(sec), int64(frac*1e9))
			if age := now.Sub(sm.Started); age < w && age >= 0 {
				// histogram_quantile over the window would mix the run
				// before the restart with this one: no percentile until
				// the window holds this run only.
				sm.Derived.Latency = nil
				for _, l := range familyOf(e.engine).hists {
					delete(sm.From, l.cite)
				}
				sm.Notes = append(sm.Notes, fmt.Sprintf("restarted %s ago, inside the %s window: latency percentiles not shown until the window holds this run only", age.Round(time.Second), w))
			}
		}
		sm.Notes = append(sm.Notes, warn...)
		sc.Samples = append(sc.Samples, *sm)
	}
	return sc
}
