package diagnosis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// simFleet is a fleet as the core hands it to the rules: every refresh,
// each replica's clock fields move (its newest sample's time and count,
// the scrape's time, LastOK while it answers, the current run's summary),
// and what changed moves its Mark. A few replicas change at each refresh;
// the rest stand, and the kept verdicts must say of them what judging them
// from scratch says.
type simFleet struct {
	r     *rand.Rand
	now   time.Time
	quiet bool // steps change nothing but the clock, by the step given
	eps   []*simEP
	gone  []*simEP
	evs   []model.Event
}

type simEP struct {
	ep    Endpoint
	state uint64 // the store's mark: moves when State does
	down  bool
}

func newSimFleet(seed uint64, n int) *simFleet {
	f := &simFleet{r: rand.New(rand.NewPCG(seed, seed*7+1)), now: t0}
	for i := range n {
		f.eps = append(f.eps, f.newEP(i))
	}
	return f
}

func (f *simFleet) newEP(i int) *simEP {
	u := fmt.Sprintf("http://10.1.0.%d:8000", i)
	m := []string{"llama", "qwen"}[i%2]
	e := ep(func(e *Endpoint) {
		e.URL, e.Scrape.Endpoint = u, u
		e.State.Key = model.Key{Endpoint: u, Model: m}
		e.Identity.Models = []model.ModelInfo{{ID: m, MaxContext: 32768}}
		e.State.Latency = maps2(e.State.Latency)
		e.Runs = []model.Run{{N: 1, Started: f.now.Add(-time.Hour), StartedBy: "first seen", Engine: model.VLLM, Summary: model.RunSummary{Samples: 10, ServedS: 3600}}}
		e.Batch = []BatchPoint{{Running: 8, ITL: 0.016}}
	})
	return &simEP{ep: e, state: 1}
}

