//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/launch"
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

// An action's environment variable applied to the real Ollama that llmtop
// launched: OLLAMA_NUM_PARALLEL=2 is a change of the launch
// (`llmtop run -- OLLAMA_NUM_PARALLEL=1 … ollama serve`); the restart runs
// Ollama with it (its own "server config" line and /proc say so), and undo
// restarts it with the environment before.
func TestLaunchAppliesOllamaNumParallel(t *testing.T) {
	bin := engineBin(t, "LLMTOP_OLLAMA")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(workDir, "ollama-launch-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(workDir, "ollama-launch.log")
	env := []string{"OLLAMA_HOST=127.0.0.1:" + strconv.Itoa(port), "OLLAMA_MODELS=" + filepath.Join(home, "models"), "HOME=" + home,
		"OLLAMA_NO_CLOUD=1", "OLLAMA_NUM_PARALLEL=1"}
	s, err := launch.NewSession([]string{bin, "serve"}, env, log, "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var pgids []string // each start, ended by its id if this test binary is killed
	defer func() {
		s.Current().Stop(10 * time.Second)
		for _, f := range pgids {
			_ = os.Remove(f)
		}
	}()
	serving := func(what string) {
		t.Helper()
		if d := runDir(); d != "" {
			pid := s.Current().PID
			f := filepath.Join(d, fmt.Sprintf("ollama-launch-%d.pgid", pid))
			if os.WriteFile(f, []byte(strconv.Itoa(pid)), 0o644) == nil {
				pgids = append(pgids, f)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		if err := s.WaitServing(ctx); err != nil {
			b, _ := os.ReadFile(log)
			t.Fatalf("%s: %v\n%s", what, err, b)
		}
	}
	// configs are the NUM_PARALLEL values of Ollama's "server config" lines so far.
	configs := func() []string {
		b, _ := os.ReadFile(log)
		var out []string
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "server config") {
				continue
			}
			_, v, ok := strings.Cut(line, "OLLAMA_NUM_PARALLEL:")
			if !ok {
				t.Fatalf("Ollama's server config line has no OLLAMA_NUM_PARALLEL: %s", line)
			}
			out = append(out, strings.Fields(v)[0])
		}
		return out
	}
	procEnv := func() string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.Current().PID))
		for _, kv := range strings.Split(string(b), "\x00") {
			if strings.HasPrefix(kv, "OLLAMA_NUM_PARALLEL=") {
				return kv
			}
		}
		return ""
	}
	serving("the first start")
	p := s.PlanFor("concurrency_cap", []string{"add a replica behind a router or load balancer", "OLLAMA_NUM_PARALLEL=2"})
	if !p.OK() || launch.Describe(p.Diff) != "OLLAMA_NUM_PARALLEL 1 → 2" || len(p.NotApplied) != 1 {
		t.Fatalf("plan %+v", p)
	}
	if _, st, err := s.Restart(p, func(string) {}); err != nil || st.Killed {
		t.Fatalf("restart: %v (%s)", err, st)
	}
	serving("after OLLAMA_NUM_PARALLEL=2")
	if got := procEnv(); got != "OLLAMA_NUM_PARALLEL=2" {
		t.Errorf("the restarted Ollama's environment has %q", got)
	}
	u, ok := s.PlanUndo()
	if !ok || launch.Describe(u.Diff) != "OLLAMA_NUM_PARALLEL 2 → 1" {
		t.Fatalf("undo %+v", u)
	}
	if _, _, err := s.Restart(u, func(string) {}); err != nil {
		t.Fatal(err)
	}
	serving("after the undo")
	if got := configs(); strings.Join(got, " ") != "1 2 1" {
		t.Errorf("Ollama's own server config said OLLAMA_NUM_PARALLEL %v over the three starts, want 1 2 1", got)
	}
}
