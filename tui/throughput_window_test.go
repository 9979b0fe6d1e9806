package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// An engine whose counters give no rate (Ollama's /api/ps has none) shows
// no "rates over 0s": a window of nothing.
func TestThroughputWithoutRatesSaysSo(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		s.Identity.Engine = model.Ollama
		for i := range s.Samples {
			s.Samples[i].Counters = nil
			s.Samples[i].Latencies = nil
		}
		m.Update(s)
	}
	m.Update(press("2"))
	out := screen(t, m, 120, 40)
	if strings.Contains(out, "rates over 0s") || !strings.Contains(out, "no rates yet") {
		t.Errorf("throughput pane without rates:\n%s", out)
	}
}
