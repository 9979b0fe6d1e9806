package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sim"
)

// The simulator's api-server-cpu scenario burns a real core on a thread
// named APIServer in this process (it holds the endpoint's port, as vLLM's
// API server does): the diagnose watch, reading /proc, names that process
// and thread, with vLLM's lever, within 45 s.
func TestDiagnoseNamesTheBusyAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("burns a core for up to 45 s")
	}
	s, err := sim.New(sim.Config{Scenario: sim.APIServerCPU, Background: true, Seed: 3, StartupTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	cfg := diagnosis.DefaultConfig()
	cfg.MaxHold = 20 * time.Second
	w := newWatch([]string{srv.URL}, cfg)
	w.simGPU = func() session.SimGPULoad {
		l := s.Load()
		return session.SimGPULoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
	}
	w.open(time.Second) // before it runs: this goroutine reads its core
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.run(ctx, 45*time.Second, time.Second)
	}()
	var found *diagnosis.Finding
	for found == nil && time.Since(start) < 46*time.Second {
		time.Sleep(500 * time.Millisecond)
		w.do(func() {
			for _, f := range w.mon.Report().Findings {
				if f.ID == "api_server_cpu" {
					f := f
					found = &f
				}
			}
		})
	}
	took := time.Since(start)
	cancel()
	<-done
	if found == nil {
		rep := w.mon.Report() // the watch has ended: the core is ours
		h := w.mon.Endpoint(srv.URL).Host
		t.Logf("host %+v", h)
		t.Fatalf("no api_server_cpu finding in 45 s; findings %v, pending %+v, missing %v", findingIDs(rep.Findings), rep.Pending, rep.Missing)
	}
	t.Logf("api_server_cpu after %v: %s", took.Round(100*time.Millisecond), found.Title)
	ev := ""
	for _, e := range found.Evidence {
		ev += e.Text + "\n"
	}
	want := fmt.Sprintf(`thread %q (TID `, sim.FrontThreadName)
	if !strings.Contains(ev, want) || !strings.Contains(ev, fmt.Sprintf("of PID %d", os.Getpid())) || !strings.Contains(ev, "the engine has room") && !strings.Contains(ev, "GPU utilisation") {
		t.Errorf("evidence does not name the process and thread (%s, PID %d):\n%s", want, os.Getpid(), ev)
	}
	if len(found.Actions) == 0 || !strings.Contains(found.Actions[0].Change, "--api-server-count") {
		t.Errorf("actions %+v", found.Actions)
	}
}

func findingIDs(fs []diagnosis.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}
