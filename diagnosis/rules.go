package diagnosis

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/llmtop/llmtop/engines"
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

// Report is one evaluation: the findings (ranked), what was checked, and
// which inputs were absent.
type Report struct {
	Time     time.Time `json:"time"`
	Findings []Finding `json:"findings"`
	// Pending are conditions seen but not yet held long enough to open a
	// finding (Diagnoser only), ranked; each says how long it has held.
	Pending []Pending `json:"pending,omitempty"`
	// Checked are the rules that ran and raised nothing, each as the
	// condition it found to hold ("every endpoint answers"); a rule with a
	// finding or a forming condition is not listed.
	Checked []string `json:"checked"`
	Missing []string `json:"missing"`
}

// Evaluate runs every rule once, without hysteresis: the findings whose
// conditions hold right now. The Diagnoser wraps it for live use.
func Evaluate(in Input, cfg Config) Report {
	rep, _ := evaluate(in, cfg)
	return rep
}

// evaluate also returns each finding's rule, for the Diagnoser's holds.
func evaluate(in Input, cfg Config) (Report, map[string]*rule) {
	return evaluateWith(in, cfg, nil, nil)
}

// evaluateWith is evaluate reusing sc's memory (nil: none) and the local
// rules' verdicts kept in kp (nil: every endpoint judged). The report's
// Findings are then sc's: the caller copies them out before the next
// evaluation.
func evaluateWith(in Input, cfg Config, sc *scratch, kp *kept) (Report, map[string]*rule) {
	e := &env{in: in, all: in.Endpoints, cfg: cfg, scratch: sc}
	rep := Report{Time: in.Time}
	if sc != nil {
		e.lacks, rep.Findings = sc.lacks[:0], sc.found[:0]
	}
	byID := map[string]*rule{}
	missing := map[string]bool{}
	if kp != nil && len(in.Endpoints) > 0 {
		kp.judge(e)
	} else {
		kp = nil
	}
	for i := range rules {
		r := &rules[i]
		ok := true
		for _, nn := range needNames {
			if r.needs&nn.n != 0 && !e.has(nn.n) {
				ok = false
				missing[nn.name] = true
			}
		}
		if !ok {
			continue
		}
		lacked := len(e.lacks)
		e.handed, e.idle = false, false
		var fs []Finding
		if kp != nil && kp.alone(i) {
			fs = kp.said(i, e)
		} else {
			fs = r.eval(e)
		}
		if len(fs) == 0 && len(e.lacks) == lacked && !e.handed && !e.idle {
			// Ran and passed: its text asserts what holds. A rule that
			// lacked its input somewhere is not "checked": its lack lines
			// say what it could not judge.
			// A metric rule judged only the endpoints with metrics: the
			// others were not checked, and the line says so.
			text := r.checks
			if r.needs&needMetrics != 0 {
				if q := e.unmetered(); q != "" {
					text += " (not checked on " + q + ": no metrics)"
				}
			}
			rep.Checked = append(rep.Checked, text)
		}
		for _, f := range fs {
			if f.ID == "" {
				f.ID = r.id
			}
			byID[f.ID] = r
			rep.Findings = append(rep.Findings, f)
		}
		if sc != nil && sc.busy {
			// the rule's findings are copied: its memory is free for the
			// next, kept at the size it grew to (cleared of what it held)
			if cap(fs) > 0 && (cap(sc.rule) == 0 || &fs[:1][0] == &sc.rule[:1][0] || cap(fs) > cap(sc.rule)) {
				clear(fs)
				sc.rule = fs[:0]
			}
			sc.busy = false
		}
	}
	for _, nn := range needNames {
		if missing[nn.name] && (nn.n&(needRouter|needLayer) == 0 || e.routable()) {
			rep.Missing = append(rep.Missing, nn.name)
		}
	}
	if e.has(needHost) {
		for _, ep := range e.hosted() {
			for _, nc := range ep.Host.NotChecked {
				e.lacks = append(e.lacks, lack{url: ep.URL, what: nc})
			}
		}
	}
	rep.Missing = append(rep.Missing, e.lackLines()...)
	Rank(rep.Findings)
	if sc != nil {
		clear(e.lacks)
		sc.lacks, sc.found = e.lacks[:0], rep.Findings
	}
	return rep, byID
}

