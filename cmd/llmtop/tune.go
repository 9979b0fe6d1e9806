package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/launch"
)

// `llmtop tune -- ENGINE…`: the loop without a person, bounded. Start the
// engine, benchmark it, read the diagnosis, apply the top finding's first
// applicable change, benchmark again at the same load, keep the change only
// if the goal metric improved by more than the run-to-run noise measured at
// the start; stop after --steps or when no finding has an applicable change.
// Running it is the explicit consent to restart the engine it launches.

var tuneFlags struct {
	steps               int
	watch               time.Duration
	streams             int
	duration            time.Duration
	inputLen, outputLen int
	goal, trail, logDir string
	grace               time.Duration
	url                 string
	leave               bool
	settle              time.Duration
}

func init() {
	cmd := &cobra.Command{
		Use:   "tune [flags] -- ENGINE COMMAND…",
		Short: "Headless loop: benchmark, diagnose, apply the top finding's change, benchmark again; keep what beats the noise",
		Long: `Start the engine (as llmtop run does), then repeat at most --steps times:
once it serves and settles (--settle), load it with a warm-up benchmark and
then the measured one (--streams × --duration, the same at every step), read
the diagnosis under that load, apply the top open finding's first change that is a change of the
command line, restart, and benchmark again at the same load. A change is kept
only if the goal metric (--goal; auto: ITL p99 for an ITL finding, TPOT p99
for another decode finding, else TTFT p99) improved by more than that
metric's run-to-run noise on the configuration it changes, measured there
with two benchmarks back to back (at the start, and again on each kept
configuration; threshold: twice the noise, at least 5 %); otherwise the
engine goes back to the command line before it.
Tune stops when no open finding has a change it can apply.

The trail (--trail, JSON) records each step's command, diff, numbers before →
after, and the findings open after it; a short table goes to stdout.`,
		Example: `  llmtop tune -- llmtop sim --scenario queue-buildup ` + vllmCap("16") + ` --rate 10 --port 8011
  llmtop tune --steps 3 --trail tune.json -- ` + llamaServe("1") + ` --port 8090`,
		Args: cobra.MinimumNArgs(1),
		RunE: runTune,
	}
	fs := cmd.Flags()
	fs.SetInterspersed(false)
	fs.IntVar(&tuneFlags.steps, "steps", 5, "most changes to try")
	fs.DurationVar(&tuneFlags.watch, "watch", time.Minute, "how long each configuration is watched when it does not serve; one that serves is watched through its benchmarks (--settle, a warm-up, the measured one). Findings' holds are capped at half of it and at half of --duration")
	fs.IntVar(&tuneFlags.streams, "streams", 8, "benchmark: concurrent streams")
	fs.DurationVar(&tuneFlags.duration, "duration", 20*time.Second, "benchmark: how long each run sends")
	fs.IntVar(&tuneFlags.inputLen, "input-len", 256, "benchmark: prompt words")
	fs.IntVar(&tuneFlags.outputLen, "output-len", 128, "benchmark: output tokens")
	fs.StringVar(&tuneFlags.goal, "goal", "auto", "the metric a change must improve: auto (ITL p99 for an ITL finding, TPOT p99 for another decode one, else TTFT p99), ttft_p99, tpot_p99, itl_p99 or output_tps")
	fs.StringVar(&tuneFlags.trail, "trail", "", "write the trail as JSON here (default beside the logs)")
	fs.StringVar(&tuneFlags.logDir, "log-dir", "", "the engine's logs, one a step (default $XDG_STATE_HOME/llmtop/tune/TIME)")
	fs.DurationVar(&tuneFlags.grace, "stop-timeout", 30*time.Second, "how long a restart waits for the engine to drain after SIGTERM before SIGKILL")
	fs.StringVar(&tuneFlags.url, "url", "", "the engine's endpoint when llmtop cannot read it from the command line (on this machine only)")
	fs.BoolVar(&tuneFlags.leave, "leave-running", false, "leave the engine running with the final command line (default: stop it)")
	fs.DurationVar(&tuneFlags.settle, "settle", 5*time.Second, "how long after the engine serves before the benchmark starts")
	root.AddCommand(cmd)
}

