package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// An endpoint read through Prometheus was never scraped by llmtop: its
// Endpoints line read "scrapes 98 · last took 0s" (no time was measured;
// unknown is not zero). It says where its numbers come from instead.
func TestEndpointsPaneThroughPrometheusClaimsNoScrapeTime(t *testing.T) {
	m := fleetModel(2)
	m.Update(press("esc")) // from the fleet to the first replica's screen
	m.Update(press("7"))   // the Endpoints pane, zoomed
	out := ansi.Strip(screen(t, m, 160, 30))
	if strings.Contains(out, "last took") {
		t.Errorf("a Prometheus-read endpoint claims a scrape time:\n%s", out)
	}
	if !strings.Contains(out, "read via Prometheus") {
		t.Errorf("the Endpoints pane does not say the numbers come through Prometheus:\n%s", out)
	}
}
