package prometheus

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// sampleRow is one series of a query's answer: the labels llmtop reads and
// the value. The labels are shared and never changed once read: every row
// of a series whose labels' bytes were the same points at the same ones
// (decoder.memo), and plan at how the fleet read them last (nil for a row
// no decoder holds).
type sampleRow struct {
	labels *rowLabels
	plan   *rowPlan
	v      float64
}

// fleet is the source's picture of the fleet, refresh after refresh: each
// target's samples per model, rebuilt every refresh (its values are read
// anew), in state kept from one refresh to the next so that a fleet whose
// targets, models and names did not change costs no map of its own and no
// allocation but the messages for the core.
type fleet struct {
	w     time.Duration
	gen   uint32
	eps   map[tkey]*epData
	order []*epData // the targets found this refresh, as found
	// known are the source's targets: a target it knows needs no labels
	// read for its Origin (sent once, when it was new).
	known map[tkey]*target
	// models are the distinct model names seen; overModels counts the
	// series dropped for a model past maxModels (a target) or
	// maxFleetModels (the fleet).
	models     map[string]bool
	overModels int
	concepts   map[planKey]*conceptPlan
	// entries number the families' entries a concept was read by.
	entries  []*entry
	entryIDs map[*entry]uint16
}

// entryID numbers e.
func (fl *fleet) entryID(e *entry) uint16 {
	id, ok := fl.entryIDs[e]
	if !ok {
		id = uint16(len(fl.entries))
		fl.entries = append(fl.entries, e)
		fl.entryIDs[e] = id
	}
	return id
}

// epData is a target: what this refresh read of it (gen is the refresh
// that last found it), in state kept while it is found.
type epData struct {
	key  tkey
	gen  uint32
	dead bool // no longer in the fleet's map: plans that hold it look again

	engine  model.Engine
	labels  map[string]string // read for a target the source does not know yet
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
	// models are the models found this refresh, in the order found; all
	// are the model states kept.
	models []*modelState
	all    []*modelState
}

// modelState is what a refresh read of one model of a target, by concept
// (conceptID): the rank of the name read (0 newest, -1 none: an endpoint
// that serves two names of a concept is read under the newest), the entry
// it was read by (fleet.entries), and the value or distribution.
type modelState struct {
	name string
	e    *epData // nil once dropped
	gen  uint32
	rank []int8
	en   []uint16
	val  []float64
	lat  []latRead // by latIDs
	// cited is the last From handed to the core, and what it was built
	// from.
	cited struct {
		names     map[string]string
		restarted bool
		rank      []int8
		en        []uint16
	}
	// built is the last Sample's maps handed to the core, and what they
	// were built from: a steady replica's next refresh hands them again.
	built struct {
		sm        model.Sample
		w         time.Duration
		restarted bool
		rank      []int8
		en        []uint16
		val       []float64
		lat       []latRead
	}
}

// latRead is a latency's statistics as read: p50, p90, p99, mean and
// count, known where their bit is set in ok (a model.Dist, compact).
type latRead struct {
	v        [5]float64
	ok       uint8
	exposed  bool
	estimate bool
}

// stats are latRead's, by the names the latency terms tag them with.
var stats = map[string]int{"p50": 0, "p90": 1, "p99": 2, "mean": 3, "count": 4}

func (l *latRead) dist() model.Dist {
	opt := func(i int) model.Opt {
		if l.ok&(1<<i) == 0 {
			return model.None
		}
		return model.Some(l.v[i])
	}
	return model.Dist{Exposed: l.exposed, Estimate: l.estimate, P50: opt(0), P90: opt(1), P99: opt(2), Mean: opt(3), Count: l.v[4]}
}

// conceptIDs number every concept the families read ("gauge:running",
// "lat:ttft") across families, in the order the queries ask them; latIDs
// number the latencies among them.
var conceptIDs, latIDs = numberConcepts(families)

