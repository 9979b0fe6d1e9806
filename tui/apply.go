package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The apply screen (A) closes the loop for an engine llmtop launched
// (`llmtop run`): a finding's change becomes a new command line, shown as
// a diff and confirmed; llmtop runs the load profile on the current run if
// it has no benchmark yet, restarts the engine (SIGTERM, drain, SIGKILL
// after the named grace time), waits for the new run to serve, runs the
// same benchmark on it, and shows before → after at the same load. U
// plans the undo. The I/O is the Launcher's and the BenchRunner's, both in
// cmd; this file only sequences them.

// Launcher is the engine llmtop launched (cmd/llmtop/run.go).
type Launcher interface {
	// Active reports whether this llmtop launched the engine it watches.
	Active() bool
	// URL is the launched engine's endpoint; Info says its pid, command
	// line and log.
	URL() string
	Info() string
	// Plan turns a finding's changes (in the order it gives them) into a
	// restart; PlanUndo, the restart with the command line before the last
	// applied change. Both compute, they start nothing.
	Plan(finding string, changes []string) LaunchPlan
	PlanUndo() (LaunchPlan, bool)
	// Restart carries a plan out, blocking; progress hears each step.
	Restart(p LaunchPlan, progress func(string)) error
}

// LaunchPlan is a planned restart as the screen shows it.
type LaunchPlan struct {
	Finding, Change string
	Old, New        string // command lines, quoted
	Diff            []string
	NotApplied      []string // "change: why" for each action not applied
	Grace           time.Duration
	Mark            string // what the new run will be marked with
	Undo            bool
	OK              bool
	// Ref is the launcher's own plan, handed back to Restart.
	Ref any
}

// LaunchExitedMsg says the launched engine's process exited by itself (not
// stopped by llmtop): a crash, or a start that failed.
type LaunchExitedMsg struct {
	PID     int
	How     string
	Log     string
	Applied string // the change its start applied, "" for the first start
}

type applyStage int

const (
	applyPick applyStage = iota
	applyConfirm
	applyBenchBefore
	applyRestart
	applyWaitServe
	applyBenchAfter
	applyDone
	applyFailed
)

// applyOverlay is the A screen.
type applyOverlay struct {
	launcher Launcher
	runner   BenchRunner
	stage    applyStage
	sel      int
	plan     LaunchPlan
	load     model.BenchLoad
	beforeN  int // the run the change was applied on
	log      []string
	err      string
	id       int // the current step's messages carry it
	cancel   context.CancelFunc
	ch       chan tea.Msg
	progress BenchProgress
	verdict  string
}

// NewApplyOverlay builds the apply screen around the launched engine and
// the benchmark's runner.
func NewApplyOverlay(l Launcher, r BenchRunner) Overlay {
	return &applyOverlay{launcher: l, runner: r}
}

type applyProgressMsg struct {
	id   int
	line string
}

type applyRestartedMsg struct {
	id  int
	err error
}

// applyPollMsg looks again whether the new run serves (data messages do
// not reach overlays).
type applyPollMsg struct{ id int }

func (o *applyOverlay) poll() tea.Cmd {
	id := o.id
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return applyPollMsg{id} })
}

type applyBenchMsg struct {
	id       int
	progress *BenchProgress
	outcome  *BenchOutcome
}

func (*applyOverlay) Title() string { return "Apply a finding's change" }

func (o *applyOverlay) Keys() []key.Binding {
	k := DefaultKeyMap()
	switch o.stage {
	case applyPick:
		return []key.Binding{relabel(k.Down, "next finding"), relabel(k.Confirm, "plan its change"), relabel(k.Undo, "undo the last change")}
	case applyConfirm:
		return []key.Binding{relabel(k.Yes, "restart with it"), relabel(k.No, "back")}
	case applyDone, applyFailed:
		return []key.Binding{relabel(k.Undo, "undo the change"), relabel(k.Runs, "runs view"), relabel(k.Confirm, "back to the findings")}
	}
	return nil
}

