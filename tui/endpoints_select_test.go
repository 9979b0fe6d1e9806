package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// h/→ reach every endpoint, the ones that never answered or publish no
// metrics included; the Endpoints pane (in the grid when more than one is
// watched) chooses with j/k.
func TestEveryEndpointIsReachable(t *testing.T) {
	down, degraded := "http://127.0.0.1:30000", "http://127.0.0.1:30001"
	m := New(Options{Endpoints: []string{testURL, down, degraded}, Now: t0, NoColor: true,
		Sources: map[string]string{"engine": ""}})
	ss := scrapes(3, healthy)
	for _, s := range ss {
		m.Update(s)
	}
	if m.overlay >= 0 && m.overlays[m.overlay].id == "fleet" {
		m.Update(press("esc")) // three endpoints open on the fleet table
	}
	last := ss[len(ss)-1].Time
	m.Update(model.Scrape{Endpoint: down, Time: last, Err: "connection refused", ErrKind: model.ErrRefused})
	m.Update(model.Scrape{Endpoint: degraded, Time: last, Err: "metrics endpoint returned 404", ErrKind: model.ErrNotFound,
		Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp}})
	seen := map[string]bool{}
	for range 3 {
		seen[m.d.SelectedURL()] = true
		out := screen(t, m, 200, 60)
		if !strings.Contains(out, m.d.SelectedURL()+"  [") {
			t.Errorf("the header does not name the chosen %s:\n%s", m.d.SelectedURL(), out)
		}
		m.Update(press("right"))
	}
	if !seen[down] || !seen[degraded] || !seen[testURL] {
		t.Fatalf("→ reached %v, want all three", seen)
	}
	if m.d.SelectedURL() != testURL {
		t.Errorf("→ does not wrap around: %s", m.d.SelectedURL())
	}
	out := screen(t, m, 200, 60)
	if !strings.Contains(out, "7 Endpoints") {
		t.Fatalf("with three endpoints the Endpoints pane is not in the grid:\n%s", out)
	}
	for m.panes[m.focus].id != "endpoints" {
		m.Update(press("tab"))
	}
	m.Update(press("j"))
	if m.d.SelectedURL() != down {
		t.Errorf("j in the Endpoints pane chose %s, want %s", m.d.SelectedURL(), down)
	}
	if out := screen(t, m, 200, 60); !strings.Contains(out, "▶ "+down+" DOWN") {
		t.Errorf("the chosen endpoint is not marked DOWN in the pane:\n%s", out)
	}
}