func numberConcepts(fs []family) (ids, lats map[string]int) {
	ids, lats = map[string]int{}, map[string]int{}
	for _, f := range fs {
		for _, g := range []struct {
			kind string
			es   []entry
		}{{"gauge", f.gauges}, {"rate", f.counters}, {"ratio", f.ratios}, {"lat", f.hists}} {
			for _, e := range g.es {
				c := g.kind + ":" + e.key
				if _, ok := ids[c]; !ok {
					ids[c] = len(ids)
				}
				if _, ok := lats[e.key]; g.kind == "lat" && !ok {
					lats[e.key] = len(lats)
				}
			}
		}
	}
	return ids, lats
}

// prefer reports whether a value read under the name of rank should be
// kept for the concept, and whether it displaces an older one.
func (m *modelState) prefer(cid, rank int) (keep, displaces bool) {
	prev := int(m.rank[cid])
	if prev >= 0 && prev < rank {
		return false, false
	}
	m.rank[cid] = int8(rank)
	return true, prev > rank
}

// rowPlan is how the fleet read a row the last time its labels were the
// same (a decoder's memo holds it beside them): the concept's reading, the
// model, and the target and model state, while they last.
type rowPlan struct {
	fam   *family
	lat   bool // made by addLatency (the two read a concept differently)
	cp    *conceptPlan
	model string
	e     *epData
	ms    *modelState
	cls   *rowClass
}

// rowClass is a labels row's reading of the target's role and layer.
type rowClass struct {
	role     model.PDRole
	roleFrom string
	layer    *engines.Layer
}

// conceptPlan is what a family reads under a concept and metric name.
type conceptPlan struct {
	kind planKind
	cid  int
	lid  int    // a latency's number (latIDs)
	en   uint16 // the entry (fleet.entries)
	rank int
	// stat is a latency's statistic (stats; -1 one not read), estimate
	// whether it is a percentile (interpolated in the buckets by
	// histogram_quantile).
	stat     int
	estimate bool
}

type planKind uint8

const (
	planSkip    planKind = iota // not a row this reader reads
	planLabels                  // the target's labels
	planStarted                 // its process start time
	planSample                  // a model's row that holds no value read (a name not asked, an unknown concept)
	planGauge
	planRate
	planRatio
	planLatency
)

type planKey struct {
	fam           *family
	lat           bool
	concept, from string
}

func newFleet(known map[tkey]*target) *fleet {
	return &fleet{eps: map[tkey]*epData{}, known: known, models: map[string]bool{}, concepts: map[planKey]*conceptPlan{},
		entryIDs: map[*entry]uint16{}}
}

// begin starts a refresh over the window w.
func (fl *fleet) begin(w time.Duration) {
	fl.w = w
	fl.gen++
	clear(fl.order)
	fl.order = fl.order[:0]
	clear(fl.models)
	fl.overModels = 0
}

// end drops the targets this refresh did not find.
func (fl *fleet) end() {
	if len(fl.eps) == len(fl.order) {
		return
	}
	for k, e := range fl.eps {
		if e.gen != fl.gen {
			e.dead = true
			delete(fl.eps, k)
		}
	}
}

// found is the target k if this refresh found it.
func (fl *fleet) found(k tkey) *epData {
	if e := fl.eps[k]; e != nil && e.gen == fl.gen {
		return e
	}
	return nil
}

// classify reads the target's role and layer from one row of the labels
// term.
func classify(ls *rowLabels) *rowClass {
	c := &rowClass{}
	for _, l := range pdLabels {
		v := ls.get(l)
		if r, ok := engines.PDRoleOf(l, v); ok {
			c.role, c.roleFrom = r, fmt.Sprintf("%s=%q in Prometheus", l, v)
		}
	}
	for _, ly := range engines.Layers() {
		if sh := ly.Shadow; sh != nil && ls.get(sh.Label) != "" && ls.get(sh.Lacks) == "" {
			c.layer = ly
		}
	}
	return c
}

var pdLabels = engines.PDLabels()

func keyOf(ls *rowLabels) tkey { return tkey{ls.Job, ls.Instance} }

// ep is the target of the row's labels, found this refresh.
func (fl *fleet) ep(f family, ls *rowLabels) *epData {
	k := keyOf(ls)
	e := fl.eps[k]
	if e == nil {
		e = &epData{key: k}
		fl.eps[k] = e
	}
	fl.touch(e, f, ls)
	return e
}

