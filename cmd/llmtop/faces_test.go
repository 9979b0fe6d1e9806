package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/tui"
)

// recordSim scrapes the simulator through the real vLLM adapter once per
// simulated second on a fake clock: a recorded message sequence, the same
// for every face.
func recordSim(t *testing.T, scenario string, secs int) ([]model.Scrape, string) {
	t.Helper()
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clk := sim.NewFakeClock(start)
	s, err := sim.New(sim.Config{Scenario: scenario, Background: true, Seed: 7, StartupTime: time.Millisecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	cfg, err := engineConfig(srv.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Scrape
	for i := 0; i < secs; i++ {
		if err := s.Advance(time.Second); err != nil {
			t.Fatal(err)
		}
		sc := engine.ScrapeOnce(context.Background(), cfg)
		at := clk.Now()
		sc.Endpoint, sc.Time = srv.URL, at
		for j := range sc.Samples {
			sc.Samples[j].Endpoint, sc.Samples[j].Time = srv.URL, at
		}
		out = append(out, sc)
	}
	return out, srv.URL
}

func findingKeys(fs []diagnosis.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID+" "+f.Severity.String()+" "+f.Title)
	}
	sort.Strings(out)
	return out
}

// One recorded sequence through each face: the TUI (its `s` snapshot),
// `diagnose --json` and `snapshot --json` read one core type and so reach
// the same findings.
func TestEveryFaceGetsTheSameFindings(t *testing.T) {
	scrapes, url := recordSim(t, "healthy:20s,queue-buildup:40s", 60)
	th := config.DefaultThresholds
	cfg := config.DiagnosisConfig(th)
	last := scrapes[len(scrapes)-1].Time

	// The TUI: data messages in, its `s` snapshot out.
	m := tui.New(tui.Options{Endpoints: []string{url}, Now: scrapes[0].Time, NoColor: true, Thresholds: &th})
	for _, sc := range scrapes {
		m.Update(sc)
	}
	b, err := json.Marshal(tui.BuildSnapshot(m.Data()))
	if err != nil {
		t.Fatal(err)
	}
	var fromTUI struct{ Findings []diagnosis.Finding }
	if err := json.Unmarshal(b, &fromTUI); err != nil {
		t.Fatal(err)
	}

	// diagnose: the watch evaluates every interval; its JSON result.
	w := newWatch([]string{url}, cfg)
	w.start = scrapes[0].Time.Add(-time.Second)
	var rep diagnosis.Report
	for _, sc := range scrapes {
		w.onScrape(sc)
		rep = w.evaluate(sc.Time)
	}
	b, err = json.Marshal(w.result(rep))
	if err != nil {
		t.Fatal(err)
	}
	var fromDiagnose struct{ Findings []diagnosis.Finding }
	if err := json.Unmarshal(b, &fromDiagnose); err != nil {
		t.Fatal(err)
	}

	// snapshot: every scrape into the core, the document out.
	doc := buildSnapshot(last, []endpointResult{{url: url, scrapes: scrapes}}, cfg, nil)
	b, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var fromSnapshot struct {
		Findings  []diagnosis.Finding
		Endpoints []model.EndpointJSON
	}
	if err := json.Unmarshal(b, &fromSnapshot); err != nil {
		t.Fatal(err)
	}

	tuiF, diagF, snapF := findingKeys(fromTUI.Findings), findingKeys(fromDiagnose.Findings), findingKeys(fromSnapshot.Findings)
	if len(tuiF) == 0 || !strings.Contains(strings.Join(tuiF, "\n"), "ttft_") {
		t.Fatalf("the sequence should open the queueing TTFT finding; TUI has %q", tuiF)
	}
	if strings.Join(tuiF, "\n") != strings.Join(diagF, "\n") || strings.Join(tuiF, "\n") != strings.Join(snapF, "\n") {
		t.Fatalf("faces disagree:\nTUI      %q\ndiagnose %q\nsnapshot %q", tuiF, diagF, snapF)
	}
	t.Logf("every face: %q", tuiF)
	// …and the same ledger: the scenario switch restarted the engine.
	if e := fromSnapshot.Endpoints; len(e) != 1 || len(e[0].Runs) != 2 || e[0].State != model.LifeServing {
		t.Fatalf("snapshot endpoint: %+v", e)
	}
}

// A llama-server started without --metrics answers its health route (up)
// and 501 on /metrics: the screen's badge says DEGRADED, and so do
// diagnose and snapshot (they printed the health route's "up" beside the
// error), each from the core's one word.
func TestEveryFaceSaysDegradedForLlamaWithoutMetrics(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	id := model.Identity{Engine: model.LlamaCpp, Version: "b1-de3ff81", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "small.gguf"}}}
	var scrapes []model.Scrape
	for i := 0; i < 3; i++ {
		scrapes = append(scrapes, model.Scrape{Endpoint: url, Time: t0.Add(time.Duration(i) * time.Second), Identity: id,
			Err: url + "/metrics: 501 Not Implemented", ErrKind: model.ErrServer, Hint: "start llama-server with --metrics"})
	}
	cfg := config.DiagnosisConfig(config.DefaultThresholds)

	m := tui.New(tui.Options{Endpoints: []string{url}, Now: t0, NoColor: true})
	for _, sc := range scrapes {
		m.Update(sc)
	}
	badge, _ := m.Data().Health(m.Data().Info(url))

	w := newWatch([]string{url}, cfg)
	w.start = t0.Add(-time.Second)
	var rep diagnosis.Report
	for _, sc := range scrapes {
		w.onScrape(sc)
		rep = w.evaluate(sc.Time)
	}
	var diag strings.Builder
	printDiagnosis(&diag, w.result(rep))

	doc := buildSnapshot(scrapes[2].Time, []endpointResult{{url: url, scrapes: scrapes}}, cfg, nil)
	var snap strings.Builder
	printSnapshot(&snap, doc.SnapshotJSON)

	if badge != "DEGRADED" {
		t.Fatalf("the screen's badge %q, want DEGRADED", badge)
	}
	if !strings.Contains(diag.String(), "b1-de3ff81  DEGRADED  error: ") {
		t.Errorf("diagnose does not say DEGRADED:\n%s", diag.String())
	}
	if first, _, _ := strings.Cut(snap.String(), "\n"); !strings.HasSuffix(first, "  DEGRADED") || doc.Endpoints[0].Status != "DEGRADED" {
		t.Errorf("snapshot does not say DEGRADED:\n%s", snap.String())
	}
}
