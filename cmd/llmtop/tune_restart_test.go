package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/launch"
)

// startingOnly feeds w's core secs seconds of refused scrapes (an engine
// loading its model, not listening yet) and says what a person would read
// as an outage: critical scrape-failed events and critical findings.
func startingOnly(t *testing.T, w *watch, secs int) []string {
	t.Helper()
	u := model.RedactURL(w.urls[0])
	var out []string
	now := time.Now()
	for s := 0; s < secs; s++ {
		at := now.Add(time.Duration(s) * time.Second)
		w.mon.Apply(model.Scrape{Endpoint: u, Time: at, Err: "dial tcp: connect: connection refused", ErrKind: model.ErrRefused,
			Identity: model.Identity{Health: model.HealthDown}})
		w.mon.Tick(at)
	}
	for i := 0; i < w.mon.Events().Len(); i++ {
		if x := w.mon.Events().Newest(i); x.Severity == model.SevCrit {
			out = append(out, x.Kind+": "+x.Title)
		}
	}
	for _, f := range w.evaluate(now.Add(time.Duration(secs) * time.Second)).Findings {
		if f.Severity == model.SevCrit {
			out = append(out, f.ID+": "+f.Title)
		}
	}
	return out
}

// llmtop tune restarts the engine it launched at every step, as llmtop run
// does from the screen, and watches each configuration with a new core.
// That core was told nothing: the engine loading after tune started or
// restarted it read as an outage (DOWN, critical "scrape failed"), with no
// word of the change it runs with. Now each watch's core hears what
// llmtop run's hears (model.Launch: the first start; a restart's
// Restarting, then the new process), and a restart that could not start
// the engine again says so.
func TestTuneTellsTheCoreOfItsRestarts(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "engine")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntrap 'exit 0' TERM\necho \"args: $*\"\nwhile :; do sleep 0.1; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := launch.NewSession([]string{script, "--max-num-seqs", "16"}, nil, filepath.Join(dir, "step-0.log"), "http://127.0.0.1:1", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Current().Stop(time.Second) }()
	tn := &tuner{s: s, out: io.Discard, cfg: tuneDiagnoseConfig(config.DefaultThresholds, time.Minute, 20*time.Second),
		told: []model.Launch{launchOf(model.RedactURL(s.URL), s.Current(), s.Current().Started, "")}}

	// step 0: the engine tune launched, loading
	w := tn.watchEngine()
	if got := startingOnly(t, w, 20); len(got) > 0 {
		t.Errorf("the first start read as an outage: %q", got)
	}
	if ep := w.mon.Endpoint(model.RedactURL(s.URL)); ep.Life != model.LifeStarting || !strings.HasPrefix(ep.LifeDetail, "launched by llmtop") {
		t.Errorf("first start: life %s %q, want starting, launched by llmtop", ep.Life, ep.LifeDetail)
	}

	// step 1: a change applied, the engine restarted and loading again
	plan := s.PlanFor("queue_backlog", []string{"--max-num-seqs 32"})
	if err := tn.restart(plan); err != nil {
		t.Fatal(err)
	}
	w = tn.watchEngine()
	if got := startingOnly(t, w, 20); len(got) > 0 {
		t.Errorf("tune's restart read as an outage: %q", got)
	}
	const applied = "applied: queue_backlog → --max-num-seqs 16 → 32"
	if ep := w.mon.Endpoint(model.RedactURL(s.URL)); ep.Life != model.LifeStarting || !strings.HasPrefix(ep.LifeDetail, "restarting ("+applied+"): pid ") {
		t.Errorf("after the restart: life %s %q, want starting, restarting (%s): pid …", ep.Life, ep.LifeDetail, applied)
	}
	if len(tn.told) != 2 || !tn.told[0].Restarting || tn.told[1].PID != s.Current().PID || tn.told[1].Applied != applied {
		t.Errorf("told %+v: want the restart (before the stop), then the new process with the change", tn.told)
	}

	// a restart that stops the engine and cannot start it again
	bad := launch.Plan{Finding: "x", Old: s.Args(), OldEnv: s.Env(), New: []string{filepath.Join(dir, "no-such-engine")}, Diff: []string{"--y 1 → 2"}}
	err = tn.restart(bad)
	if err == nil || !strings.Contains(err.Error(), "could not start it again") {
		t.Fatalf("failed restart: %v", err)
	}
	w = tn.watchEngine()
	if ep := w.mon.Endpoint(model.RedactURL(s.URL)); ep.Life != model.LifeStopped || !strings.Contains(ep.LifeDetail, "could not start it again") {
		t.Errorf("after a failed restart: life %s %q", ep.Life, ep.LifeDetail)
	}
	said := false
	for i := 0; i < w.mon.Events().Len(); i++ {
		said = said || w.mon.Events().Newest(i).Kind == "restart_failed"
	}
	if !said {
		t.Error("a restart that could not start the engine is not said")
	}
}