func runTune(cmd *cobra.Command, args []string) error {
	ctx := cmdContext(cmd)
	out := safeOut(cmd.OutOrStdout())
	errOut := safeOut(cmd.ErrOrStderr())
	if tuneFlags.steps < 1 || tuneFlags.streams < 1 || tuneFlags.duration <= 0 || tuneFlags.watch <= 0 {
		return errors.New("--steps, --streams, --duration and --watch must be positive")
	}
	switch tuneFlags.goal {
	case "auto", string(launch.GoalTTFT), string(launch.GoalTPOT), string(launch.GoalITL), string(launch.GoalThroughput):
	default:
		return fmt.Errorf("--goal %q: want auto, ttft_p99, tpot_p99, itl_p99 or output_tps", tuneFlags.goal)
	}
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	env, argv := splitEnv(args)
	if len(argv) == 0 {
		return errors.New("no engine command: llmtop tune -- [NAME=VALUE…] ENGINE ARGS…")
	}
	dir := tuneFlags.logDir
	if dir == "" {
		d, err := runDir()
		if err != nil {
			return err
		}
		dir = filepath.Join(filepath.Dir(d), "tune", time.Now().Format("20060102-150405"))
	}
	stepLog := func(n int) string { return filepath.Join(dir, fmt.Sprintf("step-%d.log", n)) }
	s, err := launch.NewSession(argv, env, stepLog(0), tuneFlags.url, tuneFlags.grace)
	if err != nil {
		return err
	}
	t := &tuner{s: s, told: []model.Launch{launchOf(model.RedactURL(s.URL), s.Current(), s.Current().Started, "")}, out: errOut, cfg: tuneDiagnoseConfig(fileCfg.Thresholds, tuneFlags.watch, tuneFlags.duration), load: model.BenchLoad{Preset: "custom", Streams: tuneFlags.streams, DurationS: tuneFlags.duration.Seconds(),
		InputLen: tuneFlags.inputLen, OutputLen: tuneFlags.outputLen}}
	trail, terr := t.run(ctx, stepLog)
	// However it ended, the engine it launched is stopped or left as asked.
	p := s.Current()
	if tuneFlags.leave {
		_ = p.WriteNote()
		fmt.Fprintf(errOut, "llmtop tune: left the engine running (pid %d); see %s\n", p.PID, p.NotePath())
	} else if done, _ := p.Exited(); !done {
		fmt.Fprintf(errOut, "llmtop tune: stopping the engine (pid %d): %s\n", p.PID, p.Stop(s.Grace))
	}
	path := tuneFlags.trail
	if path == "" {
		path = filepath.Join(dir, "trail.json")
	}
	if b, err := json.MarshalIndent(trail, "", "  "); err == nil {
		if werr := os.WriteFile(path, append(b, '\n'), 0o600); werr != nil {
			fmt.Fprintf(errOut, "llmtop tune: the trail is not saved: %v\n", werr)
		} else {
			fmt.Fprintf(errOut, "llmtop tune: trail in %s, logs in %s\n", path, dir)
		}
	}
	fmt.Fprint(out, trail.Table())
	return terr
}

// tuneDiagnoseConfig is the diagnosis a configuration is judged by. Its
// findings are read under the measured benchmark's load, at judgeAt into
// it, after a warm-up benchmark (see observe); a finding opens only after
// its condition held for its hold, so every hold is capped at half the
// benchmark: a condition the load brings by the first quarter of the
// measured benchmark can open by then. (Capped at half the watch
// only, holds of 20-30 s could never open in a 10 s benchmark, and a
// configuration read "no open finding" for having been watched too short.)
func tuneDiagnoseConfig(th config.Thresholds, watch, duration time.Duration) diagnosis.Config {
	c := diagnoseConfig(th, watch)
	c.MaxHold = min(c.MaxHold, duration/2)
	c.Clear = min(c.Clear, duration/2)
	return c
}

// judgeAt is how far into the measured benchmark the configuration's
// findings are read: under its load, not at the end of the watch, when
// the load is over and a queue finding that still holds on its window
// reads an empty queue (its advice then names no value).
func judgeAt(duration time.Duration) time.Duration { return duration * 3 / 4 }

// tuner is one tune: the launched engine and the trail so far.
type tuner struct {
	s    *launch.Session
	cfg  diagnosis.Config
	out  io.Writer
	load model.BenchLoad
	// told is the core's word of the engine's latest start (the first
	// one, or a restart's words: llmtop run's), handed to each watch's
	// core before it runs: the engine starting after it was launched or
	// restarted is not an outage, and its run carries the change.
	told []model.Launch
}

