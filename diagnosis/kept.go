package diagnosis

import (
	"maps"
	"math/bits"
	"reflect"
	"slices"
	"time"

	"github.com/llmtop/llmtop/model"
)

// kept is the Diagnoser's verdicts of the local rules (rule.local) on each
// endpoint, so that an evaluation judges again only what changed: an
// endpoint whose Mark moved, one whose verdict read the clock, and every
// endpoint when the input's parts that are no endpoint's changed (the
// GPUs, the log, the benchmark, which rules apply), and those that read
// what changed beside them (the routers, layers and hosted endpoints, the
// events). A fleet's steady replicas keep theirs; the rules that compare
// replicas still read every one.
type kept struct {
	byKey map[keptKey]*verdict
	pass  uint64    // evaluations, to drop the verdicts of endpoints gone
	gen   uint64    // moves when the context does: every verdict before is stale
	at    time.Time // the last evaluation's time
	cgen  uint64    // moves when the routers, layers or hosted endpoints do
	evGen uint64    // moves when the events do
	ctx   keptContext
	// judged is how many endpoints the last evaluation judged again.
	judged int
	// out is, per rule, what the endpoints' verdicts say together, and
	// handed and idle the rules handed on somewhere and idle everywhere.
	out          []ruleSaid
	handed, idle ruleSet
	// one is the env an endpoint is judged alone in, reused.
	one env
	// vs and ok are each endpoint's verdict and whether it holds, in the
	// input's order; bypass is set when most did not, and the rules ran
	// over the whole input.
	vs     []*verdict
	ok     []bool
	bypass bool
	// crossed are the rules marked local that read another endpoint
	// than the one they judged: judged over the whole input instead.
	crossed ruleSet
}

// local reports whether rule i is judged per endpoint here.
func (k *kept) local(i int) bool { return rules[i].local && !k.crossed.has(i) }

// alone reports whether rule i's verdicts are this evaluation's kept ones
// (not the whole input's, judged at once).
func (k *kept) alone(i int) bool { return !k.bypass && k.local(i) }

type keptKey struct{ url, model string }

// verdict is what the local rules said of one endpoint, and what it was
// judged on.
type verdict struct {
	mark    uint64
	gen     uint64
	before  *Baseline
	upSince time.Time
	timed   bool      // a rule read the clock: judged again next time
	until   time.Time // a rule's verdict may change with the clock then
	cgen    uint64    // the routers' generation, when a rule read them
	byCtx   bool      // a rule read the routers, layers or hosted endpoints
	batch   uint64    // batchMark of the pairs a rule read (zero: none read)
	evGen   uint64    // the events' generation, when a rule read them all
	allEvs  bool      // a rule read every endpoint's events
	urlEvs  bool      // a rule read the endpoint's events: evs
	evs     []model.Event
	lackBuf []lack // every rule's lacks, said's lacks its parts
	stale   bool   // judged with the whole input: nothing kept
	pass    uint64 // the evaluation that last read it
	said    []ruleSaid
	handed  ruleSet
	idle    ruleSet
}

// ruleSaid is what one rule said: findings, or inputs it lacked (from
// and to: their place among the endpoint's lacks).
type ruleSaid struct {
	rule     int
	fs       []Finding
	lacks    []lack
	from, to int
}

// ruleSet is a set of rules by their place in rules.
type ruleSet [2]uint64

func (s *ruleSet) add(i int)            { s[i/64] |= 1 << (i % 64) }
func (s ruleSet) has(i int) bool        { return s[i/64]&(1<<(i%64)) != 0 }
func (s ruleSet) and(o ruleSet) ruleSet { return ruleSet{s[0] & o[0], s[1] & o[1]} }
func (s ruleSet) or(o ruleSet) ruleSet  { return ruleSet{s[0] | o[0], s[1] | o[1]} }
func (s ruleSet) count() int            { return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) }

// keptContext is what a local rule reads beside its endpoint and the
// clock: when any of it changes, every verdict is judged again (those that
// read the routers, layers and hosted endpoints, or every endpoint's
// events, when those change; those that read their endpoint's events when
// its own do).
type keptContext struct {
	apply   ruleSet // the local rules whose inputs are there
	one     bool    // a single endpoint: a line without an endpoint is its
	gpu     *model.GPUSnapshot
	noGPU   string
	logsOn  bool
	bench   *Bench
	own     map[string]float64
	events  []model.Event
	context []keptKey // the routers, layers and hosted endpoints
	marks   []uint64  // and their marks
}

func newKept() *kept { return &kept{byKey: map[keptKey]*verdict{}} }

