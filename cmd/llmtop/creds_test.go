package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// $OPENAI_API_KEY, which nobody typed for llmtop, goes only to endpoints
// the person named; a replica a Prometheus target's instance label chose
// never gets it. A key given with --api-key/--api-key-file goes to every
// endpoint of the command.
func TestTheEnvironmentKeyGoesToNamedEndpointsOnly(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env-key-777")
	engineFlags.apiKey, apiKeyFile = "", ""
	if k, _ := apiKeyFor("http://gpu1:8000", true); k != "sk-env-key-777" {
		t.Errorf("a named endpoint got %q", k)
	}
	for _, u := range []string{"http://10.0.0.9:8000", "http://gpu1:9000", "https://gpu1:8000"} {
		if k, _ := apiKeyFor(u, false); k != "" {
			t.Errorf("%s (not named) got %q", u, k)
		}
	}
	// The monitor knows which of its endpoints the person named: the URLs
	// it was given, not the targets --prometheus found.
	rt := newMonitorRuntime()
	if _, named := rt.target("http://10.0.0.9:8000"); named {
		t.Error("a session with no named endpoint calls a target named")
	}
	file := filepath.Join(t.TempDir(), "key")
	os.WriteFile(file, []byte("sk-from-file-123\n"), 0o600)
	apiKeyFile = file
	defer func() { apiKeyFile = "" }()
	if k, err := apiKeyFor("http://10.0.0.9:8000", false); k != "sk-from-file-123" || err != nil {
		t.Errorf("--api-key-file: %q %v", k, err)
	}
	engineFlags.apiKey = "sk-flag"
	defer func() { engineFlags.apiKey = "" }()
	if _, err := apiKeyFor("http://gpu1:8000", true); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("--api-key and --api-key-file: %v", err)
	}
}

// An engine that echoes the Authorization header in its version string:
// snapshot (text and JSON) never prints the key (the monitor's header,
// diagnose and the exporter's labels read the same cleaned identity).
func TestAnEchoedKeyIsNeverPrinted(t *testing.T) {
	const key = "sk-echoed-5150"
	fake := enginetest.New(model.VLLM)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"version":"0.11.2 (auth ` + r.Header.Get("Authorization") + `)"}`))
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	engineFlags.engine, engineFlags.metricsPath, engineFlags.timeout = "", "", 2*time.Second
	engineFlags.apiKey = key
	defer func() { engineFlags.apiKey = "" }()
	for _, asJSON := range []bool{true, false} {
		var out bytes.Buffer
		if err := runSnapshot(context.Background(), &out, []string{srv.URL}, asJSON, 300*time.Millisecond); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if strings.Contains(out.String(), key) || !strings.Contains(out.String(), "0.11.2") {
			t.Errorf("json=%v: %s", asJSON, out.String())
		}
	}
}

// Issue 26: --token-file URL=FILE gives one endpoint its own bearer token
// (the picker's), the others keep --api-key; a bad spec or an empty file
// is an error, and the token is scrubbed from every output.
func TestTokenFilePerEndpoint(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/tok"
	if err := os.WriteFile(f, []byte("epp-secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	specs := []string{"http://epp:9090=" + f}
	if tok, ok, err := tokenFor("epp:9090/", specs); err != nil || !ok || tok != "epp-secret-token" {
		t.Errorf("epp: %q %v %v", tok, ok, err)
	}
	if _, ok, err := tokenFor("http://vllm:8000", specs); err != nil || ok {
		t.Errorf("another endpoint got the token: %v %v", ok, err)
	}
	if _, _, err := tokenFor("http://epp:9090", []string{"http://epp:9090"}); err == nil {
		t.Error("a spec without =FILE accepted")
	}
	empty := dir + "/empty"
	os.WriteFile(empty, nil, 0o600)
	if _, _, err := tokenFor("http://epp:9090", []string{"http://epp:9090=" + empty}); err == nil {
		t.Error("an empty token file accepted")
	}
	if out := model.SafeOutput("token epp-secret-token"); strings.Contains(out, "epp-secret-token") {
		t.Errorf("token not scrubbed: %q", out)
	}
}
