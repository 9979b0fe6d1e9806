package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// `make run`'s cycle watches a routed fleet for a stretch (issue 26): the
// fleet view opens as it begins (once: esc closes it for good), waits for
// an open overlay to close rather than covering it, and closes as the
// stretch ends, the screen back on the demo's own engine even when one of
// the fleet's endpoints was opened.
func TestDemoRoutedStretchOpensAndClosesTheFleetView(t *testing.T) {
	m := newTestModel()
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for _, s := range scrapes(10, func(int) load { return load{} }) {
		m.Update(s)
	}
	at := t0.Add(11 * time.Second)
	m.Update(ScenarioMsg{Name: "healthy", Elapsed: 10 * time.Second, Length: 50 * time.Second})
	if m.overlay >= 0 {
		t.Fatal("the fleet view opened before the routed stretch")
	}
	// the fleet's endpoints as the demo's pollers bring them
	for _, msg := range fleetMsgs(3, at, false) {
		m.Update(msg)
	}
	m.Update(ScenarioMsg{Name: "routed-starved", Length: 90 * time.Second, Fleet: true})
	if m.overlay != m.fleetIndex() {
		t.Fatal("the routed stretch did not open the fleet view")
	}
	if v := ansi.Strip(m.Render()); !strings.Contains(v, "4 endpoints") {
		t.Errorf("the fleet view should list the demo's engine and the fleet's 3:\n%s", v)
	}
	// open one of the fleet's endpoints from the view
	m.Update(press("j"))
	m.Update(press("j"))
	if _, cmd := m.Update(press("enter")); cmd != nil {
		m.Update(cmd())
	}
	if m.overlay >= 0 || m.d.SelectedURL() == testURL {
		t.Fatalf("enter should open a fleet endpoint (overlay %d, on %s)", m.overlay, m.d.SelectedURL())
	}
	m.Update(ScenarioMsg{Name: "routed-starved", Elapsed: time.Second, Length: 90 * time.Second, Fleet: true})
	if m.overlay >= 0 {
		t.Error("the fleet view reopened over the endpoint the person opened")
	}
	// the stretch ends: the fleet leaves, the screen is the engine's again
	for _, msg := range fleetMsgs(3, at, false) {
		if sc, ok := msg.(model.Scrape); ok {
			m.Update(model.Origin{Endpoint: sc.Endpoint, Source: "demo", Gone: true, GoneWhy: "no longer watched"})
		}
	}
	m.Update(ScenarioMsg{Name: "queue-buildup", Length: 60 * time.Second})
	if m.overlay >= 0 {
		t.Error("the fleet view is open after the routed stretch")
	}
	if u := m.d.SelectedURL(); u != testURL {
		t.Errorf("after the stretch the screen shows %s, want the demo's engine %s", u, testURL)
	}

	// The next cycle's stretch, with a benchmark's result on screen: the
	// view waits for it to close, then opens; esc closes it for good.
	other := -1
	for i, o := range m.overlays {
		if o.id != "fleet" {
			other = i
			break
		}
	}
	m.overlay = other
	m.Update(ScenarioMsg{Name: "routed-starved", Length: 90 * time.Second, Fleet: true})
	if m.overlay != other {
		t.Fatal("the fleet view covered the open overlay")
	}
	m.overlay = -1
	m.Update(ScenarioMsg{Name: "routed-starved", Elapsed: time.Second, Length: 90 * time.Second, Fleet: true})
	if m.overlay != m.fleetIndex() {
		t.Fatal("the fleet view did not open once the overlay closed")
	}
	m.overlay = -1 // esc
	m.Update(ScenarioMsg{Name: "routed-starved", Elapsed: 2 * time.Second, Length: 90 * time.Second, Fleet: true})
	if m.overlay >= 0 {
		t.Error("the fleet view reopened after the person closed it")
	}
}
