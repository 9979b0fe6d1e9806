package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// [panes] hides and orders panes and adds the log pane; the zoom keys and
// the tab bar follow the new order; a wrong pane name is an error with
// the file and line.
func TestPanesFromConfig(t *testing.T) {
	cfg, err := ParseConfig("config.toml", []byte("mouse = false\n[panes]\norder = [\"diagnosis\", \"log\"]\nhide = [\"throughput\", \"events\"]\nlog = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.NoMouse || !cfg.Panes.Log {
		t.Fatalf("parsed %+v", cfg)
	}
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Panes: cfg.Panes, NoMouse: cfg.NoMouse,
		Sources: map[string]string{"engine": "", "logs": ""}})
	for _, s := range scrapes(30, stressed) {
		m.Update(s)
	}
	m.Update(model.LogLine{Endpoint: testURL, Time: t0, Text: "INFO 11-24 10:00:00 engine started: the newest line of the log"})
	var ids []string
	for _, p := range m.panes {
		ids = append(ids, p.id)
	}
	if got := strings.Join(ids, ","); got != "diagnosis,log,latency,scheduler,gpu,endpoints,host" {
		t.Errorf("panes %s", got)
	}
	out := screen(t, m, 80, 24)
	if !strings.Contains(out, "[1 Diagnosis!] 2 Log 3 Latency 4 Scheduler 5 GPU 6 Endpoints") {
		t.Errorf("the tab bar does not follow the config:\n%s", out)
	}
	out = screen(t, m, 200, 60)
	if !strings.Contains(out, "2 Log") || !strings.Contains(out, "the newest line of the log") || strings.Contains(out, "Throughput") {
		t.Errorf("the grid does not show the log pane or still shows a hidden one:\n%s", out)
	}
	m.Update(press("2"))
	if m.zoom != logPaneID {
		t.Errorf("2 zooms %q, want the log pane", m.zoom)
	}
	if v := m.View(); v.MouseMode != 0 {
		t.Errorf("mouse = false still asks for the mouse")
	}
	for _, bad := range []string{"[panes]\nhide = [\"latncy\"]\n", "[panes]\nsize = 3\n", "[panes]\nlog = maybe\n"} {
		_, err := ParseConfig("config.toml", []byte(bad))
		if err == nil || !strings.HasPrefix(err.Error(), "config.toml:2: ") {
			t.Errorf("%q: error %v, want one at config.toml:2", bad, err)
		}
	}
	if _, err := ParseConfig("c", []byte("[panes]\nhide = [\"latncy\"]\n")); !strings.Contains(err.Error(), "one of: latency") {
		t.Errorf("an unknown pane does not list the known ones: %v", err)
	}
}