func maps2(m map[model.Latency]model.Dist) map[model.Latency]model.Dist {
	out := make(map[model.Latency]model.Dist, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// change makes one change to s: a number across a threshold and back, an
// outage, a restart, a start, a health route loading, the knee's pairs.
func (f *simFleet) change(s *simEP) {
	e := &s.ep
	stateChanged := true
	switch f.r.IntN(11) {
	case 0:
		e.State.KVUsage = model.Some([]float64{0.3, 0.95, 0.995}[f.r.IntN(3)])
	case 1:
		e.State.Waiting = model.Some([]float64{0, 5, 80}[f.r.IntN(3)])
	case 2:
		e.State.Latency = maps2(e.State.Latency)
		e.State.Latency[model.TTFT] = dist(0.05, 0.08, []float64{0.1, 0.5, 5}[f.r.IntN(3)], 0.06)
	case 3:
		e.State.Latency = maps2(e.State.Latency)
		e.State.Latency[model.ITL] = dist(0.015, 0.02, []float64{0.03, 0.2}[f.r.IntN(2)], 0.016)
	case 4: // down, or back
		stateChanged = false
		s.down = !s.down
		if s.down {
			e.Scrape.Err, e.Scrape.ErrKind = "connection refused", model.ErrRefused
		} else {
			e.Scrape.Err, e.Scrape.ErrKind = "", ""
		}
	case 5: // a restart the counters show, and the run it began
		e.State.Restarts = append(slices.Clone(e.State.Restarts), f.now)
		runs := slices.Clone(e.Runs)
		ended := f.now.Add(-time.Second)
		last := &runs[len(runs)-1]
		last.Ended, last.End = &ended, []model.RunEnd{model.RunCrash, model.RunPlanned}[f.r.IntN(2)]
		runs = append(runs, model.Run{N: last.N + 1, Started: f.now, StartedBy: "counters reset", Engine: model.VLLM,
			Config: map[string]string{"info.block_size": []string{"16", "32"}[f.r.IntN(2)]}})
		e.Runs = runs
	case 6:
		stateChanged = false
		if e.Identity.Health == model.HealthLoading {
			e.Identity.Health = model.HealthUp
		} else {
			e.Identity.Health = model.HealthLoading
		}
	case 7:
		stateChanged = false
		if e.Life == model.LifeStarting {
			e.Life, e.LifeSince, e.LifeDetail = model.LifeServing, f.now, ""
		} else {
			e.Life, e.LifeSince, e.LifeDetail = model.LifeStarting, f.now, "loading weights"
		}
	case 8:
		stateChanged = false
		e.Batch = append(slices.Clone(e.Batch), BatchPoint{Running: float64(1 + f.r.IntN(64)), ITL: 0.01 + f.r.Float64()/10})
	case 9:
		e.State.RequestsPS = model.Some([]float64{0, 2, 40}[f.r.IntN(3)])
		e.State.PreemptionsPS = model.Some([]float64{0, 0, 3}[f.r.IntN(3)])
	case 10:
		e.State.FinishShare = map[string]float64{"stop": 0.6, "length": []float64{0.01, 0.4}[f.r.IntN(2)]}
		e.State.FinishCount = map[string]float64{"stop": 60, "length": 40}
	}
	if stateChanged {
		s.state++
	}
}

// step is the next refresh: the clock moves, some replicas change, some
// leave or come back, and sometimes the log has a line.
func (f *simFleet) step(changing float64, d time.Duration) Input {
	if d == 0 {
		d = time.Duration(1+f.r.IntN(10)) * time.Second
	}
	f.now = f.now.Add(d)
	for _, s := range f.eps {
		if !f.quiet && f.r.Float64() < changing {
			f.change(s)
		}
	}
	if f.quiet {
		// nothing leaves, comes back or logs
	} else if f.r.IntN(25) == 0 && len(f.eps) > 1 {
		i := f.r.IntN(len(f.eps))
		f.gone = append(f.gone, f.eps[i])
		f.eps = slices.Delete(f.eps, i, i+1)
	}
	if !f.quiet && f.r.IntN(25) == 0 && len(f.gone) > 0 {
		f.eps = append(f.eps, f.gone[0])
		f.gone = f.gone[1:]
	}
	if !f.quiet && f.r.IntN(30) == 0 && len(f.eps) > 0 {
		u := f.eps[f.r.IntN(len(f.eps))].ep.URL
		f.evs = append(f.evs, model.Event{Time: f.now, Endpoint: u, Source: "log", Kind: "vllm_kv_memory", Severity: model.SevInfo,
			Title: "KV cache memory", Fields: map[string]string{"gib": "20"}})
	}
	in := Input{Time: f.now, Events: slices.Clone(f.evs)}
	for _, s := range f.eps {
		e := &s.ep
		e.State.Time, e.Scrape.Time = f.now, f.now
		e.State.Samples++
		if !s.down {
			e.LastOK = f.now
		}
		// the core works the current run's summary out again each refresh
		if runs := slices.Clone(e.Runs); len(runs) > 0 {
			cur := &runs[len(runs)-1]
			if cur.Ended == nil {
				cur.Summary.Samples++
				cur.Summary.ServedS = f.now.Sub(cur.Started).Seconds()
			}
			e.Runs = runs
		}
		e.Mark = MarkOf(e, s.state, 0)
		in.Endpoints = append(in.Endpoints, *e)
	}
	return in
}

// clone is a copy of in that an Update may write into without the other
// Diagnoser seeing it.
func clone(in Input) Input {
	in.Endpoints = slices.Clone(in.Endpoints)
	in.Events = slices.Clone(in.Events)
	return in
}

// sameReports fails t with where two reports differ.
func sameReports(t *testing.T, at string, kept, scratch Report) {
	t.Helper()
	if reflect.DeepEqual(kept, scratch) {
		return
	}
	show := func(r Report) string {
		var b strings.Builder
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "  %s %s %s opened %s clear %s\n", f.ID, f.Endpoint, f.Title, f.Opened.Format(time.TimeOnly), f.ClearSince.Format(time.TimeOnly))
			for _, e := range f.Evidence {
				fmt.Fprintf(&b, "    %s\n", e.Text)
			}
		}
		for _, p := range r.Pending {
			fmt.Fprintf(&b, "  pending %s %s held %s\n", p.ID, p.Endpoint, p.Held)
		}
		fmt.Fprintf(&b, "  checked %q\n  missing %q\n", r.Checked, r.Missing)
		return b.String()
	}
	t.Fatalf("%s: kept verdicts:\n%s\nfrom scratch:\n%s", at, show(kept), show(scratch))
}

