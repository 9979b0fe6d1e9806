package tui

import (
	"strings"
	"testing"
)

// The all-clear panel asks for the lines it draws: at 120×40 with 8 GPUs
// the symptom table's KV and waiting rows were cut (Height said 9, it
// draws ~13).
func TestAllClearPanelAsksForWhatItDraws(t *testing.T) {
	m := scenario(healthy, 8, false)
	out := screen(t, m, 120, 40)
	rep := m.d.Core.Report()
	if len(rep.Findings) != 0 {
		t.Skipf("fixture opened findings: %v", rep.Findings)
	}
	for _, row := range []string{"KV cache", "waiting      ", "GPU util"} {
		if !strings.Contains(out, row) {
			t.Errorf("symptom row %q cut:\n%s", row, out)
		}
	}
	want := strings.Count(allClear(m.d, rep, 56, 100), "\n") + 1
	if got := (findingsPane{}).Height(m.d, 56); got != want {
		t.Errorf("Height %d, draws %d lines", got, want)
	}
}
