package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/sim"
)

// probeOnce runs `llmtop probe` (JSON or text) and returns its output and
// exit status.
func probeOnce(t *testing.T, asJSON bool, url string) (string, int) {
	t.Helper()
	cmd, _, err := root.Find([]string{"probe"})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	defer cmd.SetOut(nil)
	defer cmd.SetErr(nil)
	probeFlags.json = asJSON
	defer func() { probeFlags.json = false }()
	err = runProbe(context.Background(), cmd, url)
	code := 0
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

// The exit status: 0 for the healthy simulator, 1 for a warning (the
// wrong template), 3 when nothing answers; --json carries the same.
func TestProbeExitStatus(t *testing.T) {
	healthy, wrong := serveSim(t, sim.Healthy), serveSim(t, sim.WrongTemplate)
	waitHealthy(t, healthy)
	waitHealthy(t, wrong)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		url, status string
		code        int
		finding     string
	}{
		{healthy, "ok", 0, ""},
		{wrong, "warn", 1, "probe_template"},
		{dead, "unreachable", 3, ""},
	} {
		out, code := probeOnce(t, true, c.url)
		var res probeResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v\n%s", c.url, err, out)
		}
		if code != c.code || res.ExitCode != c.code || res.Status != c.status {
			t.Errorf("%s: exit %d, document %d %q; want %d %q (%s)", c.url, code, res.ExitCode, res.Status, c.code, c.status, res.Error)
		}
		var ids []string
		for _, f := range res.Findings {
			ids = append(ids, f.ID)
		}
		if c.finding != "" && !strings.Contains(strings.Join(ids, " "), c.finding) {
			t.Errorf("%s: findings %v, want %s", c.url, ids, c.finding)
		}
		if c.code == 3 && (res.Behaviour != nil || !strings.Contains(res.Error, "cannot identify")) {
			t.Errorf("unreachable: %+v", res)
		}
		if c.code != 3 && (res.Behaviour == nil || len(res.Behaviour.Raw) < 8) {
			t.Errorf("%s: the raw exchanges are missing from --json", c.url)
		}
	}
}

// The text report names every check and what it found, and tells where the
// raw repro is.
func TestProbeTextReport(t *testing.T) {
	url := serveSim(t, sim.IgnoresTemperature)
	waitHealthy(t, url)
	out, code := probeOnce(t, false, url)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"determinism    DIFFERS at byte", "chat template  has its special tokens, llama3",
		"chat vs compl. not checked: the chat route itself is not deterministic", "tokenization   plain English",
		"stop/length    one-word question, max_tokens 256", "[WARN] same request at temperature 0 answered differently",
		"raw requests and responses: llmtop probe --json"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// Issue 31 item 18: an engine that answers but lists no model is not
// "unreachable" (still exit 3: nothing could be probed).
func TestProbeNoModelIsNotUnreachable(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[]}`)
		case "/metrics":
			io.WriteString(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0\n")
		case "/health":
		default:
			http.NotFound(w, r)
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	out, code := probeOnce(t, true, srv.URL)
	var res probeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 3 || res.Status != "no_model" || !strings.Contains(res.Error, "lists no model") {
		t.Errorf("exit %d, status %q, error %q; want 3 no_model", code, res.Status, res.Error)
	}
}