var categoryOrder = map[Category]int{
	Availability: 10, Memory: 20, GPU: 30, Queueing: 40, Prefill: 50, Decode: 60,
	Regression: 70, API: 80, Routing: 90, Behaviour: 100,
}

// idOrder moves findings within (or ahead of) their category: a log line
// that says why the engine failed explains "endpoint down", a backlog
// explains its TTFT, a prefill stall is fixed before prefill length, and
// preemptions before a merely full cache.
//
// A pool's routing finding explains its members' symptoms (issue 26): the
// backlog of the workers a router piles onto while their peers idle, the
// TTFT of a decode instance waiting for its KV. They rank before the
// queueing and prefill findings they explain. A router still sending
// requests to a dead backend ranks before that backend's own outage: the
// outage, taken out of rotation, would cost capacity; the router's traffic
// to it is what users' requests fail on, and its lever acts at once.
var idOrder = map[string]int{
	"dead_backend_traffic": -85,
	"queue_backlog":        -1, "itl_prefill_stall": -1, "kv_preemption": -1,
	"pool_starved": -55, "pool_queue_skew": -55, "prefix_pileup": -55, "one_worker": -55, "pd_imbalance": -55, "kv_transfer_stall": -45, "kv_transfer_failures": -45,
	"cuda_oom": 1, // the generic OOM after the specific start-up failure it comes with
}

func order(f *Finding) int {
	if isEventFinding(f.ID) && f.Severity == model.SevCrit {
		return idOrder[f.ID]
	}
	return categoryOrder[f.Category] + idOrder[f.ID]
}

// Rank orders findings: those whose condition still holds before those
// only waiting to close (a crash that recovered a minute ago must not hide
// the queue building now), then critical first, then by the runbooks' order
// of categories (an engine that is down explains everything below it; the
// log line saying why it is down comes before that), then newest first.
func Rank(fs []Finding) {
	// sorted by index, then moved once: a fleet's hundreds of findings
	// are too big to swap around; each one's order worked out once, not
	// at every comparison
	// (a typed sort: sort.SliceStable's reflected swaps were half its cost)
	type ranked struct {
		i     int
		clear bool
		order int
	}
	idx := make([]ranked, len(fs))
	for i := range idx {
		idx[i] = ranked{i, !fs[i].ClearSince.IsZero(), order(&fs[i])}
	}
	slices.SortStableFunc(idx, func(x, y ranked) int {
		a, b := &fs[x.i], &fs[y.i]
		switch {
		case x.clear != y.clear:
			return boolCmp(x.clear, y.clear) // holding first
		case a.Severity != b.Severity:
			return cmp.Compare(b.Severity, a.Severity)
		case x.order != y.order:
			return cmp.Compare(x.order, y.order)
		case !a.Opened.Equal(b.Opened):
			return b.Opened.Compare(a.Opened) // newest first
		case a.ID != b.ID:
			return strings.Compare(a.ID, b.ID)
		}
		return strings.Compare(a.Endpoint, b.Endpoint)
	})
	// Each finding moved once along its cycle of the permutation, in
	// place: no copy of a fleet's findings.
	for i := range idx {
		if idx[i].i == i {
			continue
		}
		tmp := fs[i]
		j := i
		for {
			k := idx[j].i
			idx[j].i = j // placed
			if k == i {
				fs[j] = tmp
				break
			}
			fs[j] = fs[k]
			j = k
		}
	}
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}

