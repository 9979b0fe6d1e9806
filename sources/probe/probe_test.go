package probe

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestIdentifyEachEngine(t *testing.T) {
	cases := []struct {
		eng     model.Engine
		version string
		model   string
		ctx     int
	}{
		{model.VLLM, "0.11.2", enginetest.VLLMModel, 131072},
		{model.SGLang, "0.5.4", enginetest.SGLangModel, 131072},
		{model.TGI, "3.3.6-dev0", enginetest.TGIModel, 8192},
		{model.LlamaCpp, "b6701-34af94cd", enginetest.LlamaCppModel, 8192},
		{model.TRTLLM, "1.1.0", enginetest.TRTLLMModel, 0},
		{model.Triton, "2.59.0", "", 0},
		{model.Ollama, "0.5.1", enginetest.OllamaModel, 0},
	}
	for _, tc := range cases {
		t.Run(string(tc.eng), func(t *testing.T) {
			url := serve(t, enginetest.New(tc.eng))
			id, err := Identify(context.Background(), http.DefaultClient, url, model.Unknown)
			if err != nil {
				t.Fatal(err)
			}
			if id.Engine != tc.eng || id.Version != tc.version || id.Health != model.HealthUp {
				t.Errorf("identity = %+v", id)
			}
			if tc.model == "" {
				return
			}
			if len(id.Models) == 0 || id.Models[0].ID != tc.model || id.Models[0].MaxContext != tc.ctx {
				t.Errorf("models = %+v, want %s (context %d) first", id.Models, tc.model, tc.ctx)
			}
		})
	}
}

// SGLang serves /api/tags and can answer "Ollama is running": neither makes
// it Ollama. A server with only /api/tags is not recognised at all.
func TestApiTagsIsNotOllama(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/tags", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"models":[{"name":"x"}]}`))
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("Ollama is running")) })
	id, err := Identify(context.Background(), http.DefaultClient, serve(t, mux), model.Unknown)
	if err != ErrUnrecognised || id.Engine != model.Unknown {
		t.Errorf("identity = %+v, err = %v; want unrecognised", id, err)
	}
}

func TestSniffMetrics(t *testing.T) {
	for body, want := range map[string]model.Engine{
		"# HELP nv_inference_count x\nnv_inference_count{model=\"a\"} 1\n": model.Triton,
		"# TYPE tgi_queue_size gauge\ntgi_queue_size 3\n":                  model.TGI,
		"python_info 1\nvllm:num_requests_running 2\n":                     model.VLLM,
		"process_cpu_seconds_total 3\n":                                    model.Unknown,
	} {
		if got := SniffMetrics([]byte(body)); got != want {
			t.Errorf("SniffMetrics(%q) = %q, want %q", body, got, want)
		}
	}
}

// A metrics-only port (Triton's 8002) is recognised from its metric names.
func TestIdentifyMetricsOnlyPort(t *testing.T) {
	fake := enginetest.New(model.Triton)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { fake.ServeHTTP(w, r) })
	id, err := Identify(context.Background(), http.DefaultClient, serve(t, mux), model.Unknown)
	if err != nil || id.Engine != model.Triton || id.Health != model.HealthUnknown {
		t.Errorf("identity = %+v, err = %v", id, err)
	}
}

func TestHealthSemantics(t *testing.T) {
	cases := []struct {
		eng    model.Engine
		status int
		body   string
		want   model.Health
	}{
		{model.LlamaCpp, 503, `{"error":{"message":"Loading model","type":"unavailable_error","code":503}}`, model.HealthLoading},
		{model.SGLang, 503, "", model.HealthLoading},
		{model.VLLM, 503, "", model.HealthUnhealthy}, // engine dead
		{model.TGI, 503, `{"error":"unhealthy","error_type":"healthcheck"}`, model.HealthUnhealthy},
		{model.Triton, 400, "", model.HealthLoading},
		{model.VLLM, 200, "", model.HealthUp},
		{model.VLLM, 404, "", model.HealthUnknown},
		{model.VLLM, 401, "", model.HealthUnknown},
	}
	for _, tc := range cases {
		url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		if got, detail := Health(context.Background(), http.DefaultClient, url, tc.eng); got != tc.want {
			t.Errorf("%s %d: health %q (%s), want %q", tc.eng, tc.status, got, detail, tc.want)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	if got, _ := Health(context.Background(), http.DefaultClient, "http://"+addr, model.VLLM); got != model.HealthDown {
		t.Errorf("refused: %q, want down", got)
	}
}

func TestDiscover(t *testing.T) {
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	found := Discover(context.Background(), "127.0.0.1", []int{closed, port}, time.Second)
	if len(found) != 1 || found[0].URL != srv.URL || found[0].Identity.Engine != model.VLLM {
		t.Errorf("found = %+v", found)
	}
}
