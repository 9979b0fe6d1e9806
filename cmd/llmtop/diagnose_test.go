package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
)

// decoded is the JSON document as a script reads it (severity is a word;
// model.Severity only marshals).
type decoded struct {
	Status    string `json:"status"`
	ExitCode  int    `json:"exit_code"`
	Simulated bool   `json:"simulated"`
	Endpoints []struct {
		URL      string `json:"url"`
		Answered bool   `json:"answered"`
		Runs     []struct {
			N         int    `json:"n"`
			End       string `json:"end"`
			StartedBy string `json:"started_by"`
			Summary   struct {
				ServedS    float64  `json:"served_s"`
				RequestsPS *float64 `json:"requests_per_s"`
			} `json:"summary"`
		} `json:"runs"`
	} `json:"endpoints"`
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Evidence []struct {
			Text   string `json:"text"`
			Source string `json:"source"`
		} `json:"evidence"`
		Actions []struct {
			Change string `json:"change"`
		} `json:"actions"`
	} `json:"findings"`
	Closed  []json.RawMessage `json:"closed"`
	Checked []string          `json:"checked"`
	Missing []string          `json:"missing"`
}

// diagnoseOnce runs `llmtop diagnose --json --duration d` against urls and
// returns the decoded result and the exit code.
func diagnoseOnce(t *testing.T, d time.Duration, args ...string) (decoded, int) {
	t.Helper()
	cmd, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	defer cmd.SetOut(nil)
	diagnoseFlags.duration, diagnoseFlags.json = d, true
	defer func() { diagnoseFlags.duration, diagnoseFlags.json = 30*time.Second, false }()
	err = runDiagnose(context.Background(), cmd, args)
	code := 0
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	} else if err != nil {
		t.Fatal(err)
	}
	var res decoded
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.ExitCode != code {
		t.Errorf("JSON exit_code %d, process %d", res.ExitCode, code)
	}
	return res, code
}

func TestDiagnoseUnreachableExits3(t *testing.T) {
	res, code := diagnoseOnce(t, 2500*time.Millisecond, "http://127.0.0.1:1")
	if code != 3 || res.Status != "unreachable" || res.Endpoints[0].Answered {
		t.Fatalf("code %d %+v", code, res)
	}
	if len(res.Findings) == 0 || res.Findings[0].ID != "endpoint_down" || res.Findings[0].Severity != "crit" {
		t.Fatalf("findings %+v", res.Findings)
	}
	if res.Closed == nil {
		t.Error(`"closed" is null, want []`)
	}
}

// serveSim serves the simulator on the real clock in scenario, with its
// background traffic, until the test ends; it returns the base URL.
func serveSim(t *testing.T, scenario string) string {
	t.Helper()
	s, err := sim.New(sim.Config{Scenario: scenario, Background: true, Seed: 3, StartupTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// The simulator on the real clock: a healthy engine exits 0 and says what
// it checked; one whose /metrics is broken exits 1 with that finding.
func TestDiagnoseAgainstTheSimulator(t *testing.T) {
	healthy, broken := serveSim(t, sim.Healthy), serveSim(t, sim.MetricsBroken)
	time.Sleep(200 * time.Millisecond) // the simulated engine starts

	res, code := diagnoseOnce(t, 3*time.Second, healthy)
	if code != 0 || res.Status != "ok" || len(res.Findings) != 0 || !res.Simulated {
		t.Fatalf("healthy: code %d %+v", code, res)
	}
	if len(res.Checked) < 10 || !strings.Contains(strings.Join(res.Missing, "\n"), "benchmark") {
		t.Fatalf("healthy: checked %v missing %v", res.Checked, res.Missing)
	}

	res, code = diagnoseOnce(t, 3*time.Second, broken)
	if code != 1 || len(res.Findings) == 0 || res.Findings[0].ID != "metrics_unavailable" {
		t.Fatalf("metrics-broken: code %d %+v", code, res.Findings)
	}
}

func TestDiagnoseTextNamesEvidenceCauseAndActions(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	res := diagnoseResult{WatchedS: 30, Status: "crit", ExitCode: 2, SLOTTFTms: 200, SLOITLms: 50,
		Endpoints: []diagnoseEndpoint{{URL: "http://a:8000", Engine: model.VLLM, Version: "0.11.0", Health: model.HealthUp, Answered: true}},
		Findings: []diagnosis.Finding{{ID: "kv_preemption", Endpoint: "http://a:8000", Category: diagnosis.Memory, Severity: model.SevCrit,
			Title:    "KV pressure: 3.2/s preemptions",
			Evidence: []diagnosis.Evidence{{Text: "preemptions 3.2/s > 1/s", Source: "vllm:num_preemptions_total", Window: time.Minute}},
			Cause:    "the pool is too small",
			Actions:  []diagnosis.Action{{Change: "--gpu-memory-utilization 0.95", Why: "GPU 0 has 8 GiB free", TradeOff: "less activation room"}},
			Opened:   at}},
		Closed:  []diagnosis.Finding{{ID: "endpoint_down", Severity: model.SevCrit, Title: "endpoint down", Opened: at.Add(-time.Minute), Closed: at}},
		Checked: []string{"every endpoint answers"}, Missing: []string{"GPU readings (no NVML driver or --no-gpu)"}}
	var b bytes.Buffer
	printDiagnosis(&b, res)
	out := b.String()
	for _, want := range []string{
		// the SLO set by --slo-tpot, named as the monitor's pane names it
		// (its header said "ITL p99", the pane "TPOT p99", the flag tpot)
		"(SLO: TTFT p99 ≤ 200 ms, TPOT/ITL p99 ≤ 50 ms)",
		"1. CRIT  KV pressure: 3.2/s preemptions  kv_preemption  [http://a:8000]",
		"· preemptions 3.2/s > 1/s  (vllm:num_preemptions_total, 1m)",
		"cause: the pool is too small",
		"try 1: --gpu-memory-utilization 0.95",
		"why: GPU 0 has 8 GiB free; trade-off: less activation room",
		"CRIT endpoint_down  endpoint down (04:59:00–05:00:00)",
		"Checked: every endpoint answers.",
		"  - GPU readings (no NVML driver or --no-gpu)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
