package behaviour

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
)

// startSim serves the simulator with scenario (no background traffic: the
// probe is the only client) and returns its URL.
func startSim(t *testing.T, scenario string) string {
	t.Helper()
	s, err := sim.New(sim.Config{Seed: 1, StartupTime: time.Millisecond, Scenario: scenario})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(srv.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv.URL
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the sim did not become healthy")
		}
	}
}

func findingIDs(fs []diagnosis.Finding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	sort.Strings(ids)
	return ids
}

// Each scenario is caught by the finding that names what it breaks, and
// the healthy sim by none of them.
func TestProbeCatchesSimScenarios(t *testing.T) {
	cases := []struct {
		scenario string
		want     []string // finding ids the probe must raise
		never    []string
	}{
		{sim.Healthy, nil, []string{"probe_nondeterministic", "probe_template", "probe_route_mismatch", "probe_runs_to_length", "probe_tokenizer"}},
		{sim.WrongTemplate, []string{"probe_template", "probe_runs_to_length"}, []string{"probe_nondeterministic", "probe_route_mismatch"}},
		{sim.IgnoresTemperature, []string{"probe_nondeterministic"}, []string{"probe_template", "probe_route_mismatch"}},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			url := startSim(t, c.scenario)
			b, err := Run(context.Background(), Config{URL: url})
			if err != nil {
				t.Fatal(err)
			}
			if b.Engine != model.VLLM || b.Identity.Model != "meta-llama/Llama-3.1-8B-Instruct" || b.Identity.MaxContext != 131072 {
				t.Errorf("identity %s %+v", b.Engine, b.Identity)
			}
			if b.Template.Route != "/tokenize (messages) + /detokenize" || len(b.Template.TokenIDs) == 0 || b.Tokens.NotChecked != "" || len(b.Tokens.Samples) != 3 {
				t.Errorf("routes: template %+v tokens %+v", b.Template, b.Tokens)
			}
			got := findingIDs(diagnosis.ProbeFindings(b))
			for _, id := range c.want {
				if !contains(got, id) {
					t.Errorf("findings %v: want %s", got, id)
				}
			}
			for _, id := range c.never {
				if contains(got, id) {
					t.Errorf("findings %v: %s must not be raised", got, id)
				}
			}
			switch c.scenario {
			case sim.Healthy:
				if !b.Determinism.Identical || !b.Template.Special || b.Template.Family != "llama3" || !b.Template.Compared || !b.Template.SameAnswer || b.Stop.Finish != "stop" {
					t.Errorf("healthy: %+v %+v %+v", b.Determinism, b.Template, b.Stop)
				}
			case sim.WrongTemplate:
				if strings.Contains(b.Template.Rendered, "<|") || b.Stop.Finish != "length" || !b.Stop.Tokens.OK || b.Stop.Tokens.V != stopTokens {
					t.Errorf("wrong-template: rendered %q, stop %+v", b.Template.Rendered, b.Stop)
				}
			case sim.IgnoresTemperature:
				d := b.Determinism
				if d.Identical || d.A == d.B || !d.DivergeToken.OK || b.Template.CompareNotChecked == "" {
					t.Errorf("ignores-temperature: %+v, compare %q", d, b.Template.CompareNotChecked)
				}
			}
			if b.Partial != "" || b.TookS > 30 {
				t.Errorf("partial %q after %.1f s", b.Partial, b.TookS)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// The key is sent (the server sees it) but appears in nothing the probe
// keeps or shows, even where the server echoes it back.
func TestProbeNeverKeepsTheKey(t *testing.T) {
	const key = "sk-probe-secret-4242"
	var saw []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		saw = append(saw, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":4096}]}`))
		case "/version":
			_, _ = w.Write([]byte(`{"version":"0.11.0"}`))
		case "/v1/chat/completions":
			_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"echo ` + key + `"},"finish_reason":"stop"}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"detail":"Not Found: Bearer ` + key + `"}`))
		}
	}))
	defer srv.Close()
	b, err := Run(context.Background(), Config{URL: srv.URL, APIKey: key, Engine: model.VLLM})
	if err != nil {
		t.Fatal(err)
	}
	if len(saw) == 0 || saw[0] != "Bearer "+key {
		t.Fatalf("the server saw %q", saw)
	}
	if len(b.Raw) == 0 {
		t.Fatal("no raw exchanges kept")
	}
	var all strings.Builder
	for _, x := range b.Raw {
		all.WriteString(x.Request + x.Response + x.Error)
	}
	all.WriteString(b.Determinism.A + b.Stop.Answer + b.Template.NotChecked)
	if strings.Contains(all.String(), key) {
		t.Errorf("the key leaked into the result: %s", all.String())
	}
	if !strings.Contains(b.Template.NotChecked, "has no /tokenize") {
		t.Errorf("template not checked %q: want the missing route named", b.Template.NotChecked)
	}
}

// An endpoint that accepts and never answers gives a partial result within
// the budget, never a hang.
func TestProbeHungEndpointIsPartial(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`))
		case "/version":
			_, _ = w.Write([]byte(`{"version":"0.11.0"}`))
		default:
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	// The default 25 s budget: two requests in a row without an answer
	// stop the probe long before it.
	b, err := Run(context.Background(), Config{URL: srv.URL, Engine: model.VLLM, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v: the probe waited for its budget instead of stopping at the second timeout", took)
	}
	if !strings.Contains(b.Partial, "two requests in a row got no answer within 200ms") || !strings.Contains(b.Stop.NotChecked, "not checked") {
		t.Errorf("partial %q, stop %+v", b.Partial, b.Stop)
	}
	if b.Template.NotChecked == "" || !strings.Contains(b.Template.NotChecked, "no answer within") {
		t.Errorf("template: %q", b.Template.NotChecked)
	}
}

// An endpoint whose streams never end (here the last check's, max_tokens
// 256): the probe stops at its budget and says so (probe_partial), never
// "ok" with the check silently cut (it took the whole 25 s and reported no
// partial result).
func TestProbeEndlessStreamsArePartial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`))
		case "/version":
			_, _ = w.Write([]byte(`{"version":"0.11.0"}`))
		default:
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"max_tokens":256`) {
				http.Error(w, "no", http.StatusNotFound) // the other checks end at once
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for {
				if _, err := w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}))
	defer srv.Close()
	b, err := Run(context.Background(), Config{URL: srv.URL, Engine: model.VLLM, Timeout: 5 * time.Second, Budget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if b.Partial == "" || !strings.Contains(b.Stop.NotChecked, "not checked") {
		t.Errorf("no partial result after the budget ran out: partial %q stop %+v", b.Partial, b.Stop)
	}
}
