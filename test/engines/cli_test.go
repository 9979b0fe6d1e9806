//go:build engines

package engines

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// runLLMTop runs bin/llmtop with args and returns stdout, stderr and the exit code.
func runLLMTop(t *testing.T, timeout time.Duration, args ...string) ([]byte, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, llmtopBin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(cmd.Environ(), "NO_COLOR=1", "HOME="+workDir) // no user config file
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("llmtop %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("llmtop %v did not finish in %v; stderr: %s", args, timeout, errb.String())
	}
	return out.Bytes(), errb.String(), code
}

func snapshot(t *testing.T, url string) model.EndpointJSON {
	t.Helper()
	out, stderr, code := runLLMTop(t, 30*time.Second, "snapshot", "--json", "--no-gpu", "--interval", "1s", "--timeout", "10s", url)
	var doc model.SnapshotJSON
	if err := json.Unmarshal(out, &doc); err != nil || code != 0 || len(doc.Endpoints) != 1 {
		t.Fatalf("snapshot --json: exit %d, %v, %d endpoints; stderr %s; stdout %.500s", code, err, len(doc.Endpoints), stderr, out)
	}
	return doc.Endpoints[0]
}

func TestSnapshotJSONLlamaServer(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var props llamaProps
	if err := getJSON(ctx, s.URL+"/props", &props); err != nil {
		t.Fatal(err)
	}
	ep := snapshot(t, s.URL)
	if ep.Engine != model.LlamaCpp || ep.Version != props.BuildInfo || ep.Health != model.HealthUp || ep.Error != "" {
		t.Errorf("endpoint %s %q %s err %q; engine says build_info %q", ep.Engine, ep.Version, ep.Health, ep.Error, props.BuildInfo)
	}
	if len(ep.Models) != 1 || ep.Model != ep.Models[0] || !ep.MaxContext.OK || ep.MaxContext.V != float64(props.Settings.NCtx) {
		t.Errorf("models %v model %q max_context %v; engine serves one model with %d tokens per slot", ep.Models, ep.Model, ep.MaxContext, props.Settings.NCtx)
	}
	m := ep.Metrics
	if m == nil {
		t.Fatal("no metrics")
	}
	if !m.Running.OK || m.Running.V != 0 || !m.Waiting.OK || m.Waiting.V != 0 {
		t.Errorf("idle: running %v waiting %v, want 0 and 0", m.Running, m.Waiting)
	}
	if !m.KVCapacityTokens.OK || m.KVCapacityTokens.V != llamaCtx {
		t.Errorf("kv_capacity_tokens %v, want the -c %d", m.KVCapacityTokens, llamaCtx)
	}
	// llama.cpp exposes no TTFT, ITL, queue or request count: null, never 0.
	for name, o := range map[string]model.Opt{"ttft_ms.p99": m.TTFTms.P99, "itl_ms.p99": m.ITLms.P99, "queue_ms.p99": m.Queuems.P99,
		"requests_per_s": m.RequestsPerS, "preemptions_per_s": m.PreemptionsPerS} {
		if o.OK {
			t.Errorf("%s = %v: llama.cpp does not expose it, it must be null", name, o.V)
		}
	}

	// Under load: one more request than slots (cancelled once seen: a client going away frees its slot).
	load, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i <= llamaSlots; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _ = chat(load, s.URL, "", fmt.Sprintf("snapshot load %d", i), 3000, true)
		}(i)
	}
	waitDeferred(t, ctx, s, 1)
	ep = snapshot(t, s.URL)
	if m := ep.Metrics; m == nil || m.Running.V != llamaSlots || m.Waiting.V != 1 {
		t.Fatalf("under load: metrics %+v; engine says %d processing, 1 deferred", m, llamaSlots)
	}
	// Both slots generate during the whole snapshot window, yet llama.cpp's token counters move only
	// when a request ends and predicted_tokens_seconds averages finished requests only.
	g := ep.Metrics.GenerationTokensPerS
	t.Logf("under load: generation_tokens_per_s %v with %d slots generating", g, llamaSlots)
	if !g.OK || g.V <= 0 {
		t.Errorf("generation_tokens_per_s %v while %d slots generate: the adapter must add /slots' in-flight n_decoded "+
			"to tokens_predicted_total, which moves only when a request finishes", g, llamaSlots)
	}
	stop()
	wg.Wait()
}

