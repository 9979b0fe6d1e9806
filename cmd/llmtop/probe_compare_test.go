package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sim"
)

type compareJSON struct {
	Findings []struct {
		ID       string `json:"id"`
		Evidence []struct {
			Text string `json:"text"`
		} `json:"evidence"`
	} `json:"findings"`
	Compare struct {
		Kind  string `json:"kind"`
		Was   *json.RawMessage
		Diffs []struct {
			Prompt string   `json:"prompt"`
			Same   bool     `json:"same"`
			Token  *float64 `json:"diverge_token"`
		} `json:"diffs"`
		Kept bool `json:"kept"`
	} `json:"compare"`
}

func probeCompare(t *testing.T, url, reference, golden string) (compareJSON, int) {
	t.Helper()
	probeFlags.reference, probeFlags.golden = reference, golden
	defer func() { probeFlags.reference, probeFlags.golden = "", "" }()
	out, code := probeOnce(t, true, url)
	var r compareJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r, code
}

func findingOf(r compareJSON, id string) string {
	for _, f := range r.Findings {
		if f.ID == id {
			var ev []string
			for _, e := range f.Evidence {
				ev = append(ev, e.Text)
			}
			return strings.Join(ev, "\n")
		}
	}
	return ""
}

// Two simulated engines, one whose chat template drops the model's
// special tokens: the same greedy prompts answer differently, and the
// comparison names, per prompt, the first token (by the engine's own ids)
// where the answers part, and that the chat templates differ.
func TestProbeReferenceNamesTheFirstDifferingToken(t *testing.T) {
	healthy, wrong := serveSim(t, sim.Healthy), serveSim(t, sim.WrongTemplate)
	waitHealthy(t, healthy)
	waitHealthy(t, wrong)
	r, code := probeCompare(t, wrong, healthy, "")
	ev := findingOf(r, "probe_reference_differs")
	if ev == "" || code == 0 {
		t.Fatalf("exit %d, findings %+v", code, r.Findings)
	}
	if !strings.Contains(ev, "first differs at token ") || !strings.Contains(ev, "(id ") || !strings.Contains(ev, "chat template") {
		t.Errorf("evidence does not name the token:\n%s", ev)
	}
	differ := 0
	for _, d := range r.Compare.Diffs {
		if !d.Same {
			differ++
			if d.Token == nil {
				t.Errorf("%q: no token position", d.Prompt)
			}
		}
	}
	if differ == 0 || r.Compare.Kind != "reference" {
		t.Errorf("compare %+v", r.Compare)
	}
	// The same engine against itself: nothing differs.
	r, _ = probeCompare(t, healthy, healthy, "")
	if ev := findingOf(r, "probe_reference_differs"); ev != "" {
		t.Errorf("an endpoint differs from itself: %s", ev)
	}
}

// --golden keeps each run's answers: the first run is kept, the same
// engine again matches them, and after a planned restart onto a broken
// chat template the changed answers are named with the template's
// changed fingerprint.
func TestProbeGoldenShowsAChangedAnswerAcrossARestart(t *testing.T) {
	newSim := func(scenario string) http.Handler {
		s, err := sim.New(sim.Config{Scenario: scenario, Seed: 3, StartupTime: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		s.Start(ctx)
		return s.Handler()
	}
	var current atomic.Pointer[http.Handler]
	h := newSim(sim.Healthy)
	current.Store(&h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	waitHealthy(t, srv.URL)
	file := filepath.Join(t.TempDir(), "golden.json")

	r, _ := probeCompare(t, srv.URL, "", file)
	if !r.Compare.Kept || r.Compare.Was != nil || findingOf(r, "probe_golden_changed") != "" {
		t.Fatalf("first run: %+v", r.Compare)
	}
	r, _ = probeCompare(t, srv.URL, "", file)
	if findingOf(r, "probe_golden_changed") != "" || len(r.Compare.Diffs) == 0 {
		t.Fatalf("the same engine changed its answers: %+v", r)
	}
	// The planned restart: the same port, a new process with another template.
	h2 := newSim(sim.WrongTemplate)
	current.Store(&h2)
	waitHealthy(t, srv.URL)
	r, code := probeCompare(t, srv.URL, "", file)
	ev := findingOf(r, "probe_golden_changed")
	if ev == "" || code == 0 || !strings.Contains(ev, "first differs at token") || !strings.Contains(ev, "chat template") {
		t.Fatalf("exit %d, evidence:\n%s", code, ev)
	}
	b, err := os.ReadFile(file)
	if err != nil || strings.Count(string(b), `"endpoint"`) != 3 {
		t.Errorf("the file keeps %d runs (%v)", strings.Count(string(b), `"endpoint"`), err)
	}
}
