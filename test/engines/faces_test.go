//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Two llama-servers serve the same GGUF, the second started without --metrics (its /metrics answers
// 501). The monitor's badge says DEGRADED for it; diagnose and snapshot said "up" beside the 501,
// and the replica checks said "fewer than two endpoints serve the same model". Both faces now say
// the core's word, and the replica line says who serves the model and who has no metrics.
func TestLlamaServerWithoutMetrics(t *testing.T) {
	lit := llama(t)
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", lit.Model, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "-t", "1", "--no-webui"}
	p, err := startProc("llama-server", bin, args, nil, filepath.Join(workDir, "llama-server-nometrics.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	dark := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := waitHTTP(ctx, p, dark+"/health"); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := getText(ctx, dark+"/metrics"); code != 501 {
		t.Fatalf("/metrics without --metrics answered %d %.200s, want 501", code, body)
	}

	out, stderr, code := runLLMTop(t, 40*time.Second, "diagnose", "--json", "--no-gpu", "--interval", "500ms", "--timeout", "10s", "--duration", "3s", lit.URL, dark)
	var d struct {
		Endpoints []struct {
			URL    string `json:"url"`
			Status string `json:"status"`
		} `json:"endpoints"`
		Missing []string `json:"missing"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("diagnose --json: exit %d, %v; stderr %s", code, err, stderr)
	}
	status := map[string]string{}
	for _, e := range d.Endpoints {
		status[e.URL] = e.Status
	}
	if status[dark] != "DEGRADED" || status[lit.URL] != "UP" {
		t.Errorf("statuses %v: want %s DEGRADED (no metrics) and %s UP", status, dark, lit.URL)
	}
	want := "replicas (2 endpoints serve "
	var line string
	for _, m := range d.Missing {
		if strings.HasPrefix(m, "replicas (") {
			line = m
		}
	}
	if !strings.HasPrefix(line, want) || !strings.Contains(line, dark+" has no metrics, so they are not compared") {
		t.Errorf("replicas line %q: want two serving the model and %s without metrics", line, dark)
	}

	text, _, _ := runLLMTop(t, 30*time.Second, "snapshot", "--no-gpu", "--interval", "1s", "--timeout", "10s", dark)
	if first, _, _ := strings.Cut(string(text), "\n"); !strings.HasSuffix(first, "  DEGRADED") {
		t.Errorf("snapshot's first line %q: want the core's DEGRADED", first)
	}
}

// After its keep-alive (here: keep_alive 0) Ollama lists the model (/api/tags) but has none loaded
// (/api/ps): the monitor's header says "(not loaded)", and snapshot now does too.
func TestSnapshotOllamaModelNotLoaded(t *testing.T) {
	s := ollama(t)
	unloadOllama(t, s)
	ep := snapshot(t, s.URL)
	if len(ep.NotLoaded) != 1 || !strings.HasPrefix(ep.NotLoaded[0], ollamaModel) {
		t.Errorf("not_loaded %q with nothing in /api/ps, want the %s model", ep.NotLoaded, ollamaModel)
	}
	text, _, _ := runLLMTop(t, 30*time.Second, "snapshot", "--no-gpu", "--interval", "1s", "--timeout", "10s", s.URL)
	if !strings.Contains(string(text), "  model  "+ollamaModel+":latest (not loaded)") {
		t.Errorf("snapshot does not mark the model (not loaded):\n%s", text)
	}
}
