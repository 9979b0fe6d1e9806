package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// bench --api-key against an endpoint that answers 307 to another port of
// the same host: the key stays with the endpoint it was given for (it was
// sent on 42 requests to the other port: bench set the header itself, and
// Go's client forwards a hand-set header to the same host name).
func TestBenchKeyNeverFollowsARedirectToAnotherPort(t *testing.T) {
	var mu sync.Mutex
	leaked := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Header.Get("Authorization") != "" {
			leaked++
		}
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _ = Run(ctx, Config{URL: home.URL, APIKey: "sk-bench-secret", NumRequests: 5, Concurrency: 1, Model: "m",
		InputLen: 8, OutputLen: 4, Timeout: 5 * time.Second}, nil)
	_, _ = Run(ctx, Config{URL: home.URL, APIKey: "sk-bench-secret", NumRequests: 1, Concurrency: 1,
		InputLen: 8, OutputLen: 4, Timeout: 5 * time.Second}, nil) // discovering the model
	mu.Lock()
	defer mu.Unlock()
	if leaked > 0 {
		t.Errorf("the key went to another port %d times", leaked)
	}
}
