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

// StatusTurns is where Status answers differently with nothing but the
// clock moved: a serving endpoint turns STALE there, a new run stops
// reading RESTARTED there, and neither happens before it.
func TestStatusTurnsWhereStatusChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	const url = "http://127.0.0.1:8000"
	scrape := func(at time.Time, started time.Time) model.Scrape {
		return model.Scrape{Endpoint: url, Time: at, Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp},
			Samples: []model.Sample{{Endpoint: url, Time: at, Started: started, Gauges: map[model.Gauge]float64{model.Running: 1}}}}
	}
	m := New(Options{Endpoints: []string{url}, Window: time.Minute})
	m.Apply(scrape(t0, t0.Add(-time.Hour)))
	e := m.Endpoint(url)
	const stale = 3 * time.Second
	now := t0.Add(time.Second)
	turn := e.StatusTurns(now, stale, time.Minute)
	if want := t0.Add(stale + 1); !turn.Equal(want) {
		t.Fatalf("a serving endpoint turns at %v, want %v", turn, want)
	}
	if a, b := e.Status(turn.Add(-1), stale, time.Minute), e.Status(turn, stale, time.Minute); a != StatusUp || b != StatusStale {
		t.Errorf("around the turn: %s then %s, want UP then STALE", a, b)
	}
	if at := e.StatusTurns(turn, stale, time.Minute); !at.IsZero() {
		t.Errorf("a stale endpoint turns again at %v by the clock alone", at)
	}
	if at := e.StatusTurns(now, 0, time.Minute); !at.IsZero() {
		t.Errorf("never stale (a paused screen), yet it turns at %v", at)
	}
	// a restart: RESTARTED for the window after the new run's start
	for i := 1; i <= 5; i++ {
		m.Apply(scrape(t0.Add(time.Duration(i)*time.Second), t0))
	}
	e = m.Endpoint(url)
	if r := e.Current(); r == nil || r.N < 2 {
		t.Fatal("the new start time made no new run")
	}
	now = t0.Add(5 * time.Second)
	turn = e.StatusTurns(now, time.Hour, time.Minute)
	if want := e.Current().Started.Add(time.Minute); !turn.Equal(want) {
		t.Fatalf("a restarted endpoint turns at %v, want %v (its run's start and the window)", turn, want)
	}
	if a, b := e.Status(turn.Add(-1), time.Hour, time.Minute), e.Status(turn, time.Hour, time.Minute); a != StatusRestarted || b != StatusUp {
		t.Errorf("around the turn: %s then %s, want RESTARTED then UP", a, b)
	}
}
