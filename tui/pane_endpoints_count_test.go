package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// The demo's Endpoints pane read "1 stats samples parsed from the engine log".
func TestEndpointsPaneCountsOneLogSampleInTheSingular(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		m.Update(s)
	}
	sm := model.NewSample(testURL, "", t0.Add(2500*time.Millisecond), model.FromLog)
	sm.Gauges[model.Running] = 3
	m.Update(sm)
	m.Update(press("7"))
	out := screen(t, m, 100, 30)
	if !strings.Contains(out, "1 stats sample parsed from the engine log") {
		t.Errorf("no singular count:\n%s", out)
	}
}
