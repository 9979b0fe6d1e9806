package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// fakeLauncher plans without starting anything.
type fakeLauncher struct {
	active bool
	plan   LaunchPlan
	undo   bool
}

func (f *fakeLauncher) Active() bool { return f.active }
func (f *fakeLauncher) URL() string  { return testURL }
func (f *fakeLauncher) Info() string { return "launched by llmtop: pid 42" }
func (f *fakeLauncher) Plan(string, []string) LaunchPlan {
	return f.plan
}
func (f *fakeLauncher) PlanUndo() (LaunchPlan, bool) {
	return LaunchPlan{OK: true, Undo: true, Mark: "undo: --max-num-seqs 32 → 16", Diff: []string{"--max-num-seqs 32 → 16"}}, f.undo
}
func (f *fakeLauncher) Restart(LaunchPlan, func(string)) error { return nil }

func applyView(o *applyOverlay, d *Data) string { return ansi.Strip(o.View(d, 160, 30)) }

// The apply screen: only for an engine llmtop launched; an action that is
// not a change of the command line is shown, not applied; a crash after an
// applied change is reported against it, with undo offered.
func TestApplyOverlay(t *testing.T) {
	m := scenario(stressed, 1, true)
	d := m.Data()
	l := &fakeLauncher{}
	o := NewApplyOverlay(l, nil).(*applyOverlay)
	if v := applyView(o, d); !strings.Contains(v, "only for an engine it launched") || !strings.Contains(v, "llmtop run --") {
		t.Errorf("not launched: %s", v)
	}
	if handled, _ := o.HandleKey(press("enter"), d); handled {
		t.Error("keys do nothing on an engine llmtop did not launch")
	}
	l.active = true
	if len(o.candidates(d)) == 0 {
		t.Fatalf("the stressed scenario has findings with actions: %v", d.Core.Report().Findings)
	}
	l.plan = LaunchPlan{NotApplied: []string{"OLLAMA_NUM_PARALLEL=4: an environment variable"}}
	o.HandleKey(press("enter"), d)
	v := applyView(o, d)
	if o.stage != applyConfirm || !strings.Contains(v, "not applied: OLLAMA_NUM_PARALLEL=4") || !strings.Contains(v, "nothing llmtop can apply") {
		t.Errorf("an unexpressible change: %s", v)
	}
	if _, cmd := o.HandleKey(press("y"), d); cmd != nil || o.stage != applyPick {
		t.Error("y on a plan with nothing to apply must not restart")
	}
	// A plan that applies shows the diff and the stop it will make.
	l.plan = LaunchPlan{OK: true, Mark: "applied: queue_backlog → --max-num-seqs 16 → 32", Diff: []string{"--max-num-seqs 16 → 32"},
		Old: "vllm serve m --max-num-seqs 16", New: "vllm serve m --max-num-seqs 32", Grace: 30e9}
	o.HandleKey(press("enter"), d)
	v = applyView(o, d)
	for _, want := range []string{"to apply: queue_backlog → --max-num-seqs 16 → 32", "then: vllm serve m --max-num-seqs 32", "waits up to 30s for it to drain, then sends SIGKILL"} {
		if !strings.Contains(v, want) {
			t.Errorf("confirmation lacks %q:\n%s", want, v)
		}
	}
	// nothing is applied before y: the confirmation read "applied: …"
	// above "y restart the engine with this change"
	if strings.Contains(v, "applied:") {
		t.Errorf("the confirmation says the change is applied before y:\n%s", v)
	}
	// The engine dies after the change: reported against it, undo offered.
	o.stage = applyWaitServe
	o.Receive(LaunchExitedMsg{PID: 43, How: "exited with status 1", Log: "/tmp/e.log", Applied: l.plan.Mark}, d)
	v = applyView(o, d)
	if o.stage != applyFailed || !strings.Contains(v, "exited with status 1 after \"applied: queue_backlog") || !strings.Contains(v, "U restarts with the command line before the change") {
		t.Errorf("crash after the change:\n%s", v)
	}
	l.undo = true
	o.HandleKey(tea.KeyPressMsg{Code: 'U', Text: "U"}, d)
	if o.stage != applyConfirm || !o.plan.Undo {
		t.Errorf("U plans the undo: stage %v plan %+v", o.stage, o.plan)
	}
}

// Against a real llama-server not launched by llmtop, A showed how to
// launch one: "llmtop run -- llama-server -m model.gguf -np 2", without
// --metrics, which starts a llama-server llmtop can only call DEGRADED
// (its /metrics answers 501). The example turns its metrics on.
func TestApplyNotLaunchedExampleHasMetrics(t *testing.T) {
	m := scenario(stressed, 1, true)
	o := NewApplyOverlay(&fakeLauncher{}, nil).(*applyOverlay)
	if v := applyView(o, m.Data()); !strings.Contains(v, "llmtop run -- llama-server -m model.gguf -np 2 --metrics") {
		t.Errorf("want the llama-server example with --metrics:\n%s", v)
	}
}