// observed is one configuration: its numbers and its diagnosis.
type observed struct {
	m    launch.Measure
	rep  diagnosis.Report
	open []string
}

func (t *tuner) logf(format string, a ...any) { fmt.Fprintf(t.out, "llmtop tune: "+format+"\n", a...) }

func (t *tuner) run(ctx context.Context, stepLog func(int) string) (launch.Trail, error) {
	tr := launch.Trail{Start: model.RedactCmdline(t.s.Command()), Load: t.load}
	t.logf("step 0: %s (log %s)", tr.Start, t.s.Current().Log)
	// The noise: two benchmarks at the same load on the unchanged engine,
	// the second inside the first configuration's watch.
	kept, extra, err := t.observe(ctx, true)
	if err != nil {
		return tr, err
	}
	goal := t.goalFor(kept.rep)
	tr.NoiseByGoal = launch.MeasureNoises(kept.m, extra)
	tr.Noise = tr.NoiseFor(goal)
	t.logf("noise: %s %s vs %s; %s", goal, tuneGoalText(goal, kept.m), tuneGoalText(goal, extra), tr.NoiseText())
	tr.Steps = append(tr.Steps, launch.Step{N: 0, Command: tr.Start, Measure: kept.m, Open: kept.open, Kept: true})
	tried := map[string]bool{}
	keptArgs, keptEnv := t.s.Args(), t.s.Env()
	for n := 1; n <= tuneFlags.steps; n++ {
		if ctx.Err() != nil {
			tr.Stopped = "interrupted"
			break
		}
		f, plan, notApplied := t.next(kept.rep, tried)
		if !plan.OK() {
			tr.Stopped = "no open finding"
			if len(kept.open) > 0 {
				tr.Stopped = "no open finding has a change llmtop can apply to the command line"
			}
			if len(notApplied) > 0 {
				tr.Stopped += " (not applied: " + joinNA(notApplied) + ")"
			}
			break
		}
		tried[plan.NewCommand()] = true
		goal := t.goalForFinding(f)
		t.logf("step %d: %s → %s", n, f.ID, launch.Describe(plan.Diff))
		t.s.SetLog(stepLog(n))
		if err := t.restart(plan); err != nil {
			tr.Stopped = fmt.Sprintf("step %d: %v", n, err)
			return tr, err
		}
		obs, _, err := t.observe(ctx, false)
		if err != nil {
			return tr, err
		}
		before := kept.m
		ok, why := launch.Judge(goal, before, obs.m, tr.KeptNoiseFor(goal))
		st := launch.Step{N: n, Finding: f.ID, Change: plan.Change, Diff: plan.Diff, Command: model.RedactCmdline(plan.NewCommand()), Measure: obs.m,
			Goal: goal, Before: &before, Kept: ok, Why: why, Open: obs.open}
		for _, na := range notApplied {
			st.NotTried = append(st.NotTried, na.Change+": "+na.Why)
		}
		t.logf("  %s: %s", map[bool]string{true: "kept", false: "not kept"}[ok], why)
		if ok {
			kept, keptArgs, keptEnv = obs, t.s.Args(), t.s.Env()
			if skip := t.lastStep(ctx, n, kept.rep, tried); skip != "" && obs.m.Served && obs.m.Completed > 0 {
				// Its noise would judge the next step; there is none, so
				// the benchmark is not spent.
				st.NoiseSkipped = skip
				t.logf("noise on this configuration: not measured, because %s", skip)
			} else if obs.m.Served && obs.m.Completed > 0 {
				// The next change is judged against this configuration,
				// so its noise is measured here: a second benchmark on it,
				// back to back. The start's noise belongs to an engine
				// that is gone (lora-starved: ITL p99 spread ×1.51 in the
				// queue-bound start, so a later step that cut it 39 % was
				// "within the noise").
				// A second benchmark that failed or finished nothing
				// measures no noise: the noise before stands.
				if again, _ := t.bench(ctx, nil, nil); again.Served && again.Completed > 0 {
					st.NoiseByGoal = launch.MeasureNoises(obs.m, again)
					for g, x := range st.NoiseByGoal {
						x.How += fmt.Sprintf(" (measured on the configuration kept at step %d)", st.N)
						st.NoiseByGoal[g] = x
					}
					if tr.Noise.A == 0 && st.NoiseByGoal[goal].A > 0 {
						// The first configuration gave no second
						// measurement (it did not serve, or nothing
						// finished): the trail's noise is the first kept
						// one's.
						tr.NoiseByGoal, tr.Noise = st.NoiseByGoal, st.NoiseByGoal[goal]
					}
					t.logf("noise on this configuration: %s %s vs %s; %s", goal, tuneGoalText(goal, obs.m), tuneGoalText(goal, again), launch.NoiseText(st.NoiseByGoal))
				}
			}
			tr.Steps = append(tr.Steps, st)
			continue
		}
		tr.Steps = append(tr.Steps, st)
		// Back to the kept command line, whose findings choose the next step.
		t.s.SetLog(stepLog(n) + ".revert")
		back := launch.Plan{Finding: "revert", Old: t.s.Args(), OldEnv: t.s.Env(), New: keptArgs, NewEnv: keptEnv, Diff: []string{"back to the kept command line"}, Undo: true}
		if err := t.restart(back); err != nil {
			tr.Stopped = fmt.Sprintf("step %d, back to the kept command line: %v", n, err)
			return tr, err
		}
		if err := t.waitServing(ctx); err != nil && kept.m.Served {
			return tr, fmt.Errorf("the kept configuration does not serve again: %w", err)
		}
	}
	if tr.Stopped == "" {
		tr.Stopped = fmt.Sprintf("after %d step(s) (--steps)", tuneFlags.steps)
	}
	tr.Final, tr.Open = model.RedactCmdline(launch.QuoteCommand(keptEnv, keptArgs)), kept.open
	return tr, nil
}

