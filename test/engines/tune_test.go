//go:build engines

package engines

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tuneTrail is the part of `llmtop tune`'s trail the test reads.
type tuneTrail struct {
	Steps []struct {
		N       int      `json:"n"`
		Finding string   `json:"finding"`
		Diff    []string `json:"diff"`
		Command string   `json:"command"`
		Kept    bool     `json:"kept"`
		Why     string   `json:"why"`
		Measure struct {
			Served    bool     `json:"served"`
			Completed int      `json:"completed"`
			TTFTp99ms *float64 `json:"ttft_p99_ms"`
		} `json:"measure"`
	} `json:"steps"`
	Noise struct {
		Threshold float64 `json:"threshold"`
		How       string  `json:"how"`
	} `json:"noise"`
}

// llmtop tune on the real llama-server: started with one slot (-np 1)
// under 8 concurrent streams, the slots finding asks for more; tune changes
// -np on the command line it launched, restarts the engine, and measures
// both runs at the same load.
func TestTuneLlamaServerChangesNp(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trailPath := filepath.Join(dir, "trail.json")
	out, stderr, code := runLLMTop(t, 6*time.Minute, "tune", "--no-gpu", "--steps", "1", "--watch", "45s", "--duration", "15s", "--streams", "8",
		"--stop-timeout", "10s", "--log-dir", dir, "--trail", trailPath, "--",
		bin, "-m", modelPath, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--metrics", "-t", "1", "--no-webui", "-np", "1", "-c", "4096")
	t.Logf("llmtop tune (exit %d):\n%s\n%s", code, out, stderr)
	if code != 0 {
		t.Fatalf("llmtop tune exited %d", code)
	}
	b, err := os.ReadFile(trailPath)
	if err != nil {
		t.Fatal(err)
	}
	var tr tuneTrail
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("trail: %v\n%s", err, b)
	}
	if len(tr.Steps) < 2 {
		t.Fatalf("tune tried no change: %s", b)
	}
	first, step := tr.Steps[0], tr.Steps[1]
	if !strings.Contains(strings.Join(step.Diff, " "), "-np 1 → ") || !strings.Contains(step.Command, "--parallel") && !strings.Contains(step.Command, "-np ") {
		t.Errorf("step 1 did not change -np: %+v", step)
	}
	if !first.Measure.Served || first.Measure.Completed == 0 || !step.Measure.Served || step.Measure.Completed == 0 {
		t.Errorf("both runs must be measured at the same load: before %+v, after %+v", first.Measure, step.Measure)
	}
	if step.Why == "" || tr.Noise.How == "" {
		t.Errorf("the decision and the noise must say why: %+v, %+v", step, tr.Noise)
	}
}