// candidates are the open findings about the launched engine that have
// actions, most severe first.
func (o *applyOverlay) candidates(d *Data) []diagnosis.Finding {
	var out []diagnosis.Finding
	for _, f := range d.Core.Report().Findings {
		if len(f.Actions) > 0 && (f.Endpoint == "" || f.Endpoint == o.launcher.URL()) {
			out = append(out, f)
		}
	}
	return out
}

func changes(f diagnosis.Finding) []string {
	out := make([]string, len(f.Actions))
	for i, a := range f.Actions {
		out[i] = a.Change
	}
	return out
}

func (o *applyOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	k := d.Keys
	if !o.launcher.Active() {
		return false, nil
	}
	switch o.stage {
	case applyPick:
		fs := o.candidates(d)
		switch {
		case key.Matches(msg, k.Down):
			o.sel = min(max(len(fs)-1, 0), o.sel+1)
		case key.Matches(msg, k.Up):
			o.sel = max(0, o.sel-1)
		case key.Matches(msg, k.Confirm), key.Matches(msg, k.Yes):
			if o.sel < len(fs) {
				o.plan = o.launcher.Plan(fs[o.sel].ID, changes(fs[o.sel]))
				o.stage = applyConfirm
			}
		case key.Matches(msg, k.Undo):
			o.planUndo()
		default:
			return false, nil
		}
		return true, nil
	case applyConfirm:
		switch {
		case key.Matches(msg, k.Yes) && o.plan.OK:
			return true, o.begin(d)
		case key.Matches(msg, k.No), key.Matches(msg, k.Back), key.Matches(msg, k.Yes):
			o.stage = applyPick
			return true, nil
		}
		return true, nil
	case applyDone, applyFailed:
		switch {
		case key.Matches(msg, k.Undo):
			o.planUndo()
			return true, nil
		case key.Matches(msg, k.Confirm):
			o.stage = applyPick
			return true, nil
		}
	}
	return false, nil
}

func (o *applyOverlay) planUndo() {
	if p, ok := o.launcher.PlanUndo(); ok {
		o.plan, o.stage = p, applyConfirm
		return
	}
	o.plan = LaunchPlan{NotApplied: []string{"nothing to undo: no change was applied in this session"}}
	o.stage = applyConfirm
}

// profile is the load both runs get: the newest benchmark's that says its
// load, else the quick preset; before says whether the current run still
// needs it.
func profile(runs []model.Run) (model.BenchLoad, bool) {
	for i := len(runs) - 1; i >= 0; i-- {
		for j := len(runs[i].Benches) - 1; j >= 0; j-- {
			if l := runs[i].Benches[j].Load; l != nil {
				return *l, i != len(runs)-1
			}
		}
	}
	return model.BenchLoad{Preset: "quick", Streams: 16, DurationS: 30, InputLen: 256, OutputLen: 128}, true
}

// begin starts the loop: the benchmark on the current run when it has
// none at the load, then the restart.
func (o *applyOverlay) begin(d *Data) tea.Cmd {
	e := d.Core.Endpoint(o.launcher.URL())
	var runs []model.Run
	if e != nil {
		runs = e.Runs
	}
	o.beforeN = 0
	if n := len(runs); n > 0 {
		o.beforeN = runs[n-1].N
	}
	var before bool
	o.load, before = profile(runs)
	o.log, o.err, o.verdict = nil, "", ""
	if before && !o.plan.Undo {
		o.stage = applyBenchBefore
		o.log = append(o.log, "the current run has no benchmark at "+o.load.String()+": running it first, so both runs see the same load")
		return o.bench()
	}
	return o.restart()
}

func (o *applyOverlay) next() (int, chan tea.Msg) {
	o.id++
	o.ch = make(chan tea.Msg, 16)
	return o.id, o.ch
}

func (o *applyOverlay) restart() tea.Cmd {
	o.stage = applyRestart
	id, ch := o.next()
	l, p := o.launcher, o.plan
	o.log = append(o.log, o.plan.Mark)
	return func() tea.Msg {
		go func() {
			err := l.Restart(p, func(s string) { ch <- applyProgressMsg{id, s} })
			ch <- applyRestartedMsg{id, err}
		}()
		return <-ch
	}
}