func dedupe(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	// sized once: a fleet's lacks are thousands, and growing the set
	// rehashed it again and again
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// notExposed says why a metric is absent from ep: the newest scrape failed
// (then nothing is known of what the engine exposes), or the engine (by
// its own name: Triton is not TensorRT-LLM's trtllm-serve) does not expose
// it.
func notExposed(ep Endpoint) string {
	if ep.Scrape.Err != "" {
		return "the newest scrape failed: " + nonEmpty(string(ep.Scrape.ErrKind), "error")
	}
	return engineName(ep.Identity.Engine) + " does not expose it"
}

// engineName is how the actions name an engine (engines/: its Name).
func engineName(e model.Engine) string {
	if s := engines.Of(e); s != nil {
		return s.Name
	}
	return "engine"
}

// forEngine picks the engine's action from a table; for an unknown engine it
// returns every engine's, each prefixed with its name (a serving layer's
// and one that repeats another's change left out).
func forEngine(eng model.Engine, table map[model.Engine]Action) []Action {
	if a, ok := table[eng]; ok {
		return []Action{a}
	}
	if eng != model.Unknown {
		return nil
	}
	var out []Action
	seen := map[string]bool{}
	for _, s := range engines.All() {
		if a, ok := table[s.ID]; ok && s.Like == model.Unknown && !seen[a.Change] {
			seen[a.Change] = true
			a.Change = s.Name + ": " + a.Change
			out = append(out, a)
		}
	}
	return out
}

// metricSource names the metric an evidence number came from: the one
// the adapter recorded it read (State.From: an older vLLM's
// vllm:time_per_output_token_seconds for ITL). Engine metric names live
// in one table (engines.Metrics) that the adapters read; the rules
// never guess one. When the adapter recorded none (a Prometheus-evaluated
// origin, an engine that does not say), the concept itself is named.
func metricSource(ep Endpoint, concept string) string {
	if ep.State.Source == model.FromLog {
		return "log stats line"
	}
	from := func(keys ...string) string {
		for _, k := range keys {
			if n := ep.State.From[k]; n != "" {
				return n
			}
		}
		return ""
	}
	var n string
	switch concept {
	case "prefix":
		if h, q := from(string(model.PrefixHits)), from(string(model.PrefixQueries)); h != "" && q != "" {
			n = h + " / " + q
		} else {
			n = from(string(model.PrefixHitGauge))
		}
	case "spec":
		if a, d := from(string(model.SpecAcceptTokens)), from(string(model.SpecDraftTokens)); a != "" && d != "" {
			n = a + " / " + d
		} else {
			n = from(string(model.SpecAcceptGauge))
		}
	case "finish":
		n = from(model.FinishReasons)
	default:
		n = from(modelConcept[concept])
	}
	if n != "" {
		return n
	}
	return concept
}

// modelConcept maps the rules' concept names to the model's (the keys of
// State.From).
var modelConcept = map[string]string{
	"ttft": string(model.TTFT), "itl": string(model.ITL), "tpot": string(model.TPOT), "queue": string(model.Queue),
	"prefill": string(model.Prefill), "running": string(model.Running), "waiting": string(model.Waiting),
	"kv": string(model.KVUsage), "preemptions": string(model.Preemptions), "prompt": string(model.PromptTokens),
	"gen": string(model.GenTokens), "prompt_len": string(model.PromptLen), "output_len": string(model.OutputLen),
	"batch_per_step": string(model.BatchPerStep), "step_tokens": string(model.StepTokens),
	"http_5xx": string(model.HTTP5xx), "http_4xx": string(model.HTTP4xx), "e2e": string(model.E2E), "decode": string(model.Decode),
}

// infoKey returns the first of keys present in the endpoint's info labels.
func infoKey(ep Endpoint, keys ...string) (string, bool) {
	for _, k := range keys {
		if v, ok := ep.State.Info[k]; ok && v != "" {
			return v, true
		}
	}
	return "", false
}

func isTrue(s string) bool {
	s = strings.ToLower(s)
	return s == "true" || s == "1" || s == "on" || s == "yes"
}