// waitDeferred waits until llama-server's own metrics show all slots busy and n requests deferred.
func waitDeferred(t *testing.T, ctx context.Context, s *server, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, _ := rawMetrics(t, ctx, s)
		if raw["llamacpp:requests_processing"] == llamaSlots && raw["llamacpp:requests_deferred"] == float64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engine never showed %d processing + %d deferred: %v", llamaSlots, n, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSnapshotJSONOllama(t *testing.T) {
	s := ollama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := chat(ctx, s.URL, ollamaModel, "snapshot", 4, false); err != nil {
		t.Fatal(err)
	}
	ep := snapshot(t, s.URL)
	if ep.Engine != model.Ollama || ep.Version != s.Version || ep.Health != model.HealthUp || ep.Error != "" {
		t.Errorf("endpoint %s %q %s err %q hint %q; want ollama %s up", ep.Engine, ep.Version, ep.Health, ep.Error, ep.Hint, s.Version)
	}
	if ep.Model != ollamaModel+":latest" || !ep.MaxContext.OK || ep.MaxContext.V != 4096 {
		t.Errorf("model %q (models %v) max_context %v; /api/ps says %s:latest with context_length 4096", ep.Model, ep.Models, ep.MaxContext, ollamaModel)
	}
	// Ollama exposes no running/waiting/throughput: null, never 0.
	if m := ep.Metrics; m != nil {
		for name, o := range map[string]model.Opt{"running": m.Running, "waiting": m.Waiting, "generation_tokens_per_s": m.GenerationTokensPerS,
			"kv_cache_usage_ratio": m.KVCacheUsageRatio, "ttft_ms.p50": m.TTFTms.P50} {
			if o.OK {
				t.Errorf("%s = %v: Ollama does not expose it, it must be null", name, o.V)
			}
		}
	}
	if ep.Info["expires_at"] == "" || ep.Info["size_vram"] != "0" {
		t.Errorf("info %v: want expires_at and size_vram 0 (CPU) from /api/ps", ep.Info)
	}
	// A CPU-only run offloads nothing: the note says CPU, not "CPU offload".
	notes := strings.Join(ep.Notes, " | ")
	if !strings.Contains(notes, "running on CPU (no VRAM)") || strings.Contains(notes, "offload") {
		t.Errorf("notes %q: size_vram 0 should read \"running on CPU (no VRAM)\", not an offload", notes)
	}
}

// diagnoseJSON is the part of `llmtop diagnose --json` the tests read.
type diagnoseJSON struct {
	Status    string `json:"status"`
	ExitCode  int    `json:"exit_code"`
	Endpoints []struct {
		Engine   model.Engine `json:"engine"`
		Health   model.Health `json:"health"`
		Answered bool         `json:"answered"`
	} `json:"endpoints"`
	Findings []struct {
		ID       string `json:"id"`
		Severity string `json:"severity"`
		Title    string `json:"title"`
		Cause    string `json:"cause"`
		Actions  []struct {
			Change string `json:"change"`
		} `json:"actions"`
	} `json:"findings"`
	Missing []string `json:"missing"`
}