func (o *applyOverlay) bench() tea.Cmd {
	id, ch := o.next()
	ctx, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	o.progress = BenchProgress{}
	spec := BenchSpec{URL: o.launcher.URL(), Preset: o.load.Preset, Streams: o.load.Streams,
		Duration: time.Duration(o.load.DurationS * float64(time.Second)), InputLen: o.load.InputLen, OutputLen: o.load.OutputLen}
	if spec.Preset == "" {
		spec.Preset = "custom"
	}
	runner := o.runner
	return func() tea.Msg {
		go func() {
			out := runner.Run(ctx, spec, func(p BenchProgress) {
				select {
				case ch <- applyBenchMsg{id: id, progress: &p}:
				default:
				}
			})
			out.Spec = spec
			ch <- applyBenchMsg{id: id, outcome: &out}
		}()
		return <-ch
	}
}

// Receive sequences the loop on its steps' news, and watches for the new
// run to serve.
func (o *applyOverlay) Receive(msg tea.Msg, d *Data) tea.Cmd {
	switch m := msg.(type) {
	case applyProgressMsg:
		if m.id == o.id {
			o.log = append(o.log, m.line)
			return wait(o.ch)
		}
	case applyRestartedMsg:
		if m.id != o.id {
			return nil
		}
		if m.err != nil {
			o.fail(m.err.Error())
			return nil
		}
		o.stage = applyWaitServe
		o.log = append(o.log, "waiting for the new run to serve…")
	case applyPollMsg:
		if m.id != o.id || o.stage != applyWaitServe {
			return nil
		}
	case applyBenchMsg:
		if m.id != o.id {
			return nil
		}
		if m.progress != nil {
			o.progress = *m.progress
			return wait(o.ch)
		}
		return o.benched(d, *m.outcome)
	case LaunchExitedMsg:
		if o.stage == applyRestart || o.stage == applyWaitServe || o.stage == applyBenchAfter || m.Applied != "" {
			o.fail(fmt.Sprintf("the engine (pid %d) %s after %q; its log: %s", m.PID, m.How, nonEmptyStr(m.Applied, "its start"), m.Log))
		}
	}
	if o.stage != applyWaitServe {
		return nil
	}
	if !o.serving(d) {
		if _, ok := msg.(applyPollMsg); ok {
			return o.poll()
		}
		if _, ok := msg.(applyRestartedMsg); ok {
			return o.poll()
		}
		return nil
	}
	o.stage = applyBenchAfter
	o.log = append(o.log, "the new run serves: the same benchmark, "+o.load.String())
	return o.bench()
}

func (o *applyOverlay) fail(why string) {
	o.stage, o.err = applyFailed, why
	if o.cancel != nil {
		o.cancel()
	}
}

// serving reports whether a run newer than the one the change was applied
// on serves with metrics.
func (o *applyOverlay) serving(d *Data) bool {
	e := d.Core.Endpoint(o.launcher.URL())
	if e == nil || len(e.Runs) == 0 {
		return false
	}
	r := e.Runs[len(e.Runs)-1]
	return r.N > o.beforeN && r.Ended == nil && e.Life == model.LifeServing && r.Summary.Samples > 0
}

func (o *applyOverlay) benched(d *Data, out BenchOutcome) tea.Cmd {
	if out.Err != nil && out.Result == nil {
		o.fail("the benchmark failed: " + out.Err.Error())
		return nil
	}
	recordBench(d, out)
	if o.stage == applyBenchBefore {
		return o.restart()
	}
	o.stage = applyDone
	if e := d.Core.Endpoint(o.launcher.URL()); e != nil && len(e.Runs) >= 2 {
		runs := e.Runs
		o.verdict = diagnosis.CompareRuns(runs[len(runs)-2], runs[len(runs)-1], d.Core.Config()).Verdict
	}
	return nil
}

