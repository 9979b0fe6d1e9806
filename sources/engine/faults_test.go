package engine

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// Faults are named for what happened: a redirect loop is not an
// unreachable host (with a DNS hint), a body that stalls after its headers
// is not "no answer".
func TestFaultsNamedRight(t *testing.T) {
	loop := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // path → path?again → path
		next := r.URL.Path + "?again=1"
		if r.URL.RawQuery != "" {
			next = r.URL.Path
		}
		http.Redirect(w, r, next, http.StatusFound)
	})
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("# TYPE vllm:num_requests_running gauge\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	cases := []struct {
		name   string
		h      http.Handler
		engine model.Engine
		kind   model.ScrapeErrKind
		msg    string // in Err
		hint   string // in Hint
	}{
		{name: "metrics route redirects in a loop", h: metricsHandler(loop.ServeHTTP), engine: model.VLLM,
			kind: model.ErrRedirect, msg: "redirects in a loop", hint: "--metrics-path"},
		{name: "every route redirects in a loop", h: loop, kind: model.ErrRedirect, msg: "redirects in a loop", hint: "final URL"},
		{name: "metrics body stalls after its headers", h: metricsHandler(stall), engine: model.VLLM,
			kind: model.ErrStalled, msg: "answered 200, then the body stalled after 39 bytes", hint: "headers"},
		{name: "every route stalls after its headers", h: http.HandlerFunc(stall),
			kind: model.ErrStalled, msg: "then the body stalled", hint: "headers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := ScrapeOnce(context.Background(), Config{URL: serve(t, tc.h), Engine: tc.engine, Timeout: 500 * time.Millisecond})
			if sc.ErrKind != tc.kind {
				t.Fatalf("kind %q (err %q, hint %q), want %q", sc.ErrKind, sc.Err, sc.Hint, tc.kind)
			}
			if !strings.Contains(sc.Err, tc.msg) || !strings.Contains(sc.Hint, tc.hint) {
				t.Errorf("err %q / hint %q, want %q / %q", sc.Err, sc.Hint, tc.msg, tc.hint)
			}
			for _, wrong := range []string{"DNS", "no answer"} {
				if strings.Contains(sc.Err+sc.Hint, wrong) {
					t.Errorf("err %q / hint %q says %q", sc.Err, sc.Hint, wrong)
				}
			}
		})
	}
}

// Redirects are followed on the endpoint's own host only, unless
// FollowRedirects; the API key never goes to the other host.
func TestRedirectsStayOnTheHost(t *testing.T) {
	var otherHits atomic.Int64
	var otherAuth atomic.Value
	fake := enginetest.New(model.VLLM)
	other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		otherAuth.Store(r.Header.Get("Authorization"))
		fake.ServeHTTP(w, r)
	}))
	// The same server under another name: 127.0.0.1 → localhost.
	elsewhere := strings.Replace(other, "127.0.0.1", "localhost", 1)
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+"/metrics", http.StatusFound)
	})
	mux.HandleFunc("/here/metrics", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/metrics2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/metrics2", func(w http.ResponseWriter, r *http.Request) {
		r.URL.Path = "/metrics"
		fake.ServeHTTP(w, r)
	})
	url := serve(t, mux)

	sc := ScrapeOnce(context.Background(), Config{URL: url, Engine: model.VLLM, APIKey: "sk-redirect-4242"})
	if sc.ErrKind != model.ErrRedirect || !strings.Contains(sc.Err, "another host") || !strings.Contains(sc.Hint, "--follow-redirects") {
		t.Errorf("to another host: kind %q err %q hint %q", sc.ErrKind, sc.Err, sc.Hint)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other host got %d requests without --follow-redirects", n)
	}

	sc = ScrapeOnce(context.Background(), Config{URL: url, Engine: model.VLLM, MetricsPath: "/here/metrics"})
	if !sc.OK() {
		t.Errorf("a redirect on the same host: %s (%s)", sc.Err, sc.ErrKind)
	}

	sc = ScrapeOnce(context.Background(), Config{URL: url, Engine: model.VLLM, APIKey: "sk-redirect-4242", FollowRedirects: true})
	if !sc.OK() || otherHits.Load() == 0 {
		t.Fatalf("with FollowRedirects: %s (%s), other host hit %d times", sc.Err, sc.ErrKind, otherHits.Load())
	}
	if a, _ := otherAuth.Load().(string); a != "" {
		t.Errorf("the API key went to the other host: %q", a)
	}
}

// Issue 14 item 6: a worker answering 503 on every route is described as
// answering 503, not as an unknown server to force with --engine.
func TestAnswered503IsNotUnrecognised(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
	})
	sc := ScrapeOnce(context.Background(), Config{URL: serve(t, h), Timeout: 500 * time.Millisecond})
	if sc.ErrKind != model.ErrServer || !strings.Contains(sc.Err, "answered HTTP 503") {
		t.Fatalf("kind %q err %q", sc.ErrKind, sc.Err)
	}
	if strings.Contains(sc.Err, "not as vLLM") || !strings.Contains(sc.Hint, "not ready") {
		t.Errorf("err %q hint %q", sc.Err, sc.Hint)
	}
}

// Issue 31 item 18: an offline worker behind a proxy whose own health route
// says 200 while every API route answers 503 ("no healthy upstream") was
// "malformed … answers HTTP, but not as vLLM": the 503 is named.
func TestAPIAnswering503BehindHealthyProxyIsNamed(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		http.Error(w, "no healthy upstream", http.StatusServiceUnavailable)
	})
	sc := ScrapeOnce(context.Background(), Config{URL: serve(t, h), Timeout: 500 * time.Millisecond})
	if sc.ErrKind != model.ErrServer || !strings.Contains(sc.Err, "answered HTTP 503") || !strings.Contains(sc.Err, "no healthy upstream") {
		t.Fatalf("kind %q err %q", sc.ErrKind, sc.Err)
	}
	if strings.Contains(sc.Err, "not as vLLM") {
		t.Errorf("err %q", sc.Err)
	}
}