// diagnose runs `llmtop diagnose --json` on url for watch, following the engine's log file when
// logPath is set.
func diagnose(t *testing.T, url, logPath string, watch time.Duration) (diagnoseJSON, int, []byte) {
	t.Helper()
	args := []string{"diagnose", "--json", "--no-gpu", "--interval", "500ms", "--timeout", "10s", "--duration", watch.String(), url}
	if logPath != "" {
		args = append(args, "--log", logPath)
	}
	out, stderr, code := runLLMTop(t, watch+30*time.Second, args...)
	var d diagnoseJSON
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("diagnose --json: exit %d, %v; stderr %s; stdout %.500s", code, err, stderr, out)
	}
	if d.ExitCode != code {
		t.Errorf("JSON says exit_code %d, the process exited %d", d.ExitCode, code)
	}
	if logPath != "" {
		for _, m := range d.Missing {
			if strings.Contains(m, "engine log") {
				t.Errorf("--log %s given, yet diagnose says the log is missing: %q", logPath, m)
			}
		}
	}
	return d, code, out
}

func TestDiagnoseLlamaServer(t *testing.T) {
	s := llama(t)
	// Idle, with its real log attached: a healthy engine's startup lines raise nothing.
	d, code, _ := diagnose(t, s.URL, s.Proc.logPath, 3*time.Second)
	if code != 0 || d.Status != "ok" || len(d.Findings) != 0 || len(d.Endpoints) != 1 || d.Endpoints[0].Engine != model.LlamaCpp || !d.Endpoints[0].Answered {
		t.Errorf("idle llama-server: exit %d status %q findings %+v endpoints %+v; want 0, ok, none", code, d.Status, d.Findings, d.Endpoints)
	}

	// Twice as many concurrent requests as slots, for the whole watch: requests wait for a slot.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 2*llamaSlots; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _ = chat(ctx, s.URL, "", fmt.Sprintf("diagnose load %d", i), 3000, true) // cancelled below
		}(i)
	}
	waitDeferred(t, ctx, s, llamaSlots)
	d, code, out := diagnose(t, s.URL, "", 6*time.Second)
	cancel()
	wg.Wait()
	found := false
	for _, f := range d.Findings {
		if f.ID == "concurrency_cap" {
			found = true
			t.Logf("%s: %s; %s; actions %+v", f.ID, f.Title, f.Cause, f.Actions)
			// An explicit -np turns the unified KV cache off and splits -c:
			// the advice keeps -c with -kvu (issue 14 item 16). With no
			// request finished in the watch the per-token latency is
			// unknown, and the cap is raised only once it is seen (item 10).
			want := fmt.Sprintf("-np %d -kvu (keep -c %d)", 2*llamaSlots, llamaCtx)
			guarded := "-np N -kvu (keep -c) higher only once ITL/TPOT is seen"
			all := ""
			for _, a := range f.Actions {
				all += a.Change + "\n"
			}
			if !strings.Contains(all, want) && !strings.Contains(all, guarded) {
				t.Errorf("concurrency_cap advises %+v; want %q, or %q while TPOT is unknown", f.Actions, want, guarded)
			}
			if strings.Contains(all, fmt.Sprintf("-c %d", 2*llamaCtx)) {
				t.Errorf("concurrency_cap multiplies -c: %+v", f.Actions)
			}
		}
	}
	if !found {
		t.Errorf("every slot busy and %d requests deferred for the whole 6s watch, but diagnose exits %d with findings %+v; want concurrency_cap: %.3000s",
			llamaSlots, code, d.Findings, out)
	}
	if code == 3 || len(d.Endpoints) != 1 || !d.Endpoints[0].Answered {
		t.Errorf("under load: exit %d endpoints %+v: %s", code, d.Endpoints, out)
	}
}

func TestDiagnoseOllama(t *testing.T) {
	s := ollama(t)
	d, code, out := diagnose(t, s.URL, s.Proc.logPath, 3*time.Second)
	if code != 0 || len(d.Endpoints) != 1 || d.Endpoints[0].Engine != model.Ollama || d.Endpoints[0].Health != model.HealthUp {
		t.Errorf("idle Ollama: exit %d: %s", code, out)
	}
	for _, f := range d.Findings {
		if f.ID == "metrics_unavailable" {
			t.Errorf("Ollama has no /metrics by design, yet diagnose reports %+v", f)
		}
	}
}
