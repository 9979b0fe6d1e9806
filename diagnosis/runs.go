package diagnosis

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// RunDelta is one metric of two runs side by side.
type RunDelta struct {
	Name          string    `json:"name"`
	Before, After model.Opt `json:"-"`
	// Change is after/before − 1 (−0.31 is 31 % lower); OK only when both
	// sides are known and before is not zero.
	Change model.Opt `json:"change"`
	// LowerIsBetter: latencies; throughput is the other way.
	LowerIsBetter bool `json:"lower_is_better"`
}

// RunComparison compares two runs of one endpoint: what changed in the
// configuration and what each metric did, at the load each run carried.
type RunComparison struct {
	A, B   int      `json:"-"`
	Config []string `json:"config"`
	Deltas []RunDelta
	// Similar is set when both runs were offered comparable load (arrivals
	// within Config.SimilarLoad of each other: finished requests/s plus
	// the growth of the queue, so a configuration that finishes fewer of
	// the same arrivals is a regression, not "not comparable"; finished
	// requests/s when the arrivals are unknown); the deltas mean little
	// otherwise. LoadBefore and LoadAfter are the load compared, Offered
	// says which.
	Similar               bool
	LoadBefore, LoadAfter model.Opt
	Offered               bool
	// SameLoad is set when each run has a benchmark that offered this same
	// load: the deltas are then the two benchmarks' (client-side), not
	// the runs' server-side summaries.
	SameLoad *model.BenchLoad `json:"same_load,omitempty"`
	// NotComparable says why the two runs cannot be compared ("" when they
	// can): a different model, or benchmarks that offered different loads.
	NotComparable string `json:"not_comparable,omitempty"`
	Verdict       string
}

// CompareRuns compares run a (before) with run b (after). The verdict is
// one line: "args.max_num_seqs 256 → 128: TPOT p99 −31 %, TTFT p99 +12 %,
// output tok/s −8 % at 12 req/s". When both runs carry a benchmark at the
// same offered load, those two benchmarks are compared instead: "--max-num-seqs
// 16 → 32: TTFT p99 8.1 s → 1.2 s, output tok/s +41 %, TPOT p99 +6 % at 16
// streams × 30s, 256 in / 128 out: better".
func CompareRuns(a, b model.Run, cfg Config) RunComparison {
	c := RunComparison{A: a.N, B: b.N, Config: model.ConfigDiff(a.Config, b.Config)}
	if a.Version != "" && b.Version != "" && a.Version != b.Version {
		c.Config = append([]string{"version " + a.Version + " → " + b.Version}, c.Config...)
	}
	if am, bm := strings.Join(a.Models, ","), strings.Join(b.Models, ","); am != "" && bm != "" && am != bm {
		c.Config = append([]string{"model " + am + " → " + bm}, c.Config...)
		c.NotComparable = "the model differs (" + am + " → " + bm + ")"
	}
	c.Config = append(c.Config, behaviourDiff(a.Behaviour, b.Behaviour)...)
	sa, sb := a.Summary, b.Summary
	c.LoadBefore, c.LoadAfter = sa.RequestsPS, sb.RequestsPS
	if sa.OfferedPS.OK && sb.OfferedPS.OK {
		c.LoadBefore, c.LoadAfter, c.Offered = sa.OfferedPS, sb.OfferedPS, true
	}
	if x, y := c.LoadBefore, c.LoadAfter; x.OK && y.OK && math.Max(x.V, y.V) > 0 {
		c.Similar = math.Abs(x.V-y.V) <= cfg.SimilarLoad*math.Max(x.V, y.V)
	}
	// The same number of requests with prompts of another length is not
	// the same load (the demo's long-prompts segment after kv-pressure).
	if x, y := promptPerRequest(sa), promptPerRequest(sb); c.Similar && x > 0 && y > 0 {
		c.Similar = math.Abs(x-y) <= cfg.SimilarLoad*math.Max(x, y)
	}
	if ba, bb := lastLoaded(a), lastLoaded(b); ba != nil && bb != nil {
		if *ba.Load == *bb.Load {
			c.SameLoad = ba.Load
			c.add("TTFT p99", ba.TTFTp99ms, bb.TTFTp99ms, true)
			c.add("TPOT p99", ba.TPOTp99ms, bb.TPOTp99ms, true)
			c.add("output tok/s", ba.OutputTPS, bb.OutputTPS, false)
			c.Verdict = c.benchVerdict(b, cfg)
			return c
		}
		if c.NotComparable == "" {
			c.NotComparable = "the benchmarks offered different loads (" + ba.Load.String() + " → " + bb.Load.String() + ")"
		}
	}
	// A run that has served nothing (just restarted, idle) has no numbers
	// to set against the other's: "output tok/s −100 %" was its verdict.
	for _, r := range []model.Run{a, b} {
		if s := r.Summary; c.NotComparable == "" && s.GenTPS.OK && s.GenTPS.V == 0 && !(s.RequestsPS.OK && s.RequestsPS.V > 0) {
			c.NotComparable = fmt.Sprintf("run %d generated no tokens (idle)", r.N)
		}
	}
	c.add("TTFT p99", sa.TTFTp99ms, sb.TTFTp99ms, true)
	c.add("TPOT p99", sa.TPOTp99ms, sb.TPOTp99ms, true)
	c.add("ITL p99", sa.ITLp99ms, sb.ITLp99ms, true)
	c.add("output tok/s", sa.GenTPS, sb.GenTPS, false)
	c.add("req/s", sa.RequestsPS, sb.RequestsPS, false)
	c.Verdict = c.verdict()
	return c
}

