package core

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// A llama-server stopped with SIGTERM: the header read "stopped 3s: clean
// shutdown: 0.16.704.097 I srv    operator(): operator()…", the raw log
// line; the catalogue's title says it.
func TestCleanStopIsToldInTheCataloguesWords(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(-60), 0.01)
	for s := 0.0; s < 5; s++ {
		m.Apply(e.scrape(at(s), 10, 100))
	}
	raw := "0.16.704.097 I srv    operator(): operator(): cleaning up before exit..."
	l := logEvent(at(6), "llamacpp_exit", model.PhaseStopped, model.SevInfo, raw, nil)
	l.Event.Title = "llama-server exiting cleanly"
	m.Apply(l)
	ep := m.Endpoint(url)
	if ep.LifeDetail != "clean shutdown: llama-server exiting cleanly" || strings.Contains(ep.LifeDetail, "operator()") {
		t.Errorf("life %s: %q", ep.Life, ep.LifeDetail)
	}
}
