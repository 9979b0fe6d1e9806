package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// Seen with `llmtop --log llama.log URL1 URL2` (a real llama-server and a
// real Ollama): with two endpoints the log belongs to neither, its stats
// lines' samples carry no endpoint, and the fleet view (the first screen
// with two endpoints) drew a row for that key, read its endpoint's info
// (nil) and panicked: "program was killed: program experienced a panic".
// The log's unattributed samples are no endpoint: no row, no choice, no
// panic.
func TestFleetWithAnUnattributedLogDoesNotPanic(t *testing.T) {
	const other = "http://127.0.0.1:11434"
	m := New(Options{Endpoints: []string{testURL, other}, Now: t0, NoColor: true,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, s := range scrapes(10, func(int) load { return load{running: 2, reqs: 3, promptPerReq: 100, genPerReq: 50} }) {
		m.Update(s)
	}
	for i := range 3 { // llama-server's timing lines, from a log no endpoint owns
		at := t0.Add(time.Duration(8+i) * time.Second)
		sm := model.NewSample("", "", at, model.FromLog)
		sm.Observations = []model.Observation{{Time: at, Values: map[model.Latency]float64{model.Prefill: 0.03, model.Decode: 0.2}}}
		sm.Counters[model.Requests] = float64(i + 1)
		m.Update(sm)
	}
	m.Update(tickMsg(t0.Add(11 * time.Second)))
	v := ansi.Strip(m.Render())
	if !strings.Contains(v, "2 endpoints") {
		t.Errorf("want the fleet view of the 2 endpoints:\n%s", v)
	}
	for _, k := range m.d.Choices() {
		if k.Endpoint == "" {
			t.Errorf("choices %v: the log's samples are no endpoint to choose", m.d.Choices())
		}
	}
}
