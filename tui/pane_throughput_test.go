package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The finish mix names the reasons that occurred, largest first, with the
// count; abort or error above 5 % is marked; none exposed says so.
func TestFinishMix(t *testing.T) {
	s := NewStyles(true, true)
	st := model.State{
		FinishCount: map[string]float64{"stop": 160, "length": 30, "abort": 10, "error": 0, "repetition": 0},
		FinishShare: map[string]float64{"stop": 0.8, "length": 0.15, "abort": 0.05, "error": 0, "repetition": 0},
	}
	got := finishMix(s, st)
	if got != "finish stop 80% · length 15% · abort 5% (n=200)" {
		t.Errorf("%q", got)
	}
	if strings.Contains(got, "error") || strings.Contains(got, "repetition") {
		t.Errorf("reasons that did not occur are listed: %q", got)
	}
	if got := finishMix(s, model.State{}); !strings.Contains(got, "no finish reasons exposed") {
		t.Errorf("not exposed: %q", got)
	}
	idle := model.State{FinishCount: map[string]float64{"stop": 0}, FinishShare: map[string]float64{"stop": 0}}
	if got := finishMix(s, idle); !strings.Contains(got, "no requests finished in the window") {
		t.Errorf("idle: %q", got)
	}
}
