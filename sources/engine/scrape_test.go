package engine

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestScrapeOnceVLLM(t *testing.T) {
	url := serve(t, enginetest.New(model.VLLM))
	sc := ScrapeOnce(context.Background(), Config{URL: url})
	if !sc.OK() {
		t.Fatalf("scrape failed: %s (%s) %s", sc.Err, sc.ErrKind, sc.Hint)
	}
	id := sc.Identity
	if id.Engine != model.VLLM || id.Version != "0.11.2" || id.Health != model.HealthUp {
		t.Errorf("identity = %+v", id)
	}
	if len(id.Models) != 1 || id.Models[0].ID != enginetest.VLLMModel || id.Models[0].MaxContext != 131072 {
		t.Errorf("models = %+v", id.Models)
	}
	s := only(t, sc.Samples)
	if s.Endpoint != url || s.Gauges[model.Running] != 37 || s.Source != model.FromScrape {
		t.Errorf("sample = %+v", s)
	}
	if sc.Endpoint != url || sc.Took <= 0 {
		t.Errorf("scrape endpoint/took = %q/%v", sc.Endpoint, sc.Took)
	}
	// The fixture's process_start_time_seconds 1.79531848799e+09 feeds uptime.
	if got := s.Started.UnixMilli(); got != 1795318487990 {
		t.Errorf("process start = %v", s.Started)
	}
	if _, ok := s.Info["process_start_time_seconds"]; ok {
		t.Error("the start time changes on every restart: it must not be in Info, which restarts are compared by")
	}
}

// metricsHandler serves a fake vLLM whose /metrics is h.
func metricsHandler(h http.HandlerFunc) http.Handler {
	fake := enginetest.New(model.VLLM)
	mux := http.NewServeMux()
	mux.Handle("/", fake)
	mux.Handle("/metrics", h)
	return mux
}

func body(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s)) }
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

func TestScrapeBadInput(t *testing.T) {
	const good = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
	huge := func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("# padding padding padding padding padding padding padding padding padding padding\n"), 1<<10)
		for n := 0; n < 50<<20; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	cases := []struct {
		name     string
		h        http.HandlerFunc
		cfg      Config
		kind     model.ScrapeErrKind
		msg      string // in Err
		hint     string // in Hint
		maxTook  time.Duration
		validate func(t *testing.T, sc model.Scrape)
	}{
		{name: "html", h: body("<!DOCTYPE html><html><body>Sign in</body></html>\n"), kind: model.ErrMalformed, msg: "HTML"},
		{name: "json", h: body(`{"object":"error","message":"nope"}` + "\n"), kind: model.ErrMalformed, msg: "JSON"},
		{name: "garbage", h: body("this is not prometheus at all\n"), kind: model.ErrMalformed, msg: "not valid Prometheus text"},
		{name: "truncated mid-line", h: body(good[:len(good)-3]), kind: model.ErrMalformed, msg: "truncated"},
		{name: "truncated connection", h: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100000")
			_, _ = w.Write([]byte(good))
		}, kind: model.ErrMalformed, msg: "truncated"},
		{name: "50 MB body", h: huge, cfg: Config{Timeout: 20 * time.Second}, kind: model.ErrTooLarge, msg: "16 MiB", hint: "--metrics-path"},
		{name: "401", h: status(401), kind: model.ErrAuth, hint: "--api-key"},
		{name: "403", h: status(403), kind: model.ErrAuth, hint: "Authorization"},
		{name: "404", h: status(404), kind: model.ErrNotFound, hint: "always serves /metrics on its API port"},
		{name: "500", h: status(500), kind: model.ErrServer},
		{name: "no vllm metrics", h: body("# TYPE python_info gauge\npython_info{version=\"3.12\"} 1.0\n"),
			kind: model.ErrNotFound, msg: "without any vllm: metrics", hint: "--disable-log-stats"},
		{name: "never answers", h: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			cfg: Config{Timeout: 300 * time.Millisecond}, kind: model.ErrTimeout, msg: "300ms", hint: "--timeout",
			maxTook: 2 * time.Second},
		{name: "NaN and Inf", h: body(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} NaN
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} +Inf
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 2.0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} NaN
# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{engine="0",le="1.0",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_bucket{engine="0",le="+Inf",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 1.0
vllm:e2e_request_latency_seconds_sum{engine="0",model_name="m"} NaN
`), validate: func(t *testing.T, sc model.Scrape) {
			want{
				gauges:  map[model.Gauge]float64{model.Waiting: 2},
				absentG: []model.Gauge{model.Running, model.KVUsage},
				absentC: []model.Counter{model.GenTokens},
				absentL: []model.Latency{model.E2E},
			}.check(t, only(t, sc.Samples))
		}},
		{name: "family in two blocks", h: body(`# HELP vllm:num_requests_running Number of requests.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
