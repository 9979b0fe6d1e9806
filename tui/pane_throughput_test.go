package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The finish mix names the reasons that occurred, largest first, with the
// count; aborts and failures are marked as finish_errors judges them (5 %
// together, of at least MinFinished requests: at exactly 5 % too, where the
// screen once said nothing while the rule opened); none exposed says so.
func TestFinishMix(t *testing.T) {
	s := NewStyles(true, true)
	st := model.State{
		FinishCount: map[string]float64{"stop": 160, "length": 30, "abort": 10, "error": 0, "repetition": 0},
		FinishShare: map[string]float64{"stop": 0.8, "length": 0.15, "abort": 0.05, "error": 0, "repetition": 0},
	}
	got := finishMix(s, st, diagnosis.DefaultConfig())
	if got != "finish stop 80% · length 15% · \x1b[1mabort 5%\x1b[m (n=200)" {
		t.Errorf("%q", got)
	}
	st.FinishCount["abort"], st.FinishCount["stop"], st.FinishShare["abort"], st.FinishShare["stop"] = 8, 162, 0.04, 0.81
	if got := finishMix(s, st, diagnosis.DefaultConfig()); got != "finish stop 81% · length 15% · abort 4% (n=200)" {
		t.Errorf("4 %% aborted: %q", got)
	}
	if strings.Contains(got, "error") || strings.Contains(got, "repetition") {
		t.Errorf("reasons that did not occur are listed: %q", got)
	}
	if got := finishMix(s, model.State{}, diagnosis.DefaultConfig()); !strings.Contains(got, "no finish reasons exposed") {
		t.Errorf("not exposed: %q", got)
	}
	idle := model.State{FinishCount: map[string]float64{"stop": 0}, FinishShare: map[string]float64{"stop": 0}}
	if got := finishMix(s, idle, diagnosis.DefaultConfig()); !strings.Contains(got, "no requests finished in the window") {
		t.Errorf("idle: %q", got)
	}
}