// touch marks e found this refresh, the first time starting it afresh.
func (fl *fleet) touch(e *epData, f family, ls *rowLabels) {
	if e.gen == fl.gen {
		return
	}
	e.gen = fl.gen
	e.engine, e.started, e.role, e.roleFrom, e.layer, e.router = f.engine, 0, "", "", nil, nil
	clear(e.models)
	e.models = e.models[:0]
	e.labels = nil
	if fl.known[e.key] == nil {
		e.labels = map[string]string{}
		e.readLabels(ls)
	}
	fl.order = append(fl.order, e)
}

// readLabels reads the target's labels from a row, for a target the
// source does not know yet (once known, its Origin has been sent).
func (e *epData) readLabels(ls *rowLabels) {
	if e.labels == nil {
		return
	}
	for _, l := range targetLabels {
		if v := ls.get(l); v != "" {
			e.labels[l] = model.Clean(v)
		}
	}
}

// target is the row's target, through its plan while that holds.
func (fl *fleet) target(pl *rowPlan, f family, ls *rowLabels) *epData {
	if e := pl.e; e != nil && !e.dead {
		fl.touch(e, f, ls)
		return e
	}
	pl.e, pl.ms = fl.ep(f, ls), nil
	return pl.e
}

// sample is the target's state for the row's model, found this refresh;
// nil when the model is one too many (for the target or the fleet).
func (fl *fleet) sample(e *epData, pl *rowPlan) *modelState {
	m := pl.ms
	if m == nil || m.e != e {
		m = nil
		for _, x := range e.all {
			if x.name == pl.model {
				m = x
				break
			}
		}
	}
	if m != nil && m.gen == fl.gen {
		pl.ms = m
		return m
	}
	name := pl.model
	if len(e.models) >= maxModels || !fl.models[name] && len(fl.models) >= maxFleetModels {
		fl.overModels++
		return nil
	}
	fl.models[name] = true
	if m == nil {
		if len(e.all) >= 2*maxModels {
			e.all = slices.DeleteFunc(e.all, func(x *modelState) bool {
				if x.gen != fl.gen {
					x.e = nil // plans that hold it look again
					return true
				}
				return false
			})
		}
		m = &modelState{name: name, e: e, rank: make([]int8, len(conceptIDs)), en: make([]uint16, len(conceptIDs)),
			val: make([]float64, len(conceptIDs)), lat: make([]latRead, len(latIDs))}
		e.all = append(e.all, m)
	}
	m.gen = fl.gen
	for i := range m.rank {
		m.rank[i] = -1
	}
	clear(m.lat)
	e.models = append(e.models, m)
	pl.ms = m
	return m
}

// plan is the row's reading by family f (lat: by addLatency), made once
// while its labels stay the same.
func (fl *fleet) plan(f *family, r sampleRow, lat bool, tmp *rowPlan) *rowPlan {
	pl := r.plan
	if pl == nil {
		pl = tmp
	} else if pl.fam == f && pl.lat == lat && pl.cp != nil {
		return pl
	}
	*pl = rowPlan{fam: f, lat: lat}
	if f.modelLabel != "" {
		pl.model = model.Clean(r.labels.get(f.modelLabel))
	}
	k := planKey{f, lat, r.labels.Concept, r.labels.From}
	cp := fl.concepts[k]
	if cp == nil {
		cp = fl.conceptPlan(f, k.concept, k.from, lat)
		if len(fl.concepts) < 4096 { // the answers' concepts are the queries' own: a few dozen
			fl.concepts[k] = cp
		}
	}
	pl.cp = cp
	if cp.kind == planLabels {
		pl.cls = classify(r.labels)
	}
	return pl
}

