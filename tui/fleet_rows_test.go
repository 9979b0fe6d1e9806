package tui

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// An endpoint that answers with unreadable metrics (llama-server without
// --metrics: 501) is "degraded" in the fleet table, as in the header's
// badge; it was called "stale", which it never was.
func TestFleetStateOfUnreadableMetricsIsDegraded(t *testing.T) {
	e := &EndpointInfo{URL: "http://127.0.0.1:48659"}
	e.Life, e.Err = model.LifeServing, "http://127.0.0.1:48659/metrics: 501 Not Implemented"
	if s, l := fleetState(e); s != "degraded" || l != LevelWarn {
		t.Fatalf("state %q level %v, want degraded (warn)", s, l)
	}
}
