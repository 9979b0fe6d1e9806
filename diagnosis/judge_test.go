package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 14 item 11: after a crash the baseline's cache config was not read
// (block_size unknown); the new run's block_size 16 is no change. A label
// the old run had with another value still is.
func TestRegressionUnknownToKnownIsNoChange(t *testing.T) {
	mk := func(before map[string]string) Input {
		base := &Baseline{Version: "0.11.0", Model: "m", Running: model.Some(8), TTFT: model.Some(0.05), ITL: model.Some(0.04), Info: before}
		return input(ep(func(e *Endpoint) {
			e.Identity.Version = "0.11.0"
			e.Before = base
			e.State.Restarts = []time.Time{t0.Add(-time.Minute)}
			e.State.Running = model.Some(8)
			x := dist(0.04, 0.05, 0.06, 0.04)
			x.Window = 50 * time.Second
			e.State.Latency[model.ITL] = x
		}))
	}
	before := map[string]string{"gpu_memory_utilization": "0.9", "cache_dtype": "auto", "enable_prefix_caching": "True"}
	if f := byID(Evaluate(mk(before), DefaultConfig()), "release_regression"); f != nil {
		t.Errorf("block_size unknown → 16 reported: %s %+v", f.Title, f.Evidence)
	}
	if got := infoDiff(map[string]string{"block_size": ""}, map[string]string{"block_size": "16"}); len(got) != 0 {
		t.Errorf("empty → 16 diffed: %v", got)
	}
	before["block_size"] = "32"
	f := byID(Evaluate(mk(before), DefaultConfig()), "release_regression")
	if f == nil || !hasEvidence(f, "block_size 32 → 16") {
		t.Fatalf("a real change: %+v", f)
	}
	for _, e := range f.Evidence {
		if strings.Contains(e.Text, "--") {
			t.Errorf("unknown shown as a change: %s", e.Text)
		}
	}
}

// Issue 14 item 15: --generation-config auto is vLLM's default, so it is
// no change to advise; the advice names what to check instead.
func TestGenerationConfigAutoIsNotAdvised(t *testing.T) {
	runCases(t, []ruleCase{
		{name: "finish length", in: input(ep(finishes(map[string]float64{"stop": 60, "length": 40}))), want: "finish_length",
			check: noGenerationConfigAuto},
		{name: "bad outputs", in: bench(func(b *Bench) { b.Empty, b.Repetitive = 8, 4 }), want: "bench_bad_output",
			check: noGenerationConfigAuto},
	})
}

func noGenerationConfigAuto(t *testing.T, f *Finding) {
	t.Helper()
	for _, a := range f.Actions {
		if strings.Contains(a.Change, "--generation-config auto") {
			t.Errorf("advises vLLM's default as a change: %q", a.Change)
		}
	}
	if !hasAction(f, "generation_config.json") {
		t.Errorf("no generation-config check: %+v", f.Actions)
	}
}
