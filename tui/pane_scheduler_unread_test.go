package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Seen with a real llama-server SIGSTOPped under load, its log attached:
// the panes showed the log's numbers, and the scheduler pane said "KV --
// not exposed by llama.cpp" though llama.cpp's KV (from /slots) had been on
// the screen a second before: the log has no KV, the endpoint did not
// answer. The KV line says why it is missing, as the latency pane does.
func TestKVLineWhileTheLogStandsInSaysWhy(t *testing.T) {
	m, lastOK := restartedThenBroken(t, model.ErrTimeout, testURL+": no answer within 2s")
	sm := model.NewSample(testURL, "", lastOK.Add(19*time.Second), model.FromLog)
	sm.Observations = []model.Observation{{Time: sm.Time, Values: map[model.Latency]float64{model.Prefill: 0.03, model.Decode: 0.2}}}
	sm.Counters[model.Requests] = 3
	m.Update(sm)
	out := screen(t, m, 200, 60)
	if !strings.Contains(out, "from log · stats line") {
		t.Fatalf("want the log's numbers on the panes:\n%s", out)
	}
	if strings.Contains(out, "KV -- not exposed") {
		t.Errorf("KV said not exposed while the endpoint does not answer:\n%s", out)
	}
	if !strings.Contains(out, "KV -- endpoint not answering (timeout)") {
		t.Errorf("want the KV line to name why it is missing:\n%s", out)
	}
}
