package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
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

// --slo-ttft (a flag of every command) reaches the rules: the same healthy simulator that exits 0
// under the default 200 ms objective is judged against 1 ms and warns.
//
// The rule needs the simulator's TTFT histogram to have moved between
// scrapes, and then holds for half the watch: on a busy machine (the
// simulator in this process, under the race detector) a short watch can end
// before that. A watch without a TTFT finding is watched again, longer,
// until a deadline; the assertions are on the last.
func TestDiagnoseSLOFlag(t *testing.T) {
	url := serveSim(t, sim.Healthy)
	waitHealthy(t, url)

	fs := root.PersistentFlags()
	if err := fs.Set("slo-ttft", "1ms"); err != nil {
		t.Fatal(err)
	}
	// A loose TPOT objective: on a loaded machine the sim's ITL passes the
	// default 50 ms, and a TTFT breach beside an ITL breach is handed to the
	// ITL rule (the TTFT finding this test looks for never opens).
	if err := fs.Set("slo-tpot", "10s"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{"slo-ttft", "slo-tpot"} {
			f := fs.Lookup(name)
			_ = f.Value.Set(f.DefValue)
			f.Changed = false
		}
	})

	ttftFinding := func(res decoded) bool {
		for _, f := range res.Findings {
			// A 1 ms objective is breached 10× and more on a busy machine:
			// that is critical (issue 14 item 12), so either severity.
			if (f.Severity == "warn" || f.Severity == "crit") && (f.ID == "ttft_high" || f.ID == "ttft_queueing" || f.ID == "ttft_prefill") {
				return true
			}
		}
		return false
	}
	var res decoded
	var code int
	deadline := time.Now().Add(90 * time.Second)
	for watch := 5 * time.Second; ; watch *= 2 {
		res, code = diagnoseOnce(t, watch, url)
		if ttftFinding(res) || time.Now().Add(2*watch).After(deadline) {
			break
		}
		t.Logf("a %s watch judged no TTFT yet (a busy machine?): watching again for %s", watch, 2*watch)
	}
	if (code != 1 || res.Status != "warn") && (code != 2 || res.Status != "crit") {
		t.Fatalf("TTFT objective 1ms: code %d status %q findings %+v", code, res.Status, res.Findings)
	}
	if !ttftFinding(res) {
		t.Fatalf("no TTFT finding against a 1 ms objective: %+v", res.Findings)
	}
}

// waitHealthy waits (20 s at most) until url's /health answers 200.
func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/health did not answer 200 within 20 s", url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The --slo-* flags win over the config file's [thresholds]; a zero or
// negative objective is refused with the flag's name.
func TestSLOFlagsOverTheConfigFile(t *testing.T) {
	path := t.TempDir() + "/config.toml"
	if err := os.WriteFile(path, []byte("[thresholds]\nttft_p99_ms = 500\nitl_p99_ms = 80\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := root.PersistentFlags()
	reset := func() {
		for name, def := range map[string]string{"slo-ttft": "200ms", "slo-tpot": "50ms"} {
			_ = fs.Set(name, def)
			fs.Lookup(name).Changed = false
		}
	}
	t.Cleanup(reset)

	c, err := loadConfig(path)
	if err != nil || c.Thresholds.TTFTp99 != 500*time.Millisecond || c.Thresholds.ITLp99 != 80*time.Millisecond {
		t.Fatalf("file alone: %v %+v", err, c.Thresholds)
	}
	if err := fs.Set("slo-ttft", "300ms"); err != nil {
		t.Fatal(err)
	}
	c, err = loadConfig(path)
	if err != nil || c.Thresholds.TTFTp99 != 300*time.Millisecond || c.Thresholds.ITLp99 != 80*time.Millisecond {
		t.Fatalf("--slo-ttft 300ms over the file: %v %+v", err, c.Thresholds)
	}
	if got := diagnoseConfig(c.Thresholds, 30*time.Second); got.SLOTTFT != 300*time.Millisecond || got.SLOITL != 80*time.Millisecond {
		t.Fatalf("diagnosis config %v %v", got.SLOTTFT, got.SLOITL)
	}
	if err := fs.Set("slo-tpot", "0s"); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(path); err == nil || !strings.Contains(err.Error(), "--slo-tpot") {
		t.Fatalf("--slo-tpot 0s: %v", err)
	}
}

// An endpoint that answers 401 to everything answered: diagnose names the
// auth problem and exits 1, not 3 (unreachable), which would send the
// reader to the network.
func TestDiagnoseAuthIsNotUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid api key"}`, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	// The finding holds for half the watch: a watch that judged nothing
	// yet (a busy machine) is watched again, longer.
	var res decoded
	var code int
	deadline := time.Now().Add(60 * time.Second)
	for watch := 5 * time.Second; ; watch *= 2 {
		res, code = diagnoseOnce(t, watch, srv.URL)
		if code == 3 || res.Status == "unreachable" || len(res.Endpoints) != 1 || !res.Endpoints[0].Answered {
			t.Fatalf("code %d status %q endpoints %+v", code, res.Status, res.Endpoints)
		}
		if len(res.Findings) > 0 || time.Now().Add(2*watch).After(deadline) {
			break
		}
	}
	found := false
	for _, f := range res.Findings {
		for _, a := range f.Actions {
			found = found || strings.Contains(a.Change, "--api-key")
		}
	}
	if code != 1 || !found {
		t.Errorf("code %d, findings %+v: want 1 (warn) and a finding that says --api-key", code, res.Findings)
	}
}