func (o *applyOverlay) View(d *Data, w, h int) string {
	s := d.Styles
	if !o.launcher.Active() {
		return lines([]string{
			"Applying a finding's change restarts the engine, so llmtop does it only for an engine it launched itself:",
			"",
			"  llmtop run -- vllm serve MODEL " + engines.Fill(engines.VLLM.Levers.Cap, "32"),
			// with its metrics on: without them llmtop watches a DEGRADED engine
			"  llmtop run -- llama-server -m model.gguf " + strings.Fields(engines.LlamaCpp.Levers.Cap)[0] + " 2 " +
				strings.Fields(engines.LlamaCpp.Levers.EnableMetrics.Change)[0],
			"",
			s.Faint.Render("llmtop never restarts an engine it did not start, nor one on another machine."),
		}, h)
	}
	out := []string{s.Faint.Render(clip(o.launcher.Info(), w)), ""}
	switch o.stage {
	case applyPick:
		fs := o.candidates(d)
		if len(fs) == 0 {
			out = append(out, "no open finding with an action about this engine")
		}
		for i, f := range fs {
			row := fmt.Sprintf("%-5s %s  →  %s", f.Severity.String(), f.Title, f.Actions[0].Change)
			if i == o.sel {
				out = append(out, s.Highlight.Render(clip("▸ "+row, w)))
			} else {
				out = append(out, clip("  "+row, w))
			}
		}
	case applyConfirm:
		out = append(out, o.planLines(d, w)...)
	default:
		out = append(out, o.progressLines(d, w)...)
	}
	return lines(out, h)
}

// toApply is a plan's mark as the confirmation words it: "applied: X" is
// "to apply: X" (an undo's "undo: …" stays).
func toApply(mark string) string {
	if rest, ok := strings.CutPrefix(mark, "applied: "); ok {
		return "to apply: " + rest
	}
	return mark
}

func (o *applyOverlay) planLines(d *Data, w int) []string {
	s := d.Styles
	p := o.plan
	var out []string
	for _, na := range p.NotApplied {
		out = append(out, s.Faint.Render(clip("not applied: "+na, w)))
	}
	if !p.OK {
		return append(out, "", "nothing llmtop can apply: the change above needs a person ("+d.Keys.Back.Help().Key+" back)")
	}
	// the run's mark says "applied: …" once it is; before y it is not yet
	out = append(out, "", s.Title.Render(clip(toApply(p.Mark), w)))
	for _, l := range p.Diff {
		out = append(out, clip("  "+l, w))
	}
	out = append(out, "", clip("now:  "+p.Old, w), clip("then: "+p.New, w), "",
		fmt.Sprintf("llmtop stops the engine with SIGTERM, waits up to %s for it to drain, then sends SIGKILL; then starts the new command,", p.Grace),
		"waits for it to serve and runs the same benchmark on it (the current run gets it first if it has none).",
		"", s.Highlight.Render(fmt.Sprintf("%s restart the engine with this change · %s back", d.Keys.Yes.Help().Key, d.Keys.No.Help().Key)))
	return out
}

func (o *applyOverlay) progressLines(d *Data, w int) []string {
	s := d.Styles
	var out []string
	for _, l := range o.log {
		out = append(out, clip(l, w))
	}
	switch o.stage {
	case applyBenchBefore, applyBenchAfter:
		p := o.progress
		out = append(out, clip(fmt.Sprintf("benchmark %s: %3.0f%%  %d sent, %d completed, %d failed  TTFT p99 %s", o.load.String(), p.Fraction*100, p.Sent, p.Completed, p.Failed, msOpt(p.P99TTFT)), w))
	case applyDone:
		out = append(out, "", s.Level(LevelOK).Render(clip(nonEmptyStr(o.verdict, "both runs measured: see the runs view"), w)),
			s.Faint.Render(fmt.Sprintf("%s the runs view · %s undo the change", d.Keys.Runs.Help().Key, d.Keys.Undo.Help().Key)))
	case applyFailed:
		out = append(out, "", s.Level(LevelCrit).Render(clip(o.err, w)), s.Faint.Render(d.Keys.Undo.Help().Key+" restarts with the command line before the change"))
	}
	return out
}