// restart carries out p, keeping what the core is to hear of it for the
// next watch (none runs while tune restarts).
func (t *tuner) restart(p launch.Plan) error {
	if err := t.s.CanRestart(p); err != nil {
		return err
	}
	t.told = nil
	_, err := restartTelling(t.s, model.RedactURL(t.s.URL), p, func(l model.Launch) { t.told = append(t.told, l) }, func(line string) { t.logf("  %s", line) })
	return err
}

// watchEngine is a watch of the current engine with its log attached, its
// core told how the engine started.
func (t *tuner) watchEngine() *watch {
	w := newWatch([]string{t.s.URL}, t.cfg)
	w.logs = []string{t.s.Current().Log} // the engine's own log, from its first line
	for _, l := range t.told {
		w.apply(l)
	}
	return w
}

// lastStep says why no step follows step n, whose configuration was kept
// with rep ("" when one may): the --steps budget is spent, the run was
// interrupted, or no open finding has a change left to try.
func (t *tuner) lastStep(ctx context.Context, n int, rep diagnosis.Report, tried map[string]bool) string {
	switch {
	case n >= tuneFlags.steps:
		return fmt.Sprintf("no step follows (--steps %d spent)", tuneFlags.steps)
	case ctx.Err() != nil:
		return "no step follows (interrupted)"
	}
	if _, plan, _ := t.next(rep, tried); !plan.OK() {
		return "no step follows (no open finding has a change left to try)"
	}
	return ""
}

func joinNA(na []launch.NotApplicable) string {
	var out []string
	for _, x := range na {
		out = append(out, x.Change+": "+x.Why)
	}
	return fmt.Sprint(out)
}

// next is the top open finding's first change not yet tried, with the
// actions before it that are not changes of the command line.
func (t *tuner) next(rep diagnosis.Report, tried map[string]bool) (diagnosis.Finding, launch.Plan, []launch.NotApplicable) {
	var na []launch.NotApplicable
	for _, f := range rep.Findings {
		if f.Severity < model.SevWarn || len(f.Actions) == 0 {
			continue
		}
		var changes []string
		for _, a := range f.Actions {
			changes = append(changes, a.Change)
		}
		p := t.s.PlanFor(f.ID, changes)
		for _, x := range p.NotApplied {
			if !slices.Contains(na, x) {
				na = append(na, x)
			}
		}
		if p.OK() && !tried[p.NewCommand()] {
			return f, p, na
		}
	}
	return diagnosis.Finding{}, launch.Plan{}, na
}

