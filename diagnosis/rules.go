package diagnosis

import (
	"iter"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// need is the set of inputs a rule reads.
type need uint8

const (
	needMetrics  need = 1 << iota // at least one endpoint with metrics
	needGPU                       // a GPU snapshot with devices
	needLogs                      // a log source attached
	needBench                     // a benchmark result
	needReplicas                  // two endpoints serving one model
	needHost                      // a host reading of an endpoint's machine
	needRouter                    // a router that reports its backends
	needLayer                     // a router or proxy in front of the engines
)

var needNames = []struct {
	n    need
	name string
	code string // its MissingReason
}{
	{needMetrics, "engine metrics (no endpoint returned /metrics)", "no_metrics"},
	{needGPU, "GPU readings (no NVML driver or --no-gpu)", "no_gpu"},
	{needLogs, "engine log (attach it with --log, --log-cmd, --docker, --journal or --kube)", "no_log"},
	{needBench, "benchmark results (none run yet: press b or run llmtop bench)", "no_bench"},
	{needReplicas, "replicas (fewer than two endpoints serve the same model)", "no_replicas"},
	{needHost, "host readings (no endpoint on this machine, or its port's process not found)", "no_host"},
	{needRouter, "a router's word on its backends (no watched router reports its backends' health and traffic or its own queue)", "no_router"},
	{needLayer, "a router's own latency (no router or proxy in front of the engines is watched)", "no_router"},
}

// rule is one check. eval returns every candidate finding it sees now; the
// Diagnoser decides when they open and close.
type rule struct {
	id     string
	checks string // what it checks, for the all-clear line
	needs  need
	// hold is how long the condition must hold before the finding opens.
	hold func(Config) time.Duration
	// settles: the condition is read directly (a scrape's answer, the
	// lifecycle), not a noisy threshold, so its finding closes as soon as
	// the condition is gone rather than after Config.Clear: "engine
	// starting" must not sit on top of an engine that serves.
	settles bool
	// local: the rule judges each endpoint by itself. What it says of an
	// endpoint (findings, lacks, whether it handed the condition on or had
	// nothing to judge) follows from that endpoint, the input's parts that
	// are no endpoint's (GPU, events, logs, benchmark), the routers, layers
	// and hosted endpoints, and the clock read through e.now. The
	// Diagnoser keeps its verdict on an endpoint whose Mark has not moved
	// and that read no clock (kept.go); a rule that compares endpoints, or
	// reads one endpoint's number from another's, is not local.
	local bool
	eval  func(e *env) []Finding
}

func holdDefault(c Config) time.Duration { return c.Hold }
func holdNone(Config) time.Duration      { return 0 }
func holdShort(c Config) time.Duration   { return min(c.Hold, 10*time.Second) }

// rules is the catalogue, in the order the all-clear lists them.
var rules []rule

func register(rs ...rule) { rules = append(rules, rs...) }

// env is what a rule sees: the input, the thresholds, and somewhere to say
// which per-endpoint inputs were lacking.
type env struct {
	in  Input
	cfg Config
	// all is every endpoint of the evaluation: in.Endpoints, but while one
	// endpoint is judged alone (kept.go), when in.Endpoints is that one.
	all []Endpoint
	// timed is set when a rule read the clock (now): its verdict holds for
	// this instant only; ctxRead when it read the routers, layers or
	// hosted endpoints (subset): it holds while they do.
	timed, ctxRead bool
	// batchRead is set when a rule read an endpoint's running/latency
	// pairs (batch): its verdict holds while they read the same.
	batchRead bool
	// urlEvents is set when a rule read an endpoint's events (eventsOf),
	// allEvents when it read every endpoint's (events): the verdict holds
	// while they stay the same.
	urlEvents, allEvents bool
	// until is when a verdict that did not read the clock outright may
	// change with it (past, reached): zero when never.
	until time.Time
	// crossed is set when a rule read other endpoints than the one it
	// judged (cross): a rule marked local that does is judged over the
	// whole input from then on (kept.go).
	crossed bool
	lacks   []lack
	// handed is set by a rule that saw its condition but left the finding
	// to another rule (TTFT explained by slow decode steps): it raised
	// nothing, yet it did not pass.
	handed bool
	// idle is set by a rule that found nothing of its kind to judge (no
	// KV hand-over on an engine that is not a prefill/decode member, no
	// preemption on an engine that never preempts): it is neither checked
	// nor missing, since no input could have made it judge.
	idle bool
	// metrics caches withMetrics: every rule asks for it.
	metrics     []Endpoint
	metricsDone bool
	// groups caches replicas(): several rules ask for it.
	groups     map[string][]*Endpoint
	groupsDone bool
	// byURL indexes in.Endpoints for endpointOf, byEvent in.Events for
	// eventsOf.
	byURL   map[string]int
	byEvent map[string][]model.Event
	// pools caches routePools; settledIn are each replica group's
	// settled members in the group's order.
	poolNames []string
	pools     map[string][]*Endpoint
	poolsDone bool
	settledIn map[string][]*Endpoint
	// hostedIn, routersIn and layersIn cache hosted(), routers() and
	// layers(): evaluate asks for them before every rule that needs them.
	hostedIn, routersIn, layersIn subset
	// scratch is memory kept from the last evaluation (the Diagnoser's);
	// memo the texts that are the same for every endpoint of an engine.
	scratch *scratch
	memo    map[memoKey]string
	actions map[actionsKey][]Action
}

// scratch is what one evaluation needs and the next can reuse: a fleet's
// lacks and findings are thousands, and growing them from nothing every
// refresh was most of the rules' allocation at 2 000 replicas.
type scratch struct {
	lacks []lack
	of    []int
	found []Finding // the evaluation's findings, copied out by the Diagnoser
	rule  []Finding // a rule's findings, copied into found before the next
	busy  bool      // rule is handed out
}

// findings is an empty slice for a rule's findings, from memory the last
// rule (or evaluation) used when it is free: evaluate copies a rule's
// findings out before the next rule runs. nil (a new slice) otherwise.
func (e *env) findings() []Finding {
	if e.scratch == nil || e.scratch.busy {
		return nil
	}
	e.scratch.busy = true
	return e.scratch.rule[:0]
}

// now is the evaluation's time. Every rule reads the clock through it: a
// verdict that read it is judged again at the next evaluation, one that
// did not stands while its endpoint's inputs do.
func (e *env) now() time.Time {
	e.timed = true
	return e.in.Time
}

// past reports whether more than d has passed since t. Once it has, it
// stays so (the clock only moves on): the verdict does not depend on the
// clock then; until then it may change at t+d, and is judged again there.
func (e *env) past(t time.Time, d time.Duration) bool {
	if e.in.Time.Sub(t) > d {
		return true
	}
	e.due(t.Add(d + 1))
	return false
}

// reached reports whether d or more has passed since t: past, at t+d.
func (e *env) reached(t time.Time, d time.Duration) bool {
	if e.in.Time.Sub(t) >= d {
		return true
	}
	e.due(t.Add(d))
	return false
}

// ahead reports whether t is still to come. Once it has come it stays so:
// until then, the verdict is judged again at t.
func (e *env) ahead(t time.Time) bool {
	if t.After(e.in.Time) {
		e.due(t)
		return true
	}
	return false
}

// due says the verdict may change at t: it is judged again there.
func (e *env) due(t time.Time) {
	if e.until.IsZero() || t.Before(e.until) {
		e.until = t
	}
}

// batch is ep's running/latency pairs (Endpoint.Batch). They grow and
// slide with every refresh, so the Mark leaves them out: a verdict that
// read them is kept while they read the same (kept.go).
func (e *env) batch(ep *Endpoint) []BatchPoint {
	e.batchRead = true
	return ep.Batch
}

// cross says the rule reads endpoints beside the one it judges: replica
// groups, pools, another endpoint by its address.
func (e *env) cross() { e.crossed = true }

// subset is some of the input's endpoints, picked once per evaluation.
type subset struct {
	eps  []Endpoint
	done bool
}

// subset lists the endpoints pick keeps, working them out once (copying
// every one of a fleet's 2 KiB endpoints to keep none was a rule's cost).
func (e *env) subset(s *subset, pick func(*Endpoint) bool) []Endpoint {
	e.ctxRead = true
	if !s.done {
		s.done = true
		for i := range e.all {
			if pick(&e.all[i]) {
				s.eps = append(s.eps, e.all[i])
			}
		}
	}
	return s.eps
}

// each yields a pointer to every endpoint of eps, in order: the rules
// read a fleet's 2 KiB endpoints where they are, not a copy of each per
// rule (that copying was most of a refresh's rules at 2 000 replicas).
func each(eps []Endpoint) iter.Seq[*Endpoint] {
	return func(yield func(*Endpoint) bool) {
		for i := range eps {
			if !yield(&eps[i]) {
				return
			}
		}
	}
}

// lack records that a rule could not judge an endpoint for want of an input.
func (e *env) lack(ep *Endpoint, what string) {
	e.lacks = append(e.lacks, lack{url: ep.URL, what: what})
}

// withMetrics lists the endpoints that produced metrics.
func (e *env) withMetrics() []Endpoint {
	if e.metricsDone {
		return e.metrics
	}
	e.metricsDone = true
	all := true
	for i := range e.in.Endpoints {
		all = all && e.in.Endpoints[i].State.Samples > 0
	}
	if all {
		// the usual fleet: no copy of its 2 KiB endpoints (the rules
		// only read what this returns)
		e.metrics = e.in.Endpoints
		return e.metrics
	}
	for ep := range each(e.in.Endpoints) {
		if ep.State.Samples > 0 {
			e.metrics = append(e.metrics, *ep)
		}
	}
	return e.metrics
}

// unmetered lists the endpoints without metrics when some others have
// them ("" when every endpoint has metrics).
func (e *env) unmetered() string {
	if len(e.withMetrics()) == len(e.in.Endpoints) {
		return ""
	}
	var urls []string
	for ep := range each(e.in.Endpoints) {
		if ep.State.Samples == 0 {
			urls = append(urls, ep.URL)
		}
	}
	return strings.Join(dedupe(urls), ", ")
}

// downMetered lists the endpoints with metrics whose newest poll found
// nothing answering: the rules judged their last metrics, not now ("" when
// none).
func (e *env) downMetered() string {
	var urls []string
	for ep := range each(e.withMetrics()) {
		if ep.isDown() {
			urls = append(urls, ep.URL)
		}
	}
	return strings.Join(dedupe(urls), ", ")
}

func (e *env) has(n need) bool {
	switch n {
	case needMetrics:
		return len(e.withMetrics()) > 0
	case needGPU:
		return e.in.GPU != nil && len(e.in.GPU.GPUs) > 0
	case needLogs:
		return e.in.LogsOn
	case needBench:
		return e.in.Bench != nil
	case needReplicas:
		return len(e.replicas()) > 0
	case needHost:
		return len(e.hosted()) > 0
	case needRouter:
		return len(e.routers()) > 0
	case needLayer:
		return len(e.layers()) > 0
	}
	return true
}

// meets reports whether the input has every input r needs.
func (e *env) meets(r *rule) bool {
	for _, nn := range needNames {
		if r.needs&nn.n != 0 && !e.has(nn.n) {
			return false
		}
	}
	return true
}

// routable reports whether a router could sit in front of what is watched:
// two or more endpoints, a serving layer, or an engine with a prefill or
// decode role (disaggregated serving always has one). On one plain engine
// a router's word is not an input that is missing: none is there to ask.
func (e *env) routable() bool {
	e.cross()
	if len(e.all) > 1 {
		return true
	}
	for ep := range each(e.all) {
		if ep.Identity.Layer != "" {
			return true
		}
		if r, _ := ep.PDRole(); r == model.RolePrefill || r == model.RoleDecode {
			return true
		}
	}
	return false
}
