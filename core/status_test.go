package core

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// The endpoint's status is the core's, one word for every face: the
// screen's badge, diagnose's answered, snapshot's exit status 3 and the
// exporter's llmtop_endpoint_up read these methods.
func TestEndpointStatus(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8000"
	ok := model.Scrape{Endpoint: url, Time: t0, Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp},
		Samples: []model.Sample{{Endpoint: url, Time: t0, Gauges: map[model.Gauge]float64{model.Running: 1}}}}
	refused := model.Scrape{Endpoint: url, Time: t0, Err: "connection refused", ErrKind: model.ErrRefused}
	denied := model.Scrape{Endpoint: url, Time: t0, Err: "401 Unauthorized", ErrKind: model.ErrAuth}
	for _, c := range []struct {
		name         string
		scrapes      []model.Scrape
		at           time.Duration // after t0
		stale        time.Duration
		want         Status
		answered, up bool
	}{
		{"never scraped", nil, 0, 3 * time.Second, StatusWaiting, false, false},
		{"serving", []model.Scrape{ok}, time.Second, 3 * time.Second, StatusUp, true, true},
		{"no scrape for a while", []model.Scrape{ok}, 10 * time.Second, 3 * time.Second, StatusStale, true, true},
		{"never stale when the face says so", []model.Scrape{ok}, 10 * time.Second, 0, StatusUp, true, true},
		{"refused", []model.Scrape{refused}, 0, 3 * time.Second, StatusDown, false, false},
		{"wants a key: it answered", []model.Scrape{denied}, 0, 3 * time.Second, StatusDegraded, true, false},
	} {
		m := New(Options{Endpoints: []string{url}, Window: time.Minute})
		for _, sc := range c.scrapes {
			m.Apply(sc)
		}
		e := m.Endpoint(url)
		if c.scrapes == nil {
			e = nil // a face may hold none: the methods still answer
		}
		if got := e.Status(t0.Add(c.at), c.stale, time.Minute); got != c.want {
			t.Errorf("%s: status %s, want %s", c.name, got, c.want)
		}
		if e.Answered() != c.answered || e.Up() != c.up {
			t.Errorf("%s: answered %v up %v, want %v %v", c.name, e.Answered(), e.Up(), c.answered, c.up)
		}
	}
}