// holds reports whether v still says what the local rules would of ep.
func (v *verdict) holds(ep *Endpoint, gen, cgen, evGen uint64, now time.Time, urlEvents []model.Event) bool {
	if (v.byCtx && v.cgen != cgen) || (!v.until.IsZero() && !now.Before(v.until)) {
		return false
	}
	if v.batch != 0 && batchMark(ep.Batch) != v.batch {
		return false
	}
	if v.allEvs && v.evGen != evGen {
		return false
	}
	if v.urlEvs && !sameEvents(v.evs, urlEvents) {
		return false
	}
	return ep.Mark != 0 && v.mark == ep.Mark && v.gen == gen && !v.timed && v.before == ep.Before && v.upSince.Equal(ep.UpSince)
}

// judge brings every endpoint's verdict up to date, judging again those
// that do not hold, and gathers what they say per rule (said).
func (k *kept) judge(e *env) {
	k.pass++
	k.judged = 0
	var apply ruleSet
	for i := range rules {
		if k.local(i) && e.meets(&rules[i]) {
			apply.add(i)
		}
	}
	// built once for every endpoint judged alone
	e.hosted()
	e.routers()
	e.layers()
	e.eventsOf("")
	e.urlIndex()
	if e.memo == nil {
		e.memo = map[memoKey]string{}
	}
	if e.actions == nil {
		e.actions = map[actionsKey][]Action{}
	}
	if k.contextMoved(e, apply) || e.in.Time.Before(k.at) {
		// (a clock that went back undoes what past and reached promised)
		k.gen++
	}
	k.at = e.in.Time
	if k.routersMoved(e) {
		k.cgen++
	}
	if !sameEvents(k.ctx.events, e.in.Events) {
		k.evGen++
		k.ctx.events = slices.Clone(e.in.Events)
	}
	if len(k.out) < len(rules) {
		k.out = make([]ruleSaid, len(rules))
	}
	for i := range k.out {
		k.out[i].fs, k.out[i].lacks = k.out[i].fs[:0], k.out[i].lacks[:0]
	}
	k.handed, k.idle = ruleSet{}, ruleSet{^uint64(0), ^uint64(0)}
	// which verdicts hold: where most do not (a busy fleet), the rules
	// run once over the whole input instead, as one judging of each
	// endpoint alone costs more than its share of that
	k.vs, k.ok = slices.Grow(k.vs[:0], len(e.in.Endpoints)), slices.Grow(k.ok[:0], len(e.in.Endpoints))
	changed := 0
	for i := range e.in.Endpoints {
		ep := &e.in.Endpoints[i]
		key := keptKey{ep.URL, ep.Model()}
		v := k.byKey[key]
		switch {
		case v == nil:
			v = &verdict{}
			k.byKey[key] = v
		case v.pass == k.pass:
			v = &verdict{} // the same endpoint twice: judged, not kept
		}
		v.pass = k.pass
		held := v.holds(ep, k.gen, k.cgen, k.evGen, e.in.Time, e.eventsOf(ep.URL))
		if !held {
			changed++
		}
		k.vs, k.ok = append(k.vs, v), append(k.ok, held && !v.stale)
	}
	k.bypass = changed*2 > len(e.in.Endpoints)
	for i := range e.in.Endpoints {
		v := k.vs[i]
		if k.bypass {
			// judged with the rest, nothing kept of it but what it was
			// judged on: once most of the fleet stands again, it is
			// judged alone, and counts as changed no more
			ep := &e.in.Endpoints[i]
			*v = verdict{mark: ep.Mark, gen: k.gen, cgen: k.cgen, before: ep.Before, upSince: ep.UpSince, pass: v.pass, stale: true,
				said: v.said[:0], evs: v.evs[:0], lackBuf: v.lackBuf[:0]}
			continue
		}
		if !k.ok[i] {
			k.judgeOne(e, i, v, apply)
		}
		for _, s := range v.said {
			o := &k.out[s.rule]
			o.fs = append(o.fs, s.fs...)
			o.lacks = append(o.lacks, s.lacks...)
		}
		k.handed = k.handed.or(v.handed)
		k.idle = k.idle.and(v.idle)
	}
	// nothing of this evaluation held past it but the verdicts: their
	// memory is kept, not what it pointed at
	clear(k.vs)
	k.vs, k.ok = k.vs[:0], k.ok[:0]
	k.one = env{lacks: k.one.lacks[:0]}
	if k.bypass {
		k.judged = len(e.in.Endpoints)
	}
	if len(k.byKey) > len(e.in.Endpoints) {
		for key, v := range k.byKey {
			if v.pass != k.pass {
				delete(k.byKey, key) // gone from the input: its verdict with it
			}
		}
	}
}

