package tui

import (
	"testing"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The signals table judges the queue by the backlog rule's own threshold
// and never calls a busy GPU "ok".
func TestSignalsMatchTheRules(t *testing.T) {
	cfg := diagnosis.DefaultConfig()
	if cfg.WaitingHigh != 50 {
		t.Fatalf("the backlog rule's default changed to %g: update this test", cfg.WaitingHigh)
	}
	for _, c := range []struct {
		waiting model.Opt
		target  string
		lvl     Level
	}{
		{model.Some(0), "≤50", LevelOK},
		{model.Some(30), "≤50", LevelOK},
		{model.Some(51), "≤50", LevelWarn},
		{model.None, "≤50", LevelNone},
	} {
		r := waitingSymptom(c.waiting, cfg)
		if r.target != c.target || r.lvl != c.lvl {
			t.Errorf("waiting %v: target %q level %v, want %q %v", c.waiting, r.target, r.lvl, c.target, c.lvl)
		}
	}
	th := DefaultThresholds
	for _, c := range []struct {
		util, waiting   model.Opt
		target, verdict string
		lvl             Level
	}{
		{model.Some(100), model.Some(0), "any", "busy", LevelNone},
		{model.Some(100), model.Some(80), "≥30%", "busy", LevelNone},
		{model.Some(5), model.Some(3), "≥30%", "idle+queue", LevelWarn},
		{model.Some(5), model.Some(0), "any", "idle", LevelNone},
		{model.Some(5), model.None, "≥30%", "idle", LevelNone},
		{model.None, model.Some(3), "≥30%", "", LevelNone},
	} {
		r := utilSymptom(c.util, c.waiting, th)
		if r.target != c.target || r.verdict != c.verdict || r.lvl != c.lvl {
			t.Errorf("util %v waiting %v: %q %q %v, want %q %q %v", c.util, c.waiting, r.target, r.verdict, r.lvl, c.target, c.verdict, c.lvl)
		}
	}
}