func (t *tuner) goalFor(rep diagnosis.Report) launch.Goal {
	for _, f := range rep.Findings {
		if f.Severity >= model.SevWarn {
			return t.goalForFinding(f)
		}
	}
	return t.goalForFinding(diagnosis.Finding{})
}

func (t *tuner) goalForFinding(f diagnosis.Finding) launch.Goal {
	if tuneFlags.goal != "auto" {
		return launch.Goal(tuneFlags.goal)
	}
	// An ITL finding (spikes, the batch knee) is judged by the gaps
	// between tokens; a request's mean (TPOT) averages a stall away.
	if strings.HasPrefix(f.ID, "itl_") {
		return launch.GoalITL
	}
	// Requests waiting for a LoRA adapter's slot are the adapters'
	// requests, which tune's benchmark does not send: the server's TTFT,
	// over all its traffic, is what the change must move.
	if f.ID == "lora_starved" {
		return launch.GoalServerTTFT
	}
	if f.Category == diagnosis.Decode || strings.HasPrefix(f.ID, "tpot_") {
		return launch.GoalTPOT
	}
	return launch.GoalTTFT
}

// waitServing waits for the engine to serve, at most the watch.
func (t *tuner) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, tuneFlags.watch)
	defer cancel()
	return t.s.WaitServing(ctx)
}

// observe watches the current engine for --watch (or until its benchmarks
// end, if later) with its log attached. Once it serves and settles, it runs
// the load profile twice: a warm-up that brings the load (the rules see it
// build: a queue, a full KV pool), then the measured benchmark, under which
// the findings are read; with noise, once more for the noise (the second
// result comes back as extra).
func (t *tuner) observe(ctx context.Context, noise bool) (observed, launch.Measure, error) {
	url := t.s.URL
	w := t.watchEngine()
	w.start = time.Now()
	w.open(monitorFlags.interval) // before it runs: bench and judge hand it inputs
	type result struct {
		rep diagnosis.Report
		err error
	}
	dur := time.Duration(t.load.DurationS * float64(time.Second))
	wctx, endWatch := context.WithCancel(ctx)
	defer endWatch()
	done := make(chan result, 1)
	go func() {
		// Ended by endWatch once the watch and the benchmarks are over; the
		// bound only matters if the benchmarks hang.
		rep, err := w.run(wctx, 2*tuneFlags.watch+tuneFlags.settle+4*dur+time.Minute, monitorFlags.interval)
		done <- result{rep, err}
	}()
	var extra, m launch.Measure
	var (
		loadMu sync.Mutex
		atLoad *diagnosis.Report
	)
	if err := t.waitServing(ctx); err != nil {
		t.logf("  not serving: %v", err)
	} else {
		select {
		case <-time.After(tuneFlags.settle):
		case <-ctx.Done():
		}
		// Every configuration gets the same: the same settle, the same
		// warm-up, then the measured benchmark, at the same age of the
		// engine. (Measured by the first benchmark alone, the rules had
		// 11 s of load to open a finding on llama-server and found none;
		// measured by the second only on the first configuration, the
		// before was read 10-20 s later into a building queue than any
		// after, and a fresh engine looked better for being fresh.)
		// The benchmark's own requests, sent with ignore_eos, finish with
		// reason length by design: the rules are told how many have
		// finished, as they finish (the rules run every tick, and a
		// finding opened on them during the warm-up would stay open past
		// the judgment).
		setOwn := func(n int) { w.do(func() { w.mon.SetOwnLength(url, float64(n)) }) }
		warm, eos := t.bench(ctx, nil, func(p bench.Progress) { setOwn(p.Completed) })
		if !eos { // the server refused ignore_eos: its answers stopped on their own
			setOwn(0)
		}
		var measured atomic.Int64
		judge := time.AfterFunc(judgeAt(dur), func() {
			var rep diagnosis.Report
			if !w.do(func() {
				if eos {
					w.mon.SetOwnLength(url, float64(warm.Completed)+float64(measured.Load()))
				}
				rep = w.evaluate(time.Now())
			}) {
				return // the watch has ended: its last report stands
			}
			loadMu.Lock()
			atLoad = &rep
			loadMu.Unlock()
		})
		m, _ = t.bench(ctx, w, func(p bench.Progress) {
			measured.Store(int64(p.Completed))
			if eos {
				setOwn(warm.Completed + p.Completed)
			}
		})
		judge.Stop()
		if noise {
			extra, _ = t.bench(ctx, nil, nil)
		}
	}
	loadMu.Lock()
	judged := atLoad != nil
	loadMu.Unlock()
	if rest := tuneFlags.watch - time.Since(w.start); rest > 0 && !judged {
		select {
		case <-time.After(rest):
		case <-ctx.Done():
		}
	}
	endWatch()
	r := <-done
	if r.err != nil {
		return observed{}, extra, r.err
	}
	loadMu.Lock()
	if atLoad != nil {
		r.rep = *atLoad
	}
	loadMu.Unlock()
	if runs := w.mon.RunsOf(url); len(runs) > 0 && m.Served { // the watch has ended: the core is ours
		sum := runs[len(runs)-1].Summary
		m.ServerRPS, m.ServerTTFTp99ms = sum.RequestsPS, sum.TTFTp99ms
	}
	open := []string{}
	for _, f := range r.rep.Findings {
		if f.Severity >= model.SevWarn && !slices.Contains(open, f.ID) {
			open = append(open, f.ID)
		}
	}
	t.logf("  %s; open findings: %v", describeMeasure(m), open)
	return observed{m: m, rep: r.rep, open: open}, extra, nil
}

