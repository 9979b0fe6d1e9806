package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/launch"
)

// Tune reads a configuration's findings judgeAt into its benchmark: every
// finding's hold must be able to elapse by then for a condition the load
// brings at its start. With holds capped at half the watch only (20 s for
// a 40 s watch) nothing held by default could open in a 10 s benchmark,
// and a change read "no open finding" for having been watched too short.
func TestTuneJudgesWhenHoldsCanHaveElapsed(t *testing.T) {
	for _, watch := range []time.Duration{40 * time.Second, time.Minute, 5 * time.Minute} {
		for _, d := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 2 * time.Minute} {
			c := tuneDiagnoseConfig(config.DefaultThresholds, watch, d)
			if c.MaxHold <= 0 || c.MaxHold >= judgeAt(d) {
				t.Errorf("watch %s, benchmark %s: holds capped at %s, findings read %s into the benchmark: a condition from its start cannot open by then", watch, d, c.MaxHold, judgeAt(d))
			}
			if judgeAt(d) >= d {
				t.Errorf("benchmark %s: read at %s, after its load ended", d, judgeAt(d))
			}
		}
	}
}

// An ITL finding is judged by ITL p99 (a stall is a gap between tokens; a
// request's mean TPOT averages it away), another decode one by TPOT.
func TestTuneGoalForFinding(t *testing.T) {
	tn := &tuner{}
	for id, want := range map[string]launch.Goal{"itl_prefill_stall": launch.GoalITL, "itl_decode_batch": launch.GoalITL, "tpot_high": launch.GoalTPOT, "ttft_queueing": launch.GoalTTFT, "lora_starved": launch.GoalServerTTFT} {
		if got := tn.goalForFinding(diagnosis.Finding{ID: id}); got != want {
			t.Errorf("%s: goal %s, want %s", id, got, want)
		}
	}
}

// Tune spent a benchmark measuring the noise on the last kept
// configuration even when no step followed to be judged against it (the
// --steps budget spent, or nothing left to try): lastStep says so, and
// the step records why its noise was not measured.
func TestTuneSkipsTheNoiseWhenNoStepFollows(t *testing.T) {
	old := tuneFlags.steps
	defer func() { tuneFlags.steps = old }()
	tuneFlags.steps = 3
	tn := &tuner{}
	ctx := context.Background()
	if got := tn.lastStep(ctx, 3, diagnosis.Report{}, nil); got != "no step follows (--steps 3 spent)" {
		t.Errorf("budget spent: %q", got)
	}
	// nothing open: nothing to try
	if got := tn.lastStep(ctx, 1, diagnosis.Report{}, nil); got != "no step follows (no open finding has a change left to try)" {
		t.Errorf("nothing open: %q", got)
	}
	// only an informational finding open, or one with no action
	rep := diagnosis.Report{Findings: []diagnosis.Finding{{ID: "x", Severity: model.SevInfo, Actions: []diagnosis.Action{{Change: "--max-num-seqs 64"}}}, {ID: "y", Severity: model.SevWarn}}}
	if got := tn.lastStep(ctx, 1, rep, nil); got == "" {
		t.Error("a finding tune cannot act on counted as a step to follow")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := tn.lastStep(cctx, 1, diagnosis.Report{}, nil); got != "no step follows (interrupted)" {
		t.Errorf("interrupted: %q", got)
	}
	tr := launch.Trail{Steps: []launch.Step{{N: 0, Kept: true}, {N: 1, Kept: true, NoiseSkipped: "no step follows (--steps 1 spent)"}}}
	if s := tr.Table(); !strings.Contains(s, "noise on this configuration: not measured, because no step follows (--steps 1 spent)") {
		t.Errorf("table:\n%s", s)
	}
}
