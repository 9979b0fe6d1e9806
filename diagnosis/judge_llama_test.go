package diagnosis

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// promValue reads one unlabelled sample from a recorded /metrics file.
func promValue(t *testing.T, file, name string) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "engines", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return x
		}
	}
	t.Fatalf("%s not in %s", name, file)
	return 0
}

// Issue 14 item 16: the real llama-server recording (build b1-de3ff81,
// --metrics -np 2 -c 8192, testdata/engines/llamacpp-metrics.txt) has 2
// requests processing and 1 deferred. Without /slots and /props the slot
// count is unknown, but a deferred request means no slot was free: the
// finding opens with the busy slots as the cap, and the advice keeps -c
// with -kvu (the same build splits -c over an explicit -np: -c 2048 -np 2
// gave each slot 1024 tokens, -np 2 -kvu 2048 each, checked by hand on
// 2026-11-24).
func TestLlamaDeferredWithoutSlots(t *testing.T) {
	running := promValue(t, "llamacpp-metrics.txt", "llamacpp:requests_processing")
	deferred := promValue(t, "llamacpp-metrics.txt", "llamacpp:requests_deferred")
	if running != 2 || deferred != 1 {
		t.Fatalf("recording read %v running, %v deferred", running, deferred)
	}
	e := ep(func(e *Endpoint) {
		e.Identity = model.Identity{Engine: model.LlamaCpp, Version: "b1-de3ff81", Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}
		e.State.Info = map[string]string{}
		e.State.Running, e.State.Waiting = model.Some(running), model.Some(deferred)
		e.State.KVUsage, e.State.MaxRunning, e.State.KVCapacityTokens = model.None, model.None, model.None
		e.State.Latency = map[model.Latency]model.Dist{model.TPOT: {Mean: model.Some(0.02), Exposed: true}}
	})
	runCases(t, []ruleCase{{name: "deferred, no /slots", in: input(e), want: "concurrency_cap", check: func(t *testing.T, f *Finding) {
		if f.Title != "all 2 slots taken: 1 requests wait for one" {
			t.Errorf("title %q", f.Title)
		}
		if !hasAction(f, "-np 3 -kvu (keep -c as it is)") {
			t.Errorf("actions %+v", f.Actions)
		}
		for _, a := range f.Actions {
			if strings.Contains(a.Change, "-c 3") || strings.Contains(a.Change, "× the per-request") {
				t.Errorf("multiplies -c: %q", a.Change)
			}
		}
	}}})
}