// bench runs the load profile once and hands the result to the watch's
// core (the rules read it, the run keeps it). ignoreEOS says its requests
// asked ignore_eos (the server took it): they ran to max_tokens by design.
// onProgress, if set, hears the run's progress.
func (t *tuner) bench(ctx context.Context, w *watch, onProgress func(bench.Progress)) (m launch.Measure, ignoreEOS bool) {
	key := engineFlags.apiKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	cfg := bench.Config{URL: t.s.URL, APIKey: key, Concurrency: t.load.Streams, Duration: time.Duration(t.load.DurationS * float64(time.Second)),
		InputLen: t.load.InputLen, OutputLen: t.load.OutputLen, Warmup: 2}
	res, err := bench.Run(ctx, cfg, onProgress)
	if err != nil {
		t.logf("  benchmark: %v", safeErr(err))
		return launch.Measure{Served: true}, false
	}
	m = launch.Measure{Served: true, Completed: res.Completed, Failed: res.Failed, TTFTp99ms: res.P99TTFT, TPOTp99ms: res.P99TPOT, ITLp99ms: res.P99ITL}
	if res.OutputThroughput > 0 {
		m.OutputTPS = model.Some(res.OutputThroughput)
	}
	if w == nil {
		return m, res.IgnoreEOS
	}
	load := t.load
	// an input like any other: the core's goroutine files it, the
	// recording keeps it
	w.sess.Send(model.BenchDone{Bench: model.Bench{URL: t.s.URL, Start: res.StartTime, End: res.EndTime, Completed: res.Completed, Failed: res.Failed,
		TTFTp50: res.MedianTTFT, TTFTp99: res.P99TTFT, ITLp50: res.MedianITL, ITLp99: res.P99ITL, TPOTp50: res.MedianTPOT},
		Run: model.RunBench{Time: res.StartTime, Completed: res.Completed, Failed: res.Failed, TTFTp99ms: res.P99TTFT, TPOTp99ms: res.P99TPOT, OutputTPS: m.OutputTPS, Load: &load}})
	return m, res.IgnoreEOS
}

func describeMeasure(m launch.Measure) string {
	if !m.Served {
		return "not serving"
	}
	return fmt.Sprintf("benchmark: %d completed, %d failed, TTFT p99 %s, TPOT p99 %s, output %s tok/s; server: %s req/s finished, TTFT p99 %s", m.Completed, m.Failed,
		fmtMS(m.TTFTp99ms), fmtMS(m.TPOTp99ms), optNum(m.OutputTPS), fmtRate(m.ServerRPS), fmtMS(m.ServerTTFTp99ms))
}

func tuneGoalText(g launch.Goal, m launch.Measure) string {
	v, _ := g.Value(m)
	if g == launch.GoalThroughput {
		return optNum(v)
	}
	return fmtMS(v)
}

func fmtMS(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	if o.V >= 1000 {
		return fmt.Sprintf("%.2f s", o.V/1000)
	}
	return fmt.Sprintf("%.0f ms", o.V)
}

func optNum(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprintf("%.0f", o.V)
}

func fmtRate(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprintf("%.1f", o.V)
}
