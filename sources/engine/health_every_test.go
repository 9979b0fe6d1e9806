package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// A steady second is one request (issue 33): /health is asked beside
// /metrics once every healthEvery scrapes while the engine is up, at every
// scrape while it is unhealthy, and at once when /metrics fails.
func TestHealthIsAskedEveryTenScrapesWhileUp(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	var health, metrics atomic.Int32
	var failMetrics atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			health.Add(1)
		case "/metrics":
			metrics.Add(1)
			if failMetrics.Load() {
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := newSession(Config{URL: srv.URL})
	ctx := context.Background()
	scrape := func() model.Scrape {
		sc := s.scrape(ctx)
		if sc.Err != "" && !failMetrics.Load() {
			t.Fatalf("scrape: %s", sc.Err)
		}
		return sc
	}
	for range 21 {
		scrape()
	}
	// the first scrape identifies (asking /health), then scrapes 11 and 21
	if h, m := health.Load(), metrics.Load(); h != 3 || m != 21 {
		t.Fatalf("%d /health and %d /metrics requests in 21 scrapes, want 3 and 21", h, m)
	}

	// unhealthy: seen within healthEvery scrapes, then asked every scrape
	fake.Health.Store(http.StatusServiceUnavailable)
	health.Store(0)
	seen := 0
	for i := 1; i <= healthEvery; i++ {
		if sc := scrape(); sc.Identity.Health == model.HealthUnhealthy && seen == 0 {
			seen = i
		}
	}
	if seen == 0 {
		t.Fatalf("an engine whose /health answers 503 was not seen unhealthy in %d scrapes", healthEvery)
	}
	health.Store(0)
	fake.Health.Store(http.StatusOK)
	if sc := scrape(); sc.Identity.Health != model.HealthUp || health.Load() != 1 {
		t.Fatalf("recovery not seen at the next scrape: %v, %d /health", sc.Identity.Health, health.Load())
	}

	// /metrics fails: /health is asked at once, and its answer is the scrape's
	scrape()
	health.Store(0)
	failMetrics.Store(true)
	fake.Health.Store(http.StatusServiceUnavailable)
	sc := scrape()
	if health.Load() != 1 || sc.Err == "" || sc.Identity.Health != model.HealthUnhealthy {
		t.Fatalf("metrics failed: %d /health, err %q, health %v", health.Load(), sc.Err, sc.Identity.Health)
	}
}
