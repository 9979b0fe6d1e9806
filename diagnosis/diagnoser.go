package diagnosis

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// historyCap bounds the closed findings kept.
const historyCap = 256

// Diagnoser runs the rules every refresh with hysteresis: a finding opens
// once its condition has held for the rule's hold time (gaps shorter than
// Config.Grace do not restart the count, so a noisy signal at the threshold
// still opens), and closes once the condition has been clear for
// Config.Clear (so the same noise does not close and reopen it). It is not
// safe for concurrent use: one owner calls Update.
type Diagnoser struct {
	cfg     Config
	track   map[trackKey]*tracker
	closed  *model.Ring[Finding]
	base    map[string]*Baseline // newest picture per endpoint
	before  map[string]*Baseline // picture before the newest restart
	seenRst map[string]time.Time
	down    map[string]bool         // seen down, not yet back
	upSince map[string]time.Time    // came back after being down
	facts   map[factKey]model.Event // newest start-up fact per kind and endpoint
	ups     map[string][]time.Time  // the last two (re)starts seen per endpoint
	eps     []Endpoint              // Update's copy of its input's endpoints, reused
	scratch scratch                 // the rules' memory, reused
	seen    map[trackKey]bool       // Update's conditions seen now, reused
	holds   map[time.Duration]string
	holding map[[2]time.Duration]string // this Update's "condition holding for …" lines
	// kept are the local rules' verdicts per endpoint (kept.go); nil
	// judges every endpoint at every Update (FromScratch).
	kept *kept
}

type trackKey struct{ id, subject string } // Finding.Subject

type tracker struct {
	first, lastTrue time.Time
	open            bool
	settles         bool // closes as soon as its condition is gone
	hold            time.Duration
	f               Finding
}

// Pending is a condition on its way to becoming a finding.
type Pending struct {
	Finding
	Held time.Duration `json:"held"` // how long the condition has held
	Hold time.Duration `json:"hold"` // how long it must hold to open
}

// NewDiagnoser returns a Diagnoser with the given thresholds.
func NewDiagnoser(cfg Config) *Diagnoser {
	return &Diagnoser{
		cfg:     cfg,
		track:   map[trackKey]*tracker{},
		closed:  model.NewRing[Finding](historyCap),
		base:    map[string]*Baseline{},
		before:  map[string]*Baseline{},
		seenRst: map[string]time.Time{},
		down:    map[string]bool{},
		upSince: map[string]time.Time{},
		facts:   map[factKey]model.Event{},
		ups:     map[string][]time.Time{},
		kept:    newKept(),
	}
}

// FromScratch makes d judge every endpoint with every rule at every
// Update, keeping no verdict: what the kept verdicts are held equal to.
func (d *Diagnoser) FromScratch() { d.kept = nil }

// Judged is how many endpoints the last Update judged with the local
// rules (every endpoint, from scratch): the rest kept their verdicts.
func (d *Diagnoser) Judged() int {
	if d.kept == nil {
		return len(d.eps)
	}
	return d.kept.judged
}

// Config returns the thresholds in use.
func (d *Diagnoser) Config() Config { return d.cfg }

// Update evaluates the rules at in.Time and returns the open findings,
// ranked, with what was checked and which inputs were missing.
func (d *Diagnoser) Update(in Input) Report {
	// A copy (the baselines are written into it), into the same memory
	// every refresh: a fleet's endpoints are megabytes.
	d.eps = append(d.eps[:0], in.Endpoints...)
	in.Endpoints = d.eps
	return d.update(in)
}

// UpdateInPlace is Update for a caller that hands in.Endpoints over until
// its next call (the core, which builds them anew every time): the
// baselines are written into them, not into a copy of a fleet's
// megabytes.
func (d *Diagnoser) UpdateInPlace(in Input) Report {
	d.eps = in.Endpoints
	return d.update(in)
}