# HELP vllm:num_requests_running Number of requests.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="1",model_name="m"} 4.0
`), validate: func(t *testing.T, sc model.Scrape) {
			want{gauges: map[model.Gauge]float64{model.Running: 7}}.check(t, only(t, sc.Samples))
		}},
		{name: "duplicate series", h: body(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="0",model_name="m"} 4.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 2.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 2.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 0.3
`), validate: func(t *testing.T, sc model.Scrape) {
			s := only(t, sc.Samples)
			want{gauges: map[model.Gauge]float64{model.Running: 4}}.check(t, s)
			if n := len(s.Latencies[model.TTFT].Buckets); n != 2 {
				t.Errorf("TTFT buckets = %d, want 2 (duplicate dropped)", n)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL = serve(t, metricsHandler(tc.h))
			cfg.Engine = model.VLLM
			sc := ScrapeOnce(context.Background(), cfg)
			if tc.validate != nil {
				if !sc.OK() {
					t.Fatalf("scrape failed: %s", sc.Err)
				}
				tc.validate(t, sc)
				return
			}
			if sc.OK() || sc.ErrKind != tc.kind {
				t.Fatalf("kind = %q (err %q), want %q", sc.ErrKind, sc.Err, tc.kind)
			}
			if !strings.Contains(sc.Err, tc.msg) || !strings.Contains(sc.Hint, tc.hint) {
				t.Errorf("err %q / hint %q, want %q / %q", sc.Err, sc.Hint, tc.msg, tc.hint)
			}
			if tc.maxTook > 0 && sc.Took > tc.maxTook {
				t.Errorf("took %v", sc.Took)
			}
			if sc.Identity.Engine != model.VLLM {
				t.Errorf("identity lost: %+v", sc.Identity)
			}
		})
	}
}

func TestScrapeRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: addr})
	if sc.ErrKind != model.ErrRefused || sc.Identity.Health != model.HealthDown || sc.Endpoint != "http://"+addr {
		t.Errorf("scrape = %+v", sc)
	}
}

func TestAPIKeySent(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sekrit" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fake.ServeHTTP(w, r)
	})
	url := serve(t, h)
	if sc := ScrapeOnce(context.Background(), Config{URL: url}); sc.ErrKind != model.ErrAuth || !strings.Contains(sc.Hint, "--api-key") {
		t.Errorf("without key: %+v", sc)
	}
	if sc := ScrapeOnce(context.Background(), Config{URL: url, APIKey: "sekrit"}); !sc.OK() {
		t.Errorf("with key: %s", sc.Err)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{URL: "127.0.0.1:8000/metrics", Interval: time.Millisecond}.withDefaults()
	if c.URL != "http://127.0.0.1:8000" || c.MetricsPath != "/metrics" || c.Timeout != 2*time.Second ||
		c.Interval != 250*time.Millisecond || c.MaxBodyBytes != 16<<20 {
		t.Errorf("defaults = %+v", c)
	}
	for in, want := range map[string][2]string{
		"http://h:30000/":                         {"http://h:30000", ""},
		"https://gw.example/v/prometheus/metrics": {"https://gw.example/v", "/prometheus/metrics"},
		"h:8080/metrics?model=a":                  {"http://h:8080", "/metrics?model=a"},
		"http://h:8000/v1/":                       {"http://h:8000", ""},
	} {
		if b, p := SplitURL(in); b != want[0] || p != want[1] {
			t.Errorf("SplitURL(%q) = %q, %q; want %q", in, b, p, want)
		}
	}
}

