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

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/behaviour"
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
// restartableSim serves a simulated engine of scenario on one port;
// restart replaces it by a new process of another scenario on the same
// port (a planned restart), once it answers.
func restartableSim(t *testing.T, scenario string) (url string, restart func(scenario string)) {
	t.Helper()
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
	h := newSim(scenario)
	current.Store(&h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*current.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	waitHealthy(t, srv.URL)
	return srv.URL, func(scenario string) {
		h := newSim(scenario)
		current.Store(&h)
		waitHealthy(t, srv.URL)
	}
}

func TestProbeGoldenShowsAChangedAnswerAcrossARestart(t *testing.T) {
	url, restart := restartableSim(t, sim.Healthy)
	file := filepath.Join(t.TempDir(), "golden.json")

	r, _ := probeCompare(t, url, "", file)
	if !r.Compare.Kept || r.Compare.Was != nil || findingOf(r, "probe_golden_changed") != "" {
		t.Fatalf("first run: %+v", r.Compare)
	}
	r, _ = probeCompare(t, url, "", file)
	if findingOf(r, "probe_golden_changed") != "" || len(r.Compare.Diffs) == 0 {
		t.Fatalf("the same engine changed its answers: %+v", r)
	}
	// The planned restart: the same port, a new process with another template.
	restart(sim.WrongTemplate)
	r, code := probeCompare(t, url, "", file)
	ev := findingOf(r, "probe_golden_changed")
	if ev == "" || code == 0 || !strings.Contains(ev, "first differs at token") || !strings.Contains(ev, "chat template") {
		t.Fatalf("exit %d, evidence:\n%s", code, ev)
	}
	b, err := os.ReadFile(file)
	if err != nil || strings.Count(string(b), `"endpoint"`) != 3 {
		t.Errorf("the file keeps %d runs (%v)", strings.Count(string(b), `"endpoint"`), err)
	}
}

// Issue 27 item 6: the screen's probe (o) keeps the golden prompts'
// answers with the run it probed, and the runs view's comparison of a run
// with the one before names the answers that changed: here across a
// planned restart onto another chat template.
func TestRunsViewShowsChangedGoldenAnswers(t *testing.T) {
	url, restart := restartableSim(t, sim.Healthy)
	rt := newMonitorRuntime()
	steps := map[string]bool{}
	b1, err := rt.probe(context.Background(), url, func(s string) { steps[s] = true })
	if err != nil || len(b1.Golden) != len(behaviour.GoldenPrompts) || !steps["golden answers"] {
		t.Fatalf("first probe: %v, %d golden answers, steps %v", err, len(b1.Golden), steps)
	}
	same, _ := rt.probe(context.Background(), url, func(string) {})
	if c := diagnosis.CompareRuns(model.Run{N: 1, Behaviour: &b1}, model.Run{N: 2, Behaviour: &same}, diagnosis.DefaultConfig()); len(c.Config) != 0 {
		t.Fatalf("the same engine compared as changed: %q", c.Config)
	}
	restart(sim.WrongTemplate)
	b2, _ := rt.probe(context.Background(), url, func(string) {})
	c := diagnosis.CompareRuns(model.Run{N: 1, Behaviour: &b1}, model.Run{N: 2, Behaviour: &b2}, diagnosis.DefaultConfig())
	got := strings.Join(c.Config, "\n")
	if !strings.Contains(got, "golden answers: ") || !strings.Contains(got, " changed (behaviour probe); first ") || !strings.Contains(got, "chat template") {
		t.Errorf("the runs comparison:\n%s", got)
	}
}