// conceptPlan reads a concept and metric name of the family's, as the
// state answer (lat false) or the latency answer reads it.
func (fl *fleet) conceptPlan(f *family, c, from string, lat bool) *conceptPlan {
	if !lat {
		switch c {
		case "labels":
			return &conceptPlan{kind: planLabels}
		case "started":
			return &conceptPlan{kind: planStarted}
		}
	}
	kind, rest, _ := strings.Cut(c, ":")
	name, stat, hasStat := strings.Cut(rest, ":")
	sample := planSample // a state row's model is there even when the row is not read
	if lat {
		sample = planSkip
		if kind != "lat" || !hasStat || strings.Contains(stat, ":") {
			return &conceptPlan{kind: planSkip}
		}
	}
	en := f.entry(c)
	rank := -1
	if en != nil {
		rank = en.rank(from)
	}
	if rank < 0 {
		return &conceptPlan{kind: sample} // not a term this family asked for
	}
	cp := &conceptPlan{en: fl.entryID(en), rank: rank}
	if lat {
		cp.kind, cp.cid, cp.lid = planLatency, conceptIDs["lat:"+name], latIDs[name]
		cp.stat, cp.estimate = -1, strings.HasPrefix(stat, "p")
		if i, ok := stats[stat]; ok {
			cp.stat = i
		}
		return cp
	}
	cid, ok := conceptIDs[c]
	if !ok {
		return &conceptPlan{kind: sample}
	}
	cp.cid = cid
	switch kind {
	case "gauge":
		cp.kind = planGauge
	case "rate":
		cp.kind = planRate
	case "ratio":
		cp.kind = planRatio
	default:
		cp.kind = planSample
	}
	return cp
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

func (fl *fleet) addState(f *family, rs []sampleRow) {
	var tmp rowPlan
	for _, r := range rs {
		if keyOf(r.labels) == (tkey{}) {
			continue
		}
		pl := fl.plan(f, r, false, &tmp)
		e := fl.target(pl, *f, r.labels)
		switch pl.cp.kind {
		case planLabels:
			e.readLabels(r.labels)
			if c := pl.cls; c.role != "" {
				e.role, e.roleFrom = c.role, c.roleFrom
			}
			if c := pl.cls; c.layer != nil {
				e.layer = c.layer
			}
			continue
		case planStarted:
			if finite(r.v) && r.v > 0 {
				e.started = r.v
			}
			continue
		}
		m := fl.sample(e, pl)
		if m == nil || !finite(r.v) || r.v < 0 {
			continue // 0/0 (no queries in the window) is unknown, not zero
		}
		cp := pl.cp
		if cp.kind == planSample {
			continue
		}
		if keep, _ := m.prefer(cp.cid, cp.rank); !keep {
			continue
		}
		m.en[cp.cid], m.val[cp.cid] = cp.en, r.v
	}
}

func (fl *fleet) addLatency(f *family, rs []sampleRow) {
	var tmp rowPlan
	for _, r := range rs {
		if keyOf(r.labels) == (tkey{}) {
			continue
		}
		pl := fl.plan(f, r, true, &tmp)
		cp := pl.cp
		if cp.kind != planLatency {
			continue
		}
		e := fl.target(pl, *f, r.labels)
		m := fl.sample(e, pl)
		if m == nil {
			continue
		}
		keep, displaces := m.prefer(cp.cid, cp.rank)
		if !keep {
			continue // the endpoint serves a newer name of this histogram
		}
		m.en[cp.cid] = cp.en
		d := &m.lat[cp.lid]
		if !d.exposed || displaces {
			*d = latRead{exposed: true}
		}
		d.estimate = d.estimate || cp.estimate
		switch {
		case cp.stat < 0: // not one read
		case finite(r.v) && r.v >= 0:
			d.v[cp.stat], d.ok = r.v, d.ok|1<<cp.stat
		default:
			d.v[cp.stat], d.ok = 0, d.ok&^(1<<cp.stat)
		}
	}
}

// sampleOf is the model's Sample for the core: new maps for values that
// changed (the core keeps what it is given), each the size it needs; a
// replica whose numbers did not change gets the last refresh's maps and
// Derived again, and From, the names read, is the last refresh's while they
// are the same (a map the core is given is never written again): the store
// reads a steady replica as the same reading by the maps' addresses
// (model.sameReading), and the Derived it prepared stands. restarted are
// the family's histograms when the target restarted inside the window: no
// latency, and their names not cited.
func (m *modelState) sampleOf(entries []*entry, w time.Duration, restarted []entry) model.Sample {
	from := m.from(entries, restarted)
	b := &m.built
	if b.sm.Gauges != nil && b.w == w && b.restarted == (restarted != nil) && sameMap(b.sm.From, from) &&
		slices.Equal(b.rank, m.rank) && slices.Equal(b.en, m.en) && slices.Equal(b.val, m.val) && slices.Equal(b.lat, m.lat) {
		return model.Sample{Model: m.name, Source: model.FromScrape, Gauges: b.sm.Gauges, From: from, Derived: b.sm.Derived}
	}
	sm := m.build(entries, w, restarted, from)
	b.sm, b.w, b.restarted = sm, w, restarted != nil
	b.rank, b.en = append(b.rank[:0], m.rank...), append(b.en[:0], m.en...)
	b.val, b.lat = append(b.val[:0], m.val...), append(b.lat[:0], m.lat...)
	return sm
}

// sameMap reports whether a and b are one map (m.from hands the last one
// again while the names read stand).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// build is sampleOf's Sample built anew.
func (m *modelState) build(entries []*entry, w time.Duration, restarted []entry, from map[string]string) model.Sample {
	var n [planLatency + 1]int
	for cid, r := range m.rank {
		if r >= 0 {
			n[conceptKinds[cid]]++
		}
	}
	sm := model.Sample{Model: m.name, Source: model.FromScrape, Gauges: make(map[model.Gauge]float64, n[planGauge]),
		From: from,
		Derived: &model.Derived{By: "prometheus", Window: w, Rates: make(map[model.Counter]float64, n[planRate]),
			Ratios: make(map[model.Gauge]float64, n[planRatio])}}
	if restarted == nil {
		sm.Derived.Latency = make(map[model.Latency]model.Dist, n[planLatency])
	}
	for cid, r := range m.rank {
		if r < 0 {
			continue
		}
		en := entries[m.en[cid]]
		switch conceptKinds[cid] {
		case planGauge:
			sm.Gauges[model.Gauge(en.key)] = m.val[cid]
		case planRate:
			sm.Derived.Rates[model.Counter(en.key)] = m.val[cid]
		case planRatio:
			sm.Derived.Ratios[model.Gauge(en.key)] = m.val[cid]
		case planLatency:
			if restarted == nil {
				sm.Derived.Latency[model.Latency(en.key)] = m.lat[conceptLat[cid]].dist()
			}
		}
	}
	return sm
}

// from is Sample.From: the name each concept was read under.
func (m *modelState) from(entries []*entry, restarted []entry) map[string]string {
	c := &m.cited
	if c.names != nil && (restarted == nil) == !c.restarted && slices.Equal(c.rank, m.rank) && slices.Equal(c.en, m.en) {
		return c.names
	}
	size := 0
	for cid, r := range m.rank {
		if r >= 0 {
			size++
			if entries[m.en[cid]].citePair != "" {
				size++
			}
		}
	}
	names := make(map[string]string, size)
	for cid, r := range m.rank {
		if r >= 0 {
			entries[m.en[cid]].cites(names, int(r))
		}
	}
	for _, l := range restarted {
		delete(names, l.cite)
	}
	c.names, c.restarted = names, restarted != nil
	c.rank, c.en = append(c.rank[:0], m.rank...), append(c.en[:0], m.en...)
	return names
}

// conceptKinds are the kinds of the concepts by number, and conceptLat
// the latencies' numbers (latIDs).
var conceptKinds, conceptLat = func() ([]planKind, []int) {
	kinds, lats := make([]planKind, len(conceptIDs)), make([]int, len(conceptIDs))
	for c, id := range conceptIDs {
		kind, name, _ := strings.Cut(c, ":")
		kinds[id] = map[string]planKind{"gauge": planGauge, "rate": planRate, "ratio": planRatio, "lat": planLatency}[kind]
		lats[id] = latIDs[name]
	}
	return kinds, lats
}()
