package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/launch"
)

// A change applied from the screen restarts the engine: the core hears of
// it before the engine is stopped (Restarting), so the refused scrapes of
// the drain are the restart, and again once the new process runs. Before,
// only the new process was told, after the stop: the drain read as an
// outage ("scrape failed", DOWN).
func TestRestartTellsTheCoreBeforeItStops(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "engine")
	// an engine that takes its time to drain on SIGTERM, as vLLM does
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntrap 'sleep 0.5; exit 0' TERM\necho \"args: $*\"\nwhile :; do sleep 0.1; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:1"
	s, err := launch.NewSession([]string{script, "--max-num-seqs", "16"}, nil, filepath.Join(dir, "engine.log"), url, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// the process running at the end (Restart replaces the first one)
	defer func() { s.Current().Stop(time.Second) }()
	m := core.New(core.Options{Endpoints: []string{url}, Window: time.Minute})
	var mu sync.Mutex
	var sent []model.Launch
	lifeAtStop := ""
	l := &runLauncher{}
	l.set(s)
	l.send = func(x any) {
		mu.Lock()
		defer mu.Unlock()
		if la, ok := x.(model.Launch); ok {
			sent = append(sent, la)
			m.Apply(la)
			if la.Restarting {
				// what a refused scrape during the drain finds
				m.Apply(model.Scrape{Endpoint: url, Time: time.Now(), Err: "connection refused", ErrKind: model.ErrRefused})
				lifeAtStop = string(m.Endpoint(url).Life) + " " + m.Endpoint(url).LifeDetail
			}
		}
	}
	m.Apply(model.Launch{Endpoint: url, Time: time.Now(), PID: s.Current().PID, Cmdline: "engine --max-num-seqs 16"})
	tp := l.Plan("queue_backlog", []string{"--max-num-seqs 32"})
	if !tp.OK {
		t.Fatalf("plan %+v", tp)
	}
	old := s.Current()
	if err := l.Restart(tp, func(string) {}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 2 || !sent[0].Restarting || sent[0].PID != old.PID || sent[1].Restarting || sent[1].PID != s.Current().PID {
		t.Fatalf("launches %+v: want the restart told before the stop (the old pid), then the new process", sent)
	}
	if sent[0].Applied != "applied: queue_backlog → --max-num-seqs 16 → 32" || sent[1].Applied != sent[0].Applied {
		t.Errorf("applied %q, %q", sent[0].Applied, sent[1].Applied)
	}
	if !strings.HasPrefix(lifeAtStop, "starting restarting (applied: queue_backlog") {
		t.Errorf("while the engine drains the endpoint is %q, want starting, restarting (applied …)", lifeAtStop)
	}
	for i := 0; i < m.Events().Len(); i++ {
		if x := m.Events().Newest(i); x.Kind == "scrape_failed" && x.Severity == model.SevCrit {
			t.Errorf("outage event during llmtop's restart: %q", x.Title)
		}
	}
}