// --engine forced to the wrong engine: the route answers with another
// engine's metrics, and the hint names that engine (QA #22).
func TestWrongEngineForcedNamesTheRealOne(t *testing.T) {
	url := serve(t, enginetest.New(model.VLLM))
	sc := ScrapeOnce(context.Background(), Config{URL: url, Engine: model.TGI})
	if sc.ErrKind != model.ErrNotFound || !strings.Contains(sc.Err, "without any tgi_ metrics") ||
		!strings.Contains(sc.Hint, "these look like vllm metrics (vllm:…): drop --engine tgi") || !strings.Contains(sc.Hint, "--engine vllm") {
		t.Errorf("kind %q err %q hint %q", sc.ErrKind, sc.Err, sc.Hint)
	}
}

// A missing metrics route says how that engine turns its metrics on.
func TestNotFoundHints(t *testing.T) {
	for eng, hint := range map[model.Engine]string{
		model.VLLM:     "always serves /metrics",
		model.SGLang:   "--enable-metrics",
		model.LlamaCpp: "--metrics",
		model.TRTLLM:   "return_perf_metrics",
		model.TGI:      "--prometheus-port",
		model.Triton:   "8002",
	} {
		t.Run(string(eng), func(t *testing.T) {
			fake := enginetest.New(eng)
			fake.Metrics.Store(nil)
			mux := http.NewServeMux()
			mux.Handle("/", fake)
			mux.Handle("/metrics", http.NotFoundHandler()) // trtllm's JSON route too
			sc := ScrapeOnce(context.Background(), Config{URL: serve(t, mux), Engine: eng})
			if sc.ErrKind != model.ErrNotFound || !strings.Contains(sc.Hint, hint) {
				t.Errorf("kind %q hint %q, want not_found with %q", sc.ErrKind, sc.Hint, hint)
			}
			if eng == model.VLLM && strings.Contains(sc.Hint, "--disable-log-stats") {
				t.Errorf("vLLM 404 hint blames --disable-log-stats, which leaves /metrics up: %q", sc.Hint)
			}
			if sc.Identity.Engine != eng {
				t.Errorf("identity = %+v", sc.Identity)
			}
		})
	}
}

// trtllm-serve without return_perf_metrics still has its JSON iteration
// stats: the scrape works, with the hint in a note.
func TestTRTLLMWithoutPrometheus(t *testing.T) {
	fake := enginetest.New(model.TRTLLM)
	fake.Metrics.Store(nil)
	sc := ScrapeOnce(context.Background(), Config{URL: serve(t, fake)})
	if !sc.OK() {
		t.Fatalf("scrape failed: %s", sc.Err)
	}
	s := only(t, sc.Samples)
	want{gauges: map[model.Gauge]float64{model.Running: 53, model.KVUsage: 4240.0 / 6400},
		absentC: []model.Counter{model.PromptTokens}, absentL: []model.Latency{model.TTFT}}.check(t, s)
	if s.Model != enginetest.TRTLLMModel || !strings.Contains(strings.Join(s.Notes, ";"), "return_perf_metrics") {
		t.Errorf("model %q notes %v", s.Model, s.Notes)
	}
}

// Every fake engine is detected, identified and scraped end to end.
func TestScrapeOnceEachEngine(t *testing.T) {
	for _, eng := range model.Engines {
		t.Run(string(eng), func(t *testing.T) {
			sc := ScrapeOnce(context.Background(), Config{URL: serve(t, enginetest.New(eng))})
			if !sc.OK() || sc.Identity.Engine != eng || len(sc.Samples) == 0 {
				t.Fatalf("scrape = %+v", sc)
			}
		})
	}
}

