package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/tui"
)

// gpuFindings are the findings about GPUs (category gpu), as "endpoint id".
func gpuFindings(fs []diagnosis.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Category == diagnosis.GPU {
			out = append(out, f.Endpoint+" "+f.ID)
		}
	}
	slices.Sort(out)
	return out
}

// Issue 30: snapshot given the simulated GPUs the demo uses (the GPU
// source over the simulator's load, as `llmtop demo` builds it) reports the
// same GPU findings the monitor shows for them. Before, snapshot read the
// GPUs outside the core: its document listed them, but no GPU rule ran.
func TestSnapshotJudgesTheGPUsAsTheMonitorDoes(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clk := sim.NewFakeClock(start)
	s, err := sim.New(sim.Config{Scenario: "queue-buildup:60s", Background: true, Seed: 7, StartupTime: time.Millisecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	cfg, err := engineConfig(srv.URL, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The demo's GPUs: the simulator's load, through the GPU source.
	gs, err := newGPUSource(&session.Env{Interval: time.Second, SimGPU: func() session.SimGPULoad {
		l := s.Load()
		// an idle card while requests wait: what gpu_idle_waiting is for
		return session.SimGPULoad{Util: l.Util / 10, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
	}})
	if err != nil || gs == nil {
		t.Fatalf("simulated GPUs: %v", err)
	}
	defer gs.Close()
	th := config.DefaultThresholds
	dcfg := config.DiagnosisConfig(th)
	m := tui.New(tui.Options{Endpoints: []string{srv.URL}, Now: start, NoColor: true, Thresholds: &th})
	var scrapes []model.Scrape
	var gpus []model.GPUSnapshot
	for range 60 {
		if err := s.Advance(time.Second); err != nil {
			t.Fatal(err)
		}
		at := clk.Now()
		sc := engine.ScrapeOnce(context.Background(), cfg)
		sc.Endpoint, sc.Time = srv.URL, at
		for j := range sc.Samples {
			sc.Samples[j].Endpoint, sc.Samples[j].Time = srv.URL, at
		}
		g, _ := gs.Refresh()
		g.Time = at
		scrapes, gpus = append(scrapes, sc), append(gpus, g)
		m.Update(g)
		m.Update(sc)
	}
	last := scrapes[len(scrapes)-1].Time
	b, err := json.Marshal(tui.BuildSnapshot(m.Data()))
	if err != nil {
		t.Fatal(err)
	}
	var fromTUI struct{ Findings []diagnosis.Finding }
	if err := json.Unmarshal(b, &fromTUI); err != nil {
		t.Fatal(err)
	}
	doc := buildSnapshot(last, []endpointResult{{url: srv.URL, scrapes: scrapes}}, dcfg, gpus)
	monitor, snapshot := gpuFindings(fromTUI.Findings), gpuFindings(doc.Findings)
	if len(monitor) == 0 {
		t.Fatalf("the monitor shows no GPU finding for an idle card with a queue: %v", fromTUI.Findings)
	}
	if strings.Join(monitor, "\n") != strings.Join(snapshot, "\n") {
		t.Fatalf("GPU findings differ:\nmonitor  %q\nsnapshot %q", monitor, snapshot)
	}
	if doc.GPU == nil || !doc.GPU.Simulated {
		t.Errorf("the snapshot's document lacks the simulated GPUs: %+v", doc.GPU)
	}
	t.Logf("both: %q", monitor)
}
