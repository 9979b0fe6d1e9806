package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A server whose streams never end: a duration-bound run stops sending at
// its duration, stops the requests still in flight after the grace (counted
// as cancelled, not failed), and ends long before the one-minute request
// timeout that used to hold it.
func TestDurationEndsWhateverTheServerDoes(t *testing.T) {
	f := &fakeEngine{mode: "endless"}
	s := newFake(t, f)
	cfg := Config{URL: s.URL, Model: "m", Concurrency: 3, Duration: time.Second, Grace: 500 * time.Millisecond,
		InputLen: 8, OutputLen: 8, Timeout: time.Minute}
	start := time.Now()
	res := run(t, cfg)
	took := time.Since(start)
	if took >= cfg.Timeout/2 {
		t.Fatalf("the run took %s: it waited for the request timeout, not its duration + grace", took)
	}
	if res.Cancelled != 3 || res.Failed != 0 || res.Completed != 0 {
		t.Errorf("completed %d failed %d cancelled %d, want the 3 streams in flight counted as cancelled (%v)",
			res.Completed, res.Failed, res.Cancelled, res.ErrorsByKind)
	}
	if res.Duration < cfg.Duration.Seconds() {
		t.Errorf("duration %.2fs, shorter than the run's %s", res.Duration, cfg.Duration)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "3 requests still in flight") {
		t.Errorf("notes %q do not say that the requests in flight were stopped", res.Notes)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.requests != 3 {
		t.Errorf("the server got %d requests, want 3 (no probe with Warmup 0)", f.requests)
	}
}

// The warmup against that server: it may take the run's duration at most
// (shorter than the timeout here), then the run ends measuring nothing and
// says why.
func TestWarmupThatNeverEndsEndsTheRun(t *testing.T) {
	f := &fakeEngine{mode: "endless"}
	s := newFake(t, f)
	cfg := Config{URL: s.URL, Model: "m", Concurrency: 3, Duration: time.Second, Warmup: 2,
		InputLen: 8, OutputLen: 8, Timeout: time.Minute}
	start := time.Now()
	res := run(t, cfg)
	if took := time.Since(start); took >= cfg.Timeout/2 {
		t.Fatalf("the run took %s: the warmup waited for the request timeout", took)
	}
	if res.Completed != 0 || res.Failed != 0 || res.NumPrompts != 0 {
		t.Errorf("completed %d failed %d prompts %d: the warmup's requests are not the run's", res.Completed, res.Failed, res.NumPrompts)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "no warmup request finished within 1s") {
		t.Errorf("notes %q do not say that the warmup did not finish", res.Notes)
	}
}

// With Warmup 0 nothing is sent before the measured requests; a server
// that refuses the extras is then explained in a note.
func TestWarmupZeroSendsNoProbe(t *testing.T) {
	f := &fakeEngine{}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.NumRequests = 5
	res := run(t, cfg)
	f.mu.Lock()
	got := f.requests
	f.mu.Unlock()
	if res.Completed != 5 || got != 5 {
		t.Errorf("completed %d, the server got %d requests: want 5 and 5", res.Completed, got)
	}

	f = &fakeEngine{refuseExtras: true}
	s = newFake(t, f)
	cfg = quick(s.URL)
	cfg.NumRequests = 4
	res = run(t, cfg)
	if res.Completed != 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "--no-extras") {
		t.Errorf("completed %d notes %q: want every request refused and a note naming --no-extras", res.Completed, res.Notes)
	}
}

// Cancelled during the warmup: the run says so instead of a measured run of
// length zero.
func TestCancelDuringWarmupSaysSo(t *testing.T) {
	f := &fakeEngine{mode: "endless"}
	s := newFake(t, f)
	cfg := Config{URL: s.URL, Model: "m", Concurrency: 2, Duration: time.Minute, Warmup: 2,
		InputLen: 8, OutputLen: 8, Timeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			f.mu.Lock()
			n := f.requests
			f.mu.Unlock()
			if n > 0 {
				break
			}
		}
		cancel()
	}()
	res, err := Run(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "cancelled during the warmup") {
		t.Errorf("notes %q", res.Notes)
	}
}

// A URL with a query (a gateway's token) and /v1: the API paths go before
// the query, which every request keeps, and the printed base URL has no
// query.
func TestURLWithQuery(t *testing.T) {
	f := &fakeEngine{}
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI())
		mu.Unlock()
		f.ServeHTTP(w, r)
	}))
	defer s.Close()
	f.tokens, f.flushes = 8, map[string][]time.Time{}
	cfg := quick(s.URL + "/v1?token=X")
	cfg.NumRequests, cfg.Concurrency = 1, 1
	res := run(t, cfg)
	if res.Completed != 1 {
		t.Fatalf("completed %d: %v %q", res.Completed, res.ErrorsByKind, res.ErrorSamples)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/v1/models?token=X", "/v1/chat/completions?token=X"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("requests %q, want %q", seen, want)
	}
	if strings.Contains(res.BaseURL, "token") || res.BaseURL != s.URL {
		t.Errorf("base URL %q, want %q", res.BaseURL, s.URL)
	}
}

// A server that redirects the requests to another host: not followed
// unless FollowRedirects, and then without the API key.
func TestRedirectToAnotherHost(t *testing.T) {
	f := &fakeEngine{}
	var hits atomic.Int64
	var auth atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		f.ServeHTTP(w, r)
	}))
	defer other.Close()
	f.tokens, f.flushes = 8, map[string][]time.Time{}
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer s.Close()
	cfg := quick(s.URL)
	cfg.Model, cfg.NumRequests, cfg.Concurrency, cfg.APIKey = "m", 2, 1, "sk-redirect-4242"
	res := run(t, cfg)
	if res.Completed != 0 || res.ErrorsByKind["http_307"] != 2 || hits.Load() != 0 {
		t.Errorf("completed %d, errors %v, the other host hit %d times: want 2 × http_307 and no hit", res.Completed, res.ErrorsByKind, hits.Load())
	}
	if !strings.Contains(strings.Join(res.ErrorSamples, " "), "--follow-redirects") {
		t.Errorf("error samples %q do not say how to follow", res.ErrorSamples)
	}
	cfg.FollowRedirects = true
	res = run(t, cfg)
	if res.Completed != 2 || hits.Load() != 2 {
		t.Errorf("with FollowRedirects: completed %d (%v), the other host hit %d times", res.Completed, res.ErrorsByKind, hits.Load())
	}
	if a, _ := auth.Load().(string); a != "" {
		t.Errorf("the API key went to the other host: %q", a)
	}
}