// vLLM's --api-key guards /v1/* only; /metrics stays open. Without the key
// the engine is still found from its metrics and read.
func TestAPIKeyOnV1Only(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") && r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	sc := ScrapeOnce(context.Background(), Config{URL: url})
	if !sc.OK() || sc.Identity.Engine != model.VLLM || only(t, sc.Samples).Model != enginetest.VLLMModel {
		t.Fatalf("scrape = %+v", sc)
	}
	if len(sc.Identity.Models) != 1 || sc.Identity.Models[0].ID != enginetest.VLLMModel {
		t.Errorf("models from the metrics' labels = %+v", sc.Identity.Models)
	}
}

// A server that accepts the connection and never answers costs the default
// 2 s timeout, then says so.
func TestScrapeSilentServerDefaultTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	sc := ScrapeOnce(context.Background(), Config{URL: ln.Addr().String()})
	if sc.ErrKind != model.ErrTimeout || !strings.Contains(sc.Err, "2s") || !strings.Contains(sc.Hint, "--timeout") {
		t.Errorf("scrape = %+v", sc)
	}
	if sc.Took < 2*time.Second || sc.Took > 6*time.Second {
		t.Errorf("took %v, want about the 2 s default", sc.Took)
	}
}

// The poller identifies the endpoint again when it comes back after being
// down.
func TestPollerRedetectsAfterDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // down: connection refused
	p := NewPoller(Config{URL: addr, Interval: MinInterval})
	var srv *httptest.Server
	var listenErr error
	got := scrapes(t, p, 2, func(int) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			listenErr = err
			return
		}
		srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: enginetest.New(model.SGLang)}}
		srv.Start()
	})
	if listenErr != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, listenErr)
	}
	defer srv.Close()
	if got[0].ErrKind != model.ErrRefused || got[0].Identity.Health != model.HealthDown {
		t.Errorf("first scrape = %+v", got[0])
	}
	if !got[1].OK() || got[1].Identity.Engine != model.SGLang {
		t.Errorf("second scrape = %+v", got[1])
	}
}

// While an identified endpoint is down, its scrapes keep saying what it
// was (engine, models) with health down.
func TestDownKeepsIdentity(t *testing.T) {
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	p := NewPoller(Config{URL: srv.URL, Interval: MinInterval})
	got := scrapes(t, p, 2, func(int) { srv.Close() })
	if !got[0].OK() {
		t.Fatalf("first scrape: %s", got[0].Err)
	}
	id := got[1].Identity
	if got[1].ErrKind != model.ErrRefused || id.Engine != model.VLLM || len(id.Models) != 1 ||
		id.Health != model.HealthDown || !strings.Contains(id.HealthDetail, "refused") {
		t.Errorf("down scrape = %+v", got[1])
	}
}

