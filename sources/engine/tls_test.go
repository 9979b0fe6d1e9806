package engine

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Issue 26: KServe serves its vLLM pods' metrics over https with the
// cluster's own certificate, and llm-d's picker wants a bearer token. A
// certificate this machine does not trust is an error that names the
// opt-in; with it (and the token) the engine is read.
func TestTLSWithTokenAndExplicitSkipVerify(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer picker-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 4\n")
	}))
	defer srv.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.VLLM, APIKey: "picker-token"})
	if sc.OK() || !strings.Contains(sc.Err, "TLS certificate not trusted") || !strings.Contains(sc.Hint, "--insecure-skip-verify") {
		t.Errorf("untrusted certificate: err %q hint %q", sc.Err, sc.Hint)
	}
	sc = ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.VLLM, APIKey: "picker-token", InsecureSkipVerify: true})
	if !sc.OK() || only(t, sc.Samples).Gauges[model.Running] != 4 {
		t.Fatalf("with the opt-in and the token: err %q hint %q", sc.Err, sc.Hint)
	}
	sc = ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.VLLM, InsecureSkipVerify: true})
	if sc.ErrKind != model.ErrAuth {
		t.Errorf("no token: kind %q err %q", sc.ErrKind, sc.Err)
	}
}