// The kept verdicts say what judging every replica from scratch says, at
// every refresh of random fleets: replicas crossing thresholds and back,
// going down and coming back, restarting, loading, leaving and returning,
// log lines arriving, the clock moving by uneven steps. And they save
// work: most replicas are not judged again.
func TestKeptVerdictsEqualJudgingFromScratch(t *testing.T) {
	judged, total := 0, 0
	for seed := range uint64(24) {
		f := newSimFleet(seed, 12+int(seed%3)*10)
		cfg := DefaultConfig()
		kept, scratch := NewDiagnoser(cfg), NewDiagnoser(cfg)
		scratch.FromScratch()
		for step := range 120 {
			in := f.step(0.05, 0)
			rk, rs := kept.Update(clone(in)), scratch.Update(clone(in))
			sameReports(t, fmt.Sprintf("seed %d step %d (%s)", seed, step, in.Time.Format(time.TimeOnly)), rk, rs)
			judged += kept.Judged()
			total += len(in.Endpoints)
		}
		if hk, hs := kept.History(), scratch.History(); !reflect.DeepEqual(hk, hs) {
			t.Fatalf("seed %d: histories differ:\n%v\n%v", seed, hk, hs)
		}
		if kept.kept.crossed != (ruleSet{}) {
			t.Fatalf("seed %d: rules marked local read other endpoints: %v", seed, kept.kept.crossed)
		}
	}
	// (the churn is high: a replica down or restarted reads the clock
	// until it is back, and where most of a fleet is judged at once, the
	// next refresh judges each of them alone)
	if judged*3 > total*2 {
		t.Errorf("judged %d of %d replica refreshes: a steady fleet's verdicts are not kept", judged, total)
	}
	t.Logf("judged %d of %d replica refreshes", judged, total)
}

// steadyFleet is n healthy replicas; the Diagnoser has seen it once.
func steadyFleet(t *testing.T, n int) (*simFleet, *Diagnoser, *Diagnoser) {
	t.Helper()
	f := newSimFleet(1, n)
	f.quiet = true
	kept, scratch := NewDiagnoser(DefaultConfig()), NewDiagnoser(DefaultConfig())
	scratch.FromScratch()
	for i := range 2 {
		// the first judges the fleet at once (every endpoint is new), the
		// second each endpoint alone, from then on kept
		in := f.step(0, time.Second)
		sameReports(t, fmt.Sprint("refresh ", i), kept.Update(clone(in)), scratch.Update(clone(in)))
	}
	return f, kept, scratch
}

// refresh moves the fleet on by d, with mut applied first, and returns
// the kept verdicts' report once held equal to the one from scratch.
func (f *simFleet) refresh(t *testing.T, kept, scratch *Diagnoser, d time.Duration, mut func()) Report {
	t.Helper()
	if mut != nil {
		mut()
	}
	in := f.step(0, d)
	rk := kept.Update(clone(in))
	sameReports(t, in.Time.Format(time.TimeOnly), rk, scratch.Update(clone(in)))
	return rk
}

func findingOf(r Report, id, endpoint string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id && r.Findings[i].Endpoint == endpoint {
			return &r.Findings[i]
		}
	}
	return nil
}

func pendingOf(r Report, id, endpoint string) *Pending {
	for i := range r.Pending {
		if r.Pending[i].ID == id && r.Pending[i].Endpoint == endpoint {
			return &r.Pending[i]
		}
	}
	return nil
}

// A replica's finding forms on the refresh its input crosses the
// threshold, opens on the first refresh its hold has passed with no new
// input (its verdict kept all along), clears when its input clears, and
// leaves with the replica; the rest of the fleet is not judged again.
func TestKeptVerdictFollowsItsReplica(t *testing.T) {
	f, kept, scratch := steadyFleet(t, 30)
	s := f.eps[7]
	u := s.ep.URL
	rep := f.refresh(t, kept, scratch, 5*time.Second, func() {
		s.ep.State.Waiting = model.Some(80)
		s.state++
	})
	crossed := rep.Time
	if pendingOf(rep, "queue_backlog", u) == nil || findingOf(rep, "queue_backlog", u) != nil {
		t.Fatalf("the refresh the backlog crossed: want it forming, not open: %v / %v", ids(rep.Findings), rep.Pending)
	}
	if kept.Judged() != 1 {
		t.Errorf("judged %d replicas, want the one that changed", kept.Judged())
	}
	hold := DefaultConfig().WaitingFor
	for rep.Time.Sub(crossed) < hold-5*time.Second {
		rep = f.refresh(t, kept, scratch, 5*time.Second, nil)
		if findingOf(rep, "queue_backlog", u) != nil {
			t.Fatalf("opened at %s, before its hold (%s) passed", rep.Time.Sub(crossed), hold)
		}
		if kept.Judged() != 0 {
			t.Fatalf("judged %d replicas with nothing changed", kept.Judged())
		}
	}
	rep = f.refresh(t, kept, scratch, 5*time.Second, nil)
	if rep.Time.Sub(crossed) != hold || findingOf(rep, "queue_backlog", u) == nil {
		t.Fatalf("at %s after crossing (hold %s): want it open, got %v", rep.Time.Sub(crossed), hold, ids(rep.Findings))
	}
	rep = f.refresh(t, kept, scratch, 5*time.Second, func() {
		s.ep.State.Waiting = model.Some(0)
		s.state++
	})
	if g := findingOf(rep, "queue_backlog", u); g == nil || g.ClearSince.IsZero() {
		t.Fatalf("input cleared: want the finding clearing, got %+v", g)
	}
	rep = f.refresh(t, kept, scratch, 5*time.Second, func() {
		f.eps = slices.Delete(f.eps, 7, 8)
	})
	for _, x := range rep.Findings {
		if x.Endpoint == u && x.ClearSince.IsZero() {
			t.Fatalf("replica gone: its finding %s still holds", x.ID)
		}
	}
	rep = f.refresh(t, kept, scratch, DefaultConfig().Clear, nil)
	for _, x := range append(rep.Findings, pendingFindings(rep)...) {
		if x.Endpoint == u {
			t.Fatalf("replica gone for %s: its finding %s is still there", DefaultConfig().Clear, x.ID)
		}
	}
	if _, ok := kept.kept.byKey[keptKey{u, s.ep.Model()}]; ok {
		t.Error("replica gone: its verdict is still kept")
	}
}

