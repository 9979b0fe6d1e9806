package bench

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// barrierEngine answers no request until n are in flight at once; one that
// waits more than 10 s gets a 503 (the load never reached n). It proves
// "all at once" without timing anything.
type barrierEngine struct {
	n       int
	mu      sync.Mutex
	arrived int
	peak    int
	open    chan struct{}
}

func (b *barrierEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.arrived++
	b.peak = max(b.peak, b.arrived)
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(10 * time.Second):
		http.Error(w, "the barrier never opened", http.StatusServiceUnavailable)
		return
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Write(sseTok)
	w.Write(sseTok)
	w.Write(sseFinish)
	w.Write(sseUsage(11, 2))
	w.Write(sseDone)
}

// --rate inf without --concurrency sends every request at once, as vllm
// bench serve does without --max-concurrency: 40 requests (more than the
// closed loop's default 16 streams) are all in flight together.
func TestRateInfSendsAllAtOnce(t *testing.T) {
	const n = 40
	b := &barrierEngine{n: n, open: make(chan struct{})}
	s := httptest.NewServer(b)
	defer s.Close()
	cfg := Config{URL: s.URL, Model: "m", Rate: report.Inf, NumRequests: n, NoExtras: true,
		InputLen: 8, OutputLen: 2, Timeout: 20 * time.Second}
	res := run(t, cfg)
	if res.Completed != n || b.peak != n {
		t.Fatalf("completed %d (errors %v), server peak %d: want all %d at once", res.Completed, res.ErrorsByKind, b.peak, n)
	}
	if res.MaxConcurrent != n {
		t.Errorf("max_concurrent_requests %d, want %d", res.MaxConcurrent, n)
	}
	if !res.RequestRate.IsInf() || res.MaxConcurrency != 0 || res.NumPrompts != n {
		t.Errorf("info: rate %v max_concurrency %d num_prompts %d", res.RequestRate, res.MaxConcurrency, res.NumPrompts)
	}
}

// --rate inf with --concurrency N is vllm's inf rate behind a semaphore of
// N: never more than N in flight, every request sent.
func TestRateInfWithConcurrencyCaps(t *testing.T) {
	f := &fakeEngine{tokens: 4, gap: 5 * time.Millisecond}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.Rate, cfg.Concurrency, cfg.NumRequests, cfg.Warmup = report.Inf, 3, 12, 0
	res := run(t, cfg)
	if res.Completed != 12 || f.peak > 3 {
		t.Fatalf("completed %d, server peak %d (cap 3)", res.Completed, f.peak)
	}
	if res.MaxConcurrency != 3 {
		t.Errorf("max_concurrency %d", res.MaxConcurrency)
	}
}