// An endpoint on this machine is scraped uncompressed (gzip would cost the
// engine's server and llmtop CPU on the box being watched, for bytes that
// cost nothing on loopback); a remote one may answer compressed.
func TestLoopbackScrapeIsUncompressed(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	var mu sync.Mutex
	var asked []string
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path+" "+r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	if sc := ScrapeOnce(context.Background(), Config{URL: url}); !sc.OK() {
		t.Fatal(sc.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, a := range asked {
		if strings.Contains(a, "gzip") {
			t.Errorf("a loopback request accepts gzip: %q", a)
		}
	}
	for _, u := range []string{"http://10.0.0.5:8000", "http://gpu-box:8000", "https://vllm.example.com"} {
		rt := newClient(Config{URL: u}.withDefaults()).Transport
		for {
			g, ok := rt.(interface{ Unwrap() http.RoundTripper })
			if !ok {
				break
			}
			rt = g.Unwrap()
		}
		tr, ok := rt.(*http.Transport)
		if !ok || tr.DisableCompression {
			t.Errorf("%s: a remote endpoint's client refuses compression", u)
		}
	}
}

// Issue 31 item 19: a TensorRT-LLM whose Prometheus text is on /metrics
// (recognised from those very metrics) is read there; the 404 at
// /prometheus/metrics is no "started without its metrics switch".
func TestTRTLLMPrometheusOnMetricsPath(t *testing.T) {
	fake := enginetest.New(model.TRTLLM)
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/prometheus/metrics":
			http.NotFound(w, r)
		case "/metrics":
			w.Write(enginetest.Fixture("trtllm.txt"))
		default:
			fake.ServeHTTP(w, r)
		}
	}))
	sc := ScrapeOnce(context.Background(), Config{URL: url})
	if !sc.OK() || sc.Identity.Engine != model.TRTLLM {
		t.Fatalf("scrape: engine %q err %q hint %q", sc.Identity.Engine, sc.Err, sc.Hint)
	}
	s := only(t, sc.Samples)
	if _, ok := s.Latencies[model.TTFT]; !ok || strings.Contains(strings.Join(s.Notes, ";"), "return_perf_metrics") {
		t.Errorf("TTFT read %v, notes %v", ok, s.Notes)
	}
}

// Issue 31 item 20: vLLM forced on a Ray Serve node's metrics port (its
// names under ray_vllm:) is not blamed on --disable-log-stats. Since issue
// 26 it is read: vLLM's metrics through the layer that wraps them, named
// as that layer.
func TestForcedVLLMOnRayServeReadsThroughRay(t *testing.T) {
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, rayCapture)
	}))
	sc := ScrapeOnce(context.Background(), Config{URL: url, Engine: model.VLLM})
	if !sc.OK() || sc.Identity.Engine != engines.RayServeID {
		t.Fatalf("engine %q err %q hint %q", sc.Identity.Engine, sc.Err, sc.Hint)
	}
	if got := only(t, sc.Samples).Gauges[model.Running]; got != 12 {
		t.Errorf("running %v, want 12", got)
	}
}

// Each request is bounded through its context (bounded), not
// http.Client.Timeout, whose old-style cancel costs two goroutines and a
// timer per request over probe's guard: a body that stalls after the
// headers is still cut at the timeout and named a stall, and a body read on
// time leaves no goroutine behind.
func TestRequestsBoundedByTheirContext(t *testing.T) {
	c := newClient(Config{URL: "http://127.0.0.1:1"}.withDefaults())
	if c.Timeout != 0 {
		t.Errorf("http.Client.Timeout = %v: each request would cost a goroutine and a timer of its own", c.Timeout)
	}
	if _, ok := c.Transport.(bounded); !ok {
		t.Fatalf("transport %T, want bounded", c.Transport)
	}
	release := make(chan struct{})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			enginetest.New(model.VLLM).ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write([]byte("# HELP vllm:num_requests_running x\n"))
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	start := time.Now()
	sc := ScrapeOnce(context.Background(), Config{URL: url, Timeout: 300 * time.Millisecond})
	if sc.ErrKind != model.ErrStalled && sc.ErrKind != model.ErrTimeout {
		t.Errorf("a stalled body: %v %q, want a stall or a timeout", sc.ErrKind, sc.Err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a stalled body held the scrape %v with a 300 ms timeout", took)
	}

	ok := serve(t, enginetest.New(model.VLLM))
	s := newSession(Config{URL: ok}.withDefaults())
	s.scrape(context.Background()) // the first: identification, connections
	before := runtime.NumGoroutine()
	for range 5 {
		if sc := s.scrape(context.Background()); !sc.OK() {
			t.Fatalf("scrape = %+v", sc)
		}
	}
	if after := runtime.NumGoroutine(); after > before+1 {
		t.Errorf("goroutines %d after five scrapes, %d before", after, before)
	}
}