// A verdict that reads the clock is judged again at every refresh: a
// replica down says how long ago its metrics were last read, and the words
// move with the clock while nothing else does.
func TestKeptVerdictReadingTheClockMovesWithIt(t *testing.T) {
	f, kept, scratch := steadyFleet(t, 10)
	s := f.eps[3]
	rep := f.refresh(t, kept, scratch, 5*time.Second, func() {
		s.down = true
		s.ep.Scrape.Err, s.ep.Scrape.ErrKind = "connection refused", model.ErrRefused
	})
	var last string
	for range 12 {
		rep = f.refresh(t, kept, scratch, 5*time.Second, nil)
		g := findingOf(rep, "endpoint_down", s.ep.URL)
		if g == nil {
			continue // still forming
		}
		var ago string
		for _, e := range g.Evidence {
			if strings.HasPrefix(e.Text, "last metrics ") {
				ago = e.Text
			}
		}
		if ago == "" || ago == last {
			t.Fatalf("down replica's evidence %q after %q: the clock's words did not move", ago, last)
		}
		last = ago
	}
	if last == "" {
		t.Fatal("the down replica's finding never opened")
	}
}

// A verdict that holds until an instant (a restart leaving the window the
// rules look back over) is judged again exactly then, with nothing else
// changing: the restart finding goes at the first refresh past its window.
func TestKeptVerdictJudgedAgainWhenItsTimeComes(t *testing.T) {
	f, kept, scratch := steadyFleet(t, 6)
	s := f.eps[2]
	var at time.Time
	f.refresh(t, kept, scratch, 5*time.Second, func() {
		at = f.now.Add(time.Second)
		s.ep.State.Restarts = []time.Time{at}
		s.ep.Runs = nil // no ledger: the counters' word alone
		s.state++
	})
	seen := false
	for f.now.Sub(at) <= restartWindow+time.Minute {
		rep := f.refresh(t, kept, scratch, 30*time.Second, nil)
		g := findingOf(rep, "restarts", s.ep.URL)
		switch within := rep.Time.Sub(at) <= restartWindow; {
		case within && g != nil:
			seen = true
		case !within && g != nil && g.ClearSince.IsZero():
			t.Fatalf("%s after the restart (window %s): the restart still counts", rep.Time.Sub(at), restartWindow)
		}
	}
	if !seen {
		t.Fatal("the restart was never a finding")
	}
}

// Every field of an endpoint is either in its Mark or one the rules read
// only beside the clock: a field added later must be placed.
func TestMarkCoversEveryField(t *testing.T) {
	inMark := map[string]bool{"URL": true, "Identity": true, "Scrape": true, "LastOK": true, "Life": true, "LifeSince": true,
		"LifeDetail": true, "Port": true, "Runs": true, "Host": true, "Trend": true}
	elsewhere := map[string]string{
		"State":   "the caller's state mark (Store.StateMark)",
		"Log":     "the caller's log mark (the store's Changes, the log being no window-free state)",
		"Batch":   "batchMark, where a rule read it",
		"Before":  "the Diagnoser's own, compared by the verdict",
		"UpSince": "the Diagnoser's own, compared by the verdict",
		"Mark":    "itself",
	}
	typ := reflect.TypeFor[Endpoint]()
	for i := range typ.NumField() {
		n := typ.Field(i).Name
		if !inMark[n] && elsewhere[n] == "" {
			t.Errorf("Endpoint.%s is neither in MarkOf nor accounted for elsewhere", n)
		}
	}
	counted := map[reflect.Type]int{
		reflect.TypeFor[model.Identity]():   16, // the router's parts (Backends, RouterQueue, LoadRange, Overhead, Tenants) zero the mark
		reflect.TypeFor[model.Run]():        16, // Benches and Behaviour zero the mark
		reflect.TypeFor[model.RunSummary](): 18,
		reflect.TypeFor[model.Scrape]():     8,
		reflect.TypeFor[model.ModelInfo]():  3,
	}
	for typ, n := range counted {
		if typ.NumField() != n {
			t.Errorf("%s has %d fields, MarkOf was written for %d: hash the new ones (or zero the mark on them)", typ, typ.NumField(), n)
		}
	}
}