func (d *Diagnoser) update(in Input) Report {
	now := in.Time
	for i := range in.Endpoints {
		d.baseline(&in.Endpoints[i])
	}
	in.Events = d.dropStaleFacts(d.keepFacts(in.Events), in.Endpoints)
	rep, byID := evaluateWith(in, d.cfg, &d.scratch, d.kept)
	if d.seen == nil {
		d.seen = make(map[trackKey]bool, len(rep.Findings))
	}
	seen := d.seen
	clear(seen)
	clear(d.holding)
	for _, f := range rep.Findings {
		k := trackKey{f.ID, f.Subject()}
		seen[k] = true
		t := d.track[k]
		if t == nil || (!t.open && now.Sub(t.lastTrue) > d.cfg.Grace) {
			t = &tracker{first: now}
			d.track[k] = t
		} else if t.open && now.Sub(t.lastTrue) > d.cfg.Grace {
			// Back while still open: the finding stays open (no flapping),
			// but "holding for" counts from this return, not the first onset.
			t.first = now
		}
		t.lastTrue = now
		hold := d.cfg.hold(byID[f.ID].hold(d.cfg))
		if d.cfg.BreachCrit > 0 && f.Breach >= d.cfg.BreachCrit {
			// Escalate with the size of the breach, not only its duration.
			hold = min(hold, holdShort(d.cfg))
		}
		t.hold = hold
		t.settles = byID[f.ID].settles
		if !t.open && now.Sub(t.first) >= hold {
			t.open = true
			t.f.Opened = now
		}
		opened := t.f.Opened
		t.f = f
		t.f.Opened = opened // ClearSince stays zero: the condition holds
		if t.open && now.Sub(t.first) >= time.Second {
			t.f.Evidence = append(t.f.Evidence, Evidence{Text: d.holdingText(now.Sub(t.first).Round(time.Second), hold), Source: "llmtop"})
		}
	}
	var closing []Finding // pushed into the history in one order
	for k, t := range d.track {
		if seen[k] {
			continue
		}
		switch {
		case t.open && t.settles:
			// The scrape or the lifecycle says the condition is over:
			// closed now. The tracker stays (closed) through Grace, so the
			// same condition back at once reopens without a new hold.
			t.f.Closed = now
			t.f.Evidence = append(append([]Evidence(nil), dropHolding(t.f.Evidence)...), Evidence{Text: "closed: the condition is gone", Source: "llmtop"})
			closing = append(closing, t.f)
			t.open, t.f.Opened, t.f.Closed = false, time.Time{}, time.Time{}
		case t.open && now.Sub(t.lastTrue) < d.cfg.Clear:
			// Still open, condition gone: say so until it closes.
			clear := Evidence{Text: "condition clear for " + dur(now.Sub(t.lastTrue).Round(time.Second)) + " (closes after " + dur(d.cfg.Clear) + ")", Source: "llmtop"}
			// A fresh slice: reports already handed out keep theirs.
			t.f.Evidence = append(append([]Evidence(nil), dropHolding(t.f.Evidence)...), clear)
			t.f.ClearSince = t.lastTrue
		case t.open:
			t.f.Closed = now
			closing = append(closing, t.f)
			delete(d.track, k)
		case !t.open && now.Sub(t.lastTrue) > d.cfg.Grace:
			delete(d.track, k)
		}
	}
	d.pushClosed(closing)
	// rep.Findings were the scratch's: each is copied into its tracker
	rep.Findings = d.Open()
	rep.Pending = d.pending(seen, now)
	return rep
}

// holdingText is the line a held condition's evidence ends with, built
// once per Update for each pair of durations: a fleet's findings that
// opened together say the same words.
func (d *Diagnoser) holdingText(held, hold time.Duration) string {
	k := [2]time.Duration{held, hold}
	s, ok := d.holding[k]
	if !ok {
		if d.holding == nil {
			d.holding = map[[2]time.Duration]string{}
		}
		s = "condition holding for " + dur(held) + d.holdText(hold)
		d.holding[k] = s
	}
	return s
}

// holdText is holdText(hold), worked out once per hold: every finding of a
// fleet says it every refresh.
func (d *Diagnoser) holdText(hold time.Duration) string {
	s, ok := d.holds[hold]
	if !ok {
		if d.holds == nil {
			d.holds = map[time.Duration]string{}
		}
		s = holdText(hold)
		d.holds[hold] = s
	}
	return s
}

// EndRun closes every finding about endpoint's ended run at the boundary
// (into history) and forgets its conditions on their way to opening, but
// the findings keep says to keep (the crash that ended the run explains
// the restart). The Monitor calls it when a new run starts.
func (d *Diagnoser) EndRun(endpoint string, at time.Time, keep func(Finding) bool) {
	var closing []Finding
	for k, t := range d.track {
		if k.subject != endpoint { // a pool's finding outlives one worker's run
			continue
		}
		if t.open && keep != nil && keep(t.f) {
			continue
		}
		if t.open {
			t.f.Closed = at
			t.f.Evidence = append(append([]Evidence(nil), t.f.Evidence...), Evidence{Text: "closed at the end of the engine run it was about", Source: "llmtop"})
			closing = append(closing, t.f)
		}
		delete(d.track, k)
	}
	d.pushClosed(closing)
	delete(d.base, endpoint)
}

