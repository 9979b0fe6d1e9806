package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// A result leaves the load generator safe to print and save: the URL's
// credentials redacted, the server's model id and error bodies cleaned of
// escape sequences. The requests still used the real URL (the server saw
// the credentials).
func TestResultIsCleanedAndRedacted(t *testing.T) {
	const evil = "m\x1b]0;pwned\x07\x1b[2J\x1b[41;5mX"
	var sawUser string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawUser, _, _ = r.BasicAuth()
		if r.URL.Path == "/v1/models" {
			io.WriteString(w, `{"object":"list","data":[{"id":"`+strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`).Replace(evil)+`"}]}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "bad \x1b]52;c;cHduZWQ=\x07request")
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "http://alice:PASSWORD42@", 1)
	res, err := Run(context.Background(), Config{URL: url, Concurrency: 1, NumRequests: 2, Warmup: 0, Duration: 0, Timeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sawUser != "alice" {
		t.Errorf("the server saw user %q: the request must use the real URL", sawUser)
	}
	if strings.Contains(res.BaseURL, "PASSWORD42") || !strings.Contains(res.BaseURL, model.Redacted) {
		t.Errorf("base_url %q", res.BaseURL)
	}
	all := res.ModelID + strings.Join(res.ErrorSamples, "") + strings.Join(res.Notes, "")
	if strings.ContainsAny(all, "\x1b\x07") || strings.Contains(all, "PASSWORD42") {
		t.Errorf("unsafe text in the result: %q", all)
	}
	if res.ModelID != "mX" || len(res.ErrorSamples) == 0 {
		t.Errorf("model %q, errors %q", res.ModelID, res.ErrorSamples)
	}
}