// A verdict that holds until an instant and reads no clock otherwise (a
// rule that judges whether a minute has passed since the endpoint's life
// changed, saying nothing of how long) is judged again at that instant,
// with nothing else changing, and not before.
func TestKeptVerdictWithADeadlineIsJudgedAgainThen(t *testing.T) {
	saved := rules
	defer func() { rules = saved }()
	rules = append(slices.Clip(rules), rule{id: "test_young", checks: "test", hold: holdNone, local: true, eval: func(e *env) []Finding {
		var out []Finding
		for ep := range each(e.in.Endpoints) {
			if !ep.LifeSince.IsZero() && !e.past(ep.LifeSince, time.Minute) {
				out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevInfo, Title: "young"})
			}
		}
		return out
	}})
	f, kept, scratch := steadyFleet(t, 5)
	s := f.eps[1]
	var since time.Time
	f.refresh(t, kept, scratch, 10*time.Second, func() {
		since = f.now.Add(10 * time.Second)
		s.ep.LifeSince = since
	})
	for {
		rep := f.refresh(t, kept, scratch, 10*time.Second, nil)
		g := findingOf(rep, "test_young", s.ep.URL)
		young := g != nil && g.ClearSince.IsZero() // (it then waits Config.Clear to close)
		if rep.Time.Sub(since) <= time.Minute {
			if !young {
				t.Fatalf("%s after: want young", rep.Time.Sub(since))
			}
			if n := kept.Judged(); n != 0 {
				t.Fatalf("%s after: judged %d endpoints before the deadline", rep.Time.Sub(since), n)
			}
			continue
		}
		if young {
			t.Fatalf("%s after (deadline a minute): still young", rep.Time.Sub(since))
		}
		if n := kept.Judged(); n != 1 {
			t.Fatalf("at the deadline: judged %d endpoints, want the one", n)
		}
		break
	}
}

// The window the rules read over is the caller's to change, and a
// window-free State's mark does not move with it: every verdict is judged
// again over the new window.
func TestKeptVerdictsFollowTheWindow(t *testing.T) {
	f, kept, scratch := steadyFleet(t, 8)
	f.refresh(t, kept, scratch, 5*time.Second, nil)
	if n := kept.Judged(); n != 0 {
		t.Fatalf("judged %d with nothing changed", n)
	}
	f.refresh(t, kept, scratch, 5*time.Second, func() {
		for _, s := range f.eps {
			s.ep.State.Window = 5 * time.Minute
		}
	})
	if n := kept.Judged(); n != len(f.eps) {
		t.Fatalf("window changed: judged %d of %d", n, len(f.eps))
	}
}

// Where most of a fleet changed at once, the rules judge it in one pass
// (cheaper than each replica alone); the next refresh judges each replica
// alone, and the one after keeps what stood. The reports never differ from
// judging from scratch.
func TestBusyFleetJudgedAtOnceThenKept(t *testing.T) {
	f, kept, scratch := steadyFleet(t, 20)
	f.refresh(t, kept, scratch, 5*time.Second, func() {
		for _, s := range f.eps[:15] {
			s.ep.State.Waiting = model.Some(80)
			s.state++
		}
	})
	if !kept.kept.bypass || kept.Judged() != 20 {
		t.Fatalf("15 of 20 changed: bypass %v, judged %d", kept.kept.bypass, kept.Judged())
	}
	f.refresh(t, kept, scratch, 5*time.Second, nil)
	if kept.kept.bypass || kept.Judged() != 20 {
		t.Fatalf("the refresh after: bypass %v, judged %d (want each alone)", kept.kept.bypass, kept.Judged())
	}
	f.refresh(t, kept, scratch, 5*time.Second, nil)
	if kept.Judged() != 0 {
		t.Fatalf("nothing changed since: judged %d", kept.Judged())
	}
}
