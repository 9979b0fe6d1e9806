package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// An engine whose API answers but whose /health says 503 (vLLM after
// EngineDeadError) is critical: exit 2, not the unreachable 3.
func TestDiagnoseUnhealthyExits2(t *testing.T) {
	fake := enginetest.New(model.VLLM)
	fake.Health.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)

	res, code := diagnoseOnce(t, 2500*time.Millisecond, srv.URL)
	if code != 2 || res.Status != "crit" || !res.Endpoints[0].Answered {
		t.Fatalf("code %d status %q endpoints %+v", code, res.Status, res.Endpoints)
	}
	if len(res.Findings) == 0 || res.Findings[0].ID != "health_unhealthy" || res.Findings[0].Severity != "crit" {
		t.Fatalf("findings %+v", res.Findings)
	}
}

// --slo-ttft reaches the rules: the same healthy simulator that exits 0
// under the default 200 ms objective is judged against 1 ms and warns.
func TestDiagnoseSLOFlag(t *testing.T) {
	s, err := sim.New(sim.Config{Scenario: sim.Healthy, Background: true, Seed: 3, StartupTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	time.Sleep(200 * time.Millisecond) // the simulated engine starts

	cmd, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Flags().Set("slo-ttft", "1ms"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Flags().Set("slo-ttft", "200ms")
		cmd.Flags().Lookup("slo-ttft").Changed = false
	})

	res, code := diagnoseOnce(t, 5*time.Second, srv.URL)
	if code != 1 || res.Status != "warn" {
		t.Fatalf("TTFT objective 1ms: code %d status %q findings %+v", code, res.Status, res.Findings)
	}
	found := false
	for _, f := range res.Findings {
		if f.Severity == "warn" && (f.ID == "ttft_high" || f.ID == "ttft_queueing" || f.ID == "ttft_prefill") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no TTFT finding against a 1 ms objective: %+v", res.Findings)
	}
}