// judgeOne runs the local rules that apply on endpoint i alone, into v.
func (k *kept) judgeOne(e *env, i int, v *verdict, apply ruleSet) {
	k.judged++
	ep := &e.in.Endpoints[i]
	// one env for every endpoint judged, its lacks' memory kept
	one := &k.one
	*one = env{in: e.in, all: e.all, cfg: e.cfg, byURL: e.byURL, byEvent: e.byEvent, lacks: one.lacks[:0],
		hostedIn: e.hostedIn, routersIn: e.routersIn, layersIn: e.layersIn, memo: e.memo, actions: e.actions}
	if one.byEvent == nil {
		one.byEvent = map[string][]model.Event{} // built, empty: no event
	}
	one.in.Endpoints = e.in.Endpoints[i : i+1 : i+1]
	*v = verdict{mark: ep.Mark, gen: k.gen, cgen: k.cgen, before: ep.Before, upSince: ep.UpSince,
		pass: v.pass, said: v.said[:0], evs: v.evs[:0], lackBuf: v.lackBuf[:0]}
	for r := range rules {
		if !apply.has(r) {
			continue
		}
		lacked := len(one.lacks)
		one.handed, one.idle, one.crossed = false, false, false
		fs := rules[r].eval(one)
		if one.crossed {
			// not local after all: the whole input judges it from now on
			k.crossed.add(r)
			one.lacks = one.lacks[:lacked]
			continue
		}
		if one.handed {
			v.handed.add(r)
		}
		if one.idle {
			v.idle.add(r)
		}
		if len(fs) == 0 && len(one.lacks) == lacked {
			continue
		}
		for j := range fs {
			// a kept finding is handed out again and again: whoever adds
			// to its evidence (the Diagnoser's "holding for") copies it
			fs[j].Evidence = slices.Clip(fs[j].Evidence)
			fs[j].Actions = slices.Clip(fs[j].Actions)
		}
		// (the lacks' place in one.lacks for now: they move to the
		// verdict's own memory once every rule has run)
		v.said = append(v.said, ruleSaid{rule: r, fs: fs, from: lacked, to: len(one.lacks)})
	}
	v.lackBuf = append(v.lackBuf, one.lacks...)
	for j := range v.said {
		s := &v.said[j]
		s.lacks = v.lackBuf[s.from:s.to:s.to]
	}
	clear(one.lacks)
	v.timed, v.byCtx, v.until = one.timed, one.ctxRead, one.until
	if one.batchRead {
		v.batch = batchMark(ep.Batch)
	}
	v.allEvs, v.evGen, v.urlEvs = one.allEvents, k.evGen, one.urlEvents
	if one.urlEvents {
		v.evs = append(v.evs, e.eventsOf(ep.URL)...)
	}
}

// said is what rule r says of every endpoint, from their verdicts: its
// findings, its lacks into e.lacks, and whether it handed on or was idle.
func (k *kept) said(r int, e *env) []Finding {
	o := &k.out[r]
	e.lacks = append(e.lacks, o.lacks...)
	e.handed = k.handed.has(r)
	e.idle = len(e.in.Endpoints) > 0 && k.idle.has(r)
	return o.fs
}

// contextMoved reports whether what the local rules read beside their
// endpoint changed since the last evaluation, and keeps it.
func (k *kept) contextMoved(e *env, apply ruleSet) bool {
	c := &k.ctx
	moved := c.apply != apply || c.one != (len(e.all) == 1) || c.gpu != e.in.GPU || c.noGPU != e.in.NoGPU ||
		c.logsOn != e.in.LogsOn || c.bench != e.in.Bench || !maps.Equal(c.own, e.in.OwnLength)
	if moved {
		c.apply, c.one, c.gpu, c.noGPU, c.logsOn, c.bench = apply, len(e.all) == 1, e.in.GPU, e.in.NoGPU, e.in.LogsOn, e.in.Bench
		c.own = maps.Clone(e.in.OwnLength)
	}
	return moved
}

// routersMoved reports whether the routers, layers or hosted endpoints
// changed since the last evaluation (one with the mark zero always has),
// and keeps their marks.
func (k *kept) routersMoved(e *env) bool {
	c := &k.ctx
	moved := false
	n := 0
	for _, s := range [][]Endpoint{e.hostedIn.eps, e.routersIn.eps, e.layersIn.eps} {
		for i := range s {
			key, mark := keptKey{s[i].URL, s[i].Model()}, s[i].Mark
			if n >= len(c.context) || c.context[n] != key || c.marks[n] != mark || mark == 0 {
				moved = true
				c.context, c.marks = append(c.context[:n], key), append(c.marks[:n], mark)
			}
			n++
		}
	}
	if n != len(c.context) {
		moved = true
		c.context, c.marks = c.context[:n], c.marks[:n]
	}
	return moved
}

// sameEvents reports whether two evaluations saw the same events.
func sameEvents(a, b []model.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
