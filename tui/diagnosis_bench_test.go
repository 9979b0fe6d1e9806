package tui

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// The benchmark's judgement of answers reaches the bad-output rule; loops
// from a run that forced ignore_eos do not (they come after the model's end).
func TestBenchInputFeedsBadAnswers(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	result := func(ignoreEOS bool) *report.Result {
		r := &report.Result{Server: &model.MetricsJSON{}}
		r.BaseURL, r.StartTime, r.EndTime, r.IgnoreEOS = "http://127.0.0.1:8000", start, start.Add(30*time.Second), ignoreEOS
		r.Completed, r.ErrorsByKind = 40, map[string]int{string(report.ErrEmpty): 1}
		r.BlankResponses, r.EchoedResponses, r.RepetitiveResponses = 1, 1, 6
		return r
	}
	cases := []struct {
		ignoreEOS      bool
		wantRepetitive int
		wantFinding    bool
	}{
		{ignoreEOS: false, wantRepetitive: 6, wantFinding: true}, // 9 of 41
		{ignoreEOS: true, wantRepetitive: 0, wantFinding: false}, // 3 of 41
	}
	for _, c := range cases {
		b := benchInput(nil, BenchOutcome{Result: result(c.ignoreEOS)})
		if b == nil || b.Empty != 1 || b.Blank != 1 || b.Echoed != 1 || b.Repetitive != c.wantRepetitive {
			t.Fatalf("ignore_eos %v: bench input %+v", c.ignoreEOS, b)
		}
		rep := diagnosis.Evaluate(diagnosis.Input{Time: b.End, Bench: b}, diagnosis.DefaultConfig())
		found := false
		for _, f := range rep.Findings {
			found = found || f.ID == "bench_bad_output"
		}
		if found != c.wantFinding {
			t.Errorf("ignore_eos %v: bench_bad_output %v, want %v (%+v)", c.ignoreEOS, found, c.wantFinding, rep.Findings)
		}
	}
}