// pushClosed keeps findings that closed together in the history by
// endpoint, then finding, not in the order the map of trackers handed
// them out: a replay rebuilt from a checkpoint keeps the history the
// monitor kept, finding for finding.
func (d *Diagnoser) pushClosed(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Endpoint, b.Endpoint), strings.Compare(a.ID, b.ID))
	})
	for _, f := range fs {
		d.closed.Push(f)
	}
}

// dropHolding drops the Diagnoser's own last line ("condition holding
// for …") from a finding's evidence.
func dropHolding(ev []Evidence) []Evidence {
	if n := len(ev); n > 0 && ev[n-1].Source == "llmtop" {
		return ev[:n-1]
	}
	return ev
}

// pending lists the conditions seen now that have not opened yet.
func (d *Diagnoser) pending(seen map[trackKey]bool, now time.Time) []Pending {
	var fs []Finding
	byKey := map[trackKey]*tracker{}
	for k, t := range d.track {
		if !t.open && seen[k] {
			fs = append(fs, t.f)
			byKey[k] = t
		}
	}
	Rank(fs)
	out := make([]Pending, len(fs))
	for i, f := range fs {
		t := byKey[trackKey{f.ID, f.Subject()}]
		out[i] = Pending{Finding: f, Held: now.Sub(t.first), Hold: t.hold}
	}
	return out
}

func holdText(hold time.Duration) string {
	if hold <= 0 {
		return ""
	}
	return " (opens after " + dur(hold) + ")"
}

// Open returns the open findings, ranked.
func (d *Diagnoser) Open() []Finding {
	n := 0
	for _, t := range d.track {
		if t.open {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Finding, 0, n)
	for _, t := range d.track {
		if t.open {
			out = append(out, t.f)
		}
	}
	Rank(out)
	return out
}

// History returns every finding opened, the open ones and the closed ones
// kept, newest opened first.
func (d *Diagnoser) History() []Finding {
	out := d.Open()
	out = append(out, d.closed.Slice()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Opened.After(out[j].Opened) })
	return out
}

// baseline keeps the newest picture of each endpoint and, when a new restart
// shows up, freezes the one before it for the release-regression rule.
func (d *Diagnoser) baseline(ep *Endpoint) {
	var newest time.Time
	if n := len(ep.State.Restarts); n > 0 {
		newest = ep.State.Restarts[n-1]
	}
	if newest.After(d.seenRst[ep.URL]) {
		if b := d.base[ep.URL]; b != nil {
			d.before[ep.URL] = b
		}
		d.seenRst[ep.URL] = newest
		d.cameUp(ep.URL, newest)
		delete(d.base, ep.URL)
	} else if ep.State.Samples > 0 {
		// In place: the picture is only ever read once frozen into
		// before, and a restart takes it out of base first.
		if b := d.base[ep.URL]; b != nil {
			*b = baselineOf(ep)
		} else {
			b := baselineOf(ep)
			d.base[ep.URL] = &b
		}
	}
	if len(d.ups[ep.URL]) == 0 && ep.State.Samples > 0 {
		d.cameUp(ep.URL, ep.State.Time) // up when first seen: its start-up lines came before
	}
	if b := d.before[ep.URL]; b != nil && ep.Before == nil {
		ep.Before = b
	}
	switch {
	case ep.isDown():
		d.down[ep.URL] = true
	case d.down[ep.URL] && ep.State.Samples > 0:
		d.down[ep.URL] = false
		d.upSince[ep.URL] = ep.State.Time
	}
	if ep.UpSince.IsZero() {
		ep.UpSince = d.upSince[ep.URL]
	}
}

func baselineOf(ep *Endpoint) Baseline {
	st := &ep.State
	b := Baseline{Time: st.Time, Version: ep.Identity.Version, Model: ep.Model(), Info: st.Info,
		Running: st.Running, TTFT: st.Latency[model.TTFT].P50, GenTPS: st.GenTPS, Requests: st.Latency[model.TTFT].Count}
	if d, _, ok := itlDist(ep); ok {
		b.ITL = d.P50
	}
	return b
}
