package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// A replica whose condition holds but has not opened yet says so in the
// TOP FINDING column: through a real Prometheus the queue-buildup sim's
// row read "2612 waiting … TTFT99 2m38s … —" for its first seconds, the
// dash a clean bill the rules had not given.
func TestFleetRowSaysFormingNotDash(t *testing.T) {
	m := New(Options{Now: t0, NoColor: true, Fleet: true, Sources: map[string]string{"prometheus": ""}})
	var last time.Time
	for s := 0; s <= 5; s += 5 {
		at := t0.Add(time.Duration(s) * time.Second)
		for _, msg := range fleetMsgs(2, at, s == 0) {
			if sc, ok := msg.(model.Scrape); ok && sc.Endpoint == "http://10.0.0.1:8000" {
				sc.Samples[0].Gauges[model.Waiting] = 3000
			}
			m.Update(msg)
		}
		last = at.Add(time.Second)
		m.Update(tickMsg(last))
	}
	rep := m.d.Core.Report()
	forming := false
	for _, p := range rep.Pending {
		forming = forming || p.Endpoint == "http://10.0.0.1:8000"
	}
	for _, f := range rep.Findings {
		if f.Endpoint == "http://10.0.0.1:8000" && f.Active() {
			t.Fatalf("the backlog opened already (the test wants it forming): %s", f.Title)
		}
	}
	if !forming {
		t.Fatalf("no condition forming on the backlogged replica: %+v", rep.Pending)
	}
	for _, row := range strings.Split(ansi.Strip(screen(t, m, 200, 30)), "\n") {
		if strings.Contains(row, "prod/vllm-001") {
			if !strings.Contains(row, "forming") {
				t.Errorf("the backlogged replica's row does not say its finding is forming:\n%s", row)
			}
			return
		}
	}
	t.Fatalf("no row for the backlogged replica:\n%s", screen(t, m, 200, 30))
}
