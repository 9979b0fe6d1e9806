package tui

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// Issue 30: a finished benchmark is filed with the core by the screen's
// root, not by the Diagnosis pane: with that pane hidden ([panes] hide),
// the run still reaches the rules (client_server_gap opens) and the
// recorder (Options.OnInput). Before, the pane's Receive filed it, and a
// hidden pane filed nothing.
func TestBenchIsFiledWithTheDiagnosisPaneHidden(t *testing.T) {
	var heard []model.Input
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true,
		Panes: PaneConfig{Hide: []string{"diagnosis"}}, OnInput: func(in model.Input) { heard = append(heard, in) }})
	for _, p := range m.panes {
		if p.id == "diagnosis" {
			t.Fatal("the diagnosis pane is shown")
		}
	}
	r := &report.Result{Server: &model.MetricsJSON{}}
	r.BaseURL, r.StartTime, r.EndTime = testURL, t0, t0.Add(30*time.Second)
	r.Completed = 40
	r.MedianTTFT = model.Some(900)        // client, ms
	r.Server.TTFTms.P50 = model.Some(100) // the engine's own, ms
	m.Update(benchDoneMsg{id: 1, o: BenchOutcome{Result: r}})
	m.Update(tickMsg(t0.Add(31 * time.Second)))
	found := false
	for _, f := range m.d.Core.Report().Findings {
		found = found || f.ID == "client_server_gap"
	}
	if !found {
		t.Errorf("client_server_gap did not open: %+v", m.d.Core.Report().Findings)
	}
	if len(heard) != 1 {
		t.Fatalf("the recorder heard %d inputs, want the benchmark", len(heard))
	}
	if b, ok := heard[0].(model.BenchDone); !ok || b.Bench.TTFTp50.V != 900 || b.Run.Completed != 40 {
		t.Errorf("recorded %+v", heard[0])
	}
}