func (c *RunComparison) add(name string, x, y model.Opt, lower bool) {
	d := RunDelta{Name: name, Before: x, After: y, LowerIsBetter: lower}
	if x.OK && y.OK && x.V != 0 {
		d.Change = model.Some(y.V/x.V - 1)
	}
	c.Deltas = append(c.Deltas, d)
}

// lastLoaded is the run's newest benchmark that says what load it offered.
func lastLoaded(r model.Run) *model.RunBench {
	for i := len(r.Benches) - 1; i >= 0; i-- {
		if r.Benches[i].Load != nil {
			return &r.Benches[i]
		}
	}
	return nil
}

// head is what changed between the runs: the change llmtop applied, else
// the configuration diff.
func (c RunComparison) head(b model.Run) string {
	if b.Applied != "" {
		_, change, ok := strings.Cut(b.Applied, " → ")
		if strings.HasPrefix(b.Applied, "undo: ") || !ok {
			return b.Applied
		}
		return change
	}
	if len(c.Config) > 0 {
		return strings.Join(c.Config, ", ")
	}
	return "no configuration change seen"
}

// noise is the relative change below which a metric is not called better
// or worse in a verdict.
const noise = 0.05

// benchVerdict is the same-load comparison's line. A latency that rose
// but stays within its SLO is a trade-off, named, not a regression.
func (c RunComparison) benchVerdict(b model.Run, cfg Config) string {
	var parts, within []string
	better, worse := 0, 0
	for _, d := range c.Deltas {
		if !d.Change.OK {
			parts = append(parts, d.Name+" not measured")
			continue
		}
		if d.LowerIsBetter {
			parts = append(parts, fmt.Sprintf("%s %s → %s", d.Name, msText(d.Before.V), msText(d.After.V)))
		} else {
			parts = append(parts, fmt.Sprintf("%s %s", d.Name, signedPct(d.Change.V)))
		}
		improved := d.Change.V < 0 == d.LowerIsBetter
		slo := map[string]float64{"TTFT p99": ms(cfg.SLOTTFT), "TPOT p99": ms(cfg.SLOITL), "ITL p99": ms(cfg.SLOITL)}[d.Name]
		switch {
		case math.Abs(d.Change.V) < noise:
		case improved:
			better++
		case d.LowerIsBetter && slo > 0 && d.After.V <= slo:
			within = append(within, fmt.Sprintf("%s rose within its %s SLO", d.Name, msText(slo)))
		default:
			worse++
		}
	}
	word := "no clear change (every metric within 5 %)"
	switch {
	case better > 0 && worse == 0:
		word = "better"
		if len(within) > 0 {
			word += " (" + strings.Join(within, ", ") + ")"
		}
	case worse > 0 && better == 0:
		word = "worse"
	case better > 0:
		word = "mixed"
	}
	return c.head(b) + ": " + strings.Join(parts, ", ") + " at " + c.SameLoad.String() + ": " + word
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// promptPerRequest is a run's mean prompt length (0 when unknown).
func promptPerRequest(s model.RunSummary) float64 {
	if !s.PromptTPS.OK || !s.RequestsPS.OK || s.RequestsPS.V <= 0 {
		return 0
	}
	return s.PromptTPS.V / s.RequestsPS.V
}

func (c RunComparison) verdict() string {
	head := "no configuration change seen"
	if len(c.Config) > 0 {
		head = strings.Join(c.Config, ", ")
	}
	if c.NotComparable != "" {
		return head + ": not comparable: " + c.NotComparable
	}
	var parts []string
	for _, d := range c.Deltas {
		if d.Name == "req/s" || !d.Change.OK {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", d.Name, signedPct(d.Change.V)))
	}
	if len(parts) == 0 {
		return head + ": not comparable (a run without latency or throughput numbers)"
	}
	load := ""
	unit := " req/s"
	if c.Offered {
		unit = " req/s offered"
	}
	switch {
	case c.Similar:
		load = " at " + num(c.LoadAfter.V) + unit
	case c.LoadBefore.OK && c.LoadAfter.OK:
		load = " (load differs: " + num(c.LoadBefore.V) + " → " + num(c.LoadAfter.V) + unit + ", not comparable)"
	default:
		load = " (load unknown)"
	}
	return head + ": " + strings.Join(parts, ", ") + load
}

// signedPct writes a relative change as "+12 %" / "−31 %".
func signedPct(r float64) string {
	p := math.Round(r * 100)
	if p < 0 {
		return fmt.Sprintf("−%.0f %%", -p)
	}
	return fmt.Sprintf("+%.0f %%", p)
}

// restartsFromRuns judges an endpoint's restarts from its ledger: only
// crashes count toward a crash loop; a planned restart is news, with its
// configuration change; one whose cause nobody saw says so.
func restartsFromRuns(e *env, ep Endpoint) []Finding {
	n := len(ep.Runs)
	var crashes []model.Run
	for _, r := range ep.Runs {
		if r.End == model.RunCrash && r.Ended != nil && !e.past(*r.Ended, restartWindow) {
			crashes = append(crashes, r)
		}
	}
	if len(crashes) >= 3 {
		ev := []Evidence{{Text: fmt.Sprintf("%d crashes in %s", len(crashes), dur(restartWindow)), Source: "run ledger", Window: restartWindow}}
		for _, r := range crashes[max(0, len(crashes)-3):] {
			ev = append(ev, Evidence{Text: fmt.Sprintf("run %d ended %s: %s", r.N, r.Ended.Format("15:04:05"), nonEmpty(r.EndLine, r.EndReason)), Source: "run ledger"})
		}
		return []Finding{{ID: "restarts", Endpoint: ep.URL, Category: Availability, Severity: model.SevCrit,
			Title: "engine crash loop", Evidence: ev,
			Cause: "the engine dies again after each restart: the same fault (memory, a bad flag, a failing GPU) is still there",
			Actions: []Action{{Change: "read the crash lines in the evidence; fix their cause before the next restart (memory and startup findings name the flag)",
				Why: "restarting does not fix a deterministic failure", TradeOff: "none"}}}}
	}
	if n < 2 {
		return nil
	}
	prev, cur := ep.Runs[n-2], ep.Runs[n-1]
	if cur.Ended != nil || e.past(cur.Started, restartWindow) {
		// Old news, or the run that restart began has ended too: the
		// stop's own finding speaks now, not the restart before it.
		return nil
	}
	ago := dur(e.now().Sub(cur.Started).Round(1e9))
	diff := CompareRuns(prev, cur, e.cfg).Config
	f := Finding{ID: "restarts", Endpoint: ep.URL, Category: Availability}
	ev := []Evidence{{Text: fmt.Sprintf("run %d started %s ago (%s)", cur.N, ago, nonEmpty(cur.StartedBy, "restart")), Source: "run ledger"}}
	switch prev.End {
	case model.RunPlanned:
		f.Severity, f.Title = model.SevInfo, "planned restart"
		end := "run " + fmt.Sprint(prev.N) + " ended cleanly: " + nonEmpty(prev.EndReason, "shutdown")
		f.Cause = "the engine was shut down and started again (a deploy, a config change): caches and CUDA graphs start cold"
		if prev.EndGuessed {
			// Taken as planned because the configuration changed: no
			// shutdown line was seen (a kill -9 and a start with new
			// flags look the same), so "ended cleanly" would claim more.
			f.Title = "restart with a new configuration"
			end = "run " + fmt.Sprint(prev.N) + ": how it ended was not seen (no shutdown or crash line); taken as planned because its configuration changed"
			f.Cause = "the engine was stopped and started again with another configuration (a deploy, a config change): caches and CUDA graphs start cold"
		}
		if len(diff) > 0 {
			f.Title += ": " + strings.Join(diff, ", ")
		}
		ev = append(ev, Evidence{Text: end, Source: "run ledger"})
		f.Actions = []Action{{Change: "press r to compare the two runs (configuration diff, latency and throughput at similar load)",
			Why: "a planned restart is a chance to see what the change did", TradeOff: "none"}}
	case model.RunCrash:
		f.Severity, f.Title = model.SevWarn, "engine crashed and restarted"
		ev = append(ev, Evidence{Text: "run " + fmt.Sprint(prev.N) + " crashed: " + nonEmpty(prev.EndLine, prev.EndReason), Source: "run ledger"})
		if back, ok := recovered(e, ep); ok {
			// Serving again for a while: history, not what to look at now
			// (the demo's next segments led with this WARN throughout).
			f.Severity, f.Title = model.SevInfo, "engine recovered from a crash"
			ev = append(ev, Evidence{Text: "served again since the restart, " + dur(e.now().Sub(back).Round(time.Second)) + " ago", Source: "run ledger"})
		}
		f.Cause = "the engine process died and was restarted by its supervisor"
		f.Actions = []Action{{Change: "fix what the crash line says (memory and startup findings name the flag)",
			Why: "a crash repeats until its cause is gone", TradeOff: "none"}}
		if prev.EndLine == "" {
			// Killed: it stopped answering and its log said nothing (no
			// crash line to fix, and nothing says who started it again).
			f.Cause = "the engine stopped answering with no crash or shutdown line in its log (SIGKILL, the kernel's OOM killer), then started again"
			f.Actions = []Action{{Change: "find what killed it: the kernel's OOM killer (dmesg | grep -i 'killed process', journalctl -k), the container runtime (OOMKilled), or an operator",
				Why: "a kill leaves no line in the engine's own log", TradeOff: "none"}}
		}
	default:
		f.Severity, f.Title = model.SevWarn, "engine restarted (cause not seen)"
		ev = append(ev, Evidence{Text: "run " + fmt.Sprint(prev.N) + " ended with no word why: " + nonEmpty(cur.StartedBy, "counters went back"), Source: "run ledger"})
		f.Cause = "the engine process exited and came back; without its log llmtop cannot tell a crash from a deploy"
		f.Actions = []Action{{Change: "attach the engine's log (--log FILE, --docker NAME, --journal UNIT)",
			Why: "its shutdown or crash lines tell a planned restart from a crash", TradeOff: "none"}}
	}
	for _, d := range diff {
		ev = append(ev, Evidence{Text: "changed: " + d, Source: "run ledger"})
	}
	f.Evidence = ev
	return []Finding{f}
}

// recoveredAfter is how long an engine must serve again after a crash for
// the crash to be history (INFO) rather than news (WARN).
const recoveredAfter = time.Minute

// recovered is when ep came back after the crash that ended its previous
// run, ok once it has served since for recoveredAfter.
func recovered(e *env, ep Endpoint) (time.Time, bool) {
	n := len(ep.Runs)
	// The run that began after the crash served, a minute and more ago:
	// a later outage of its metrics or of the engine (the demo restarts it
	// at a segment's end) is news of its own, not the crash again; and if
	// that run ends, the restart finding ends with it.
	if n == 0 || ep.Runs[n-1].Summary.Samples == 0 {
		return time.Time{}, false
	}
	back := ep.Runs[n-1].Started
	return back, e.reached(back, recoveredAfter)
}

// minCompared is how long each run must have served before their
// latencies are compared.
const minCompared = 30 // seconds

// regressionFromRuns compares the current run with the one before at
// similar load; only a regression is a finding (the configuration change
// itself is the planned-restart finding's).
// judged is false when there is no recent restart to judge (one run, or
// the newest started long ago): the rule then has nothing of its kind.
func regressionFromRuns(e *env, ep Endpoint) (f Finding, found, judged bool) {
	n := len(ep.Runs)
	if n < 2 {
		return Finding{}, false, false
	}
	prev, cur := ep.Runs[n-2], ep.Runs[n-1]
	if cur.Ended != nil || e.past(cur.Started, restartWindow) {
		return Finding{}, false, false
	}
	e.now() // the current run's summary (ServedS, its rates) moves with the clock
	if prev.Summary.ServedS < minCompared || cur.Summary.ServedS < minCompared {
		// a run's first seconds are warm-up and noise, not its latency
		e.lack(&ep, fmt.Sprintf("latency after the restart vs before (each run must serve %d s first: %s and %s so far)",
			minCompared, dur(time.Duration(prev.Summary.ServedS*float64(time.Second))), dur(time.Duration(cur.Summary.ServedS*float64(time.Second)))))
		return Finding{}, false, true
	}
	c := CompareRuns(prev, cur, e.cfg)
	if !c.Similar {
		e.lack(&ep, "latency after the restart vs before (the two runs did not see similar load)")
		return Finding{}, false, true
	}
	var ev []Evidence
	worse := false
	for _, d := range c.Deltas {
		if !d.LowerIsBetter || !d.Change.OK {
			continue
		}
		ev = append(ev, Evidence{Text: fmt.Sprintf("%s %s → %s ms (%s)", d.Name, num(d.Before.V), num(d.After.V), signedPct(d.Change.V)), Source: "run ledger"})
		worse = worse || d.Change.V+1 >= e.cfg.RegressionRatio
	}
	if !worse {
		return Finding{}, false, true
	}
	ev = append(ev, Evidence{Text: fmt.Sprintf("at similar load: %s req/s before, %s after", num(c.LoadBefore.V), num(c.LoadAfter.V)), Source: "run ledger"})
	for _, d := range c.Config {
		ev = append(ev, Evidence{Text: "changed: " + d, Source: "run ledger"})
	}
	f = Finding{ID: "release_regression", Endpoint: ep.URL, Category: Regression, Severity: model.SevWarn, Title: "latency regressed after the restart", Evidence: ev,
		Cause:   "at similar load the same traffic is slower than in the run before: the change listed is the likely cause",
		Actions: []Action{{Change: "roll back the change listed in the evidence, or A/B it on one replica (r compares the runs)", Why: "isolates which change costs the latency", TradeOff: "none"}}}
	if len(c.Config) == 0 {
		f.Cause = "at similar load the same traffic is slower than in the run before, with no change visible in version or configuration (check flags and driver)"
	}
	return f, true, true
}
