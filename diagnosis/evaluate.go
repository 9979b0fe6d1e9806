package diagnosis

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

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
				if q := e.downMetered(); q != "" {
					// the state a down endpoint's rules read is its last
					// scrape's: no claim about it now
					text += " (on the last metrics of " + q + ", which no longer answers)"
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
			line := nn.name
			if nn.n == needReplicas {
				line = e.replicasLine(line)
			}
			rep.Missing = append(rep.Missing, line)
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
