package proof

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/sim"
)

// The sim prints vLLM's "Chunked prefill is enabled with
// max_num_batched_tokens=N." at each start with chunked prefill on. The
// stall advice follows what the current run printed: a smaller budget when
// it is on, turning it on after a restart that switched it off (the line of
// the earlier start is stale), as in the demo's timeline.
func TestPrefillStallAdviceFollowsTheStartupLine(t *testing.T) {
	yes := true
	cases := []struct {
		name  string
		cfg   sim.Config
		watch time.Duration
		want  string
	}{
		{"chunked prefill on, 2048-token budget", sim.Config{Scenario: sim.LongPrompts, Background: true, ChunkedPrefill: &yes}, 2 * time.Minute,
			"--max-num-batched-tokens 1024"},
		{"restarted with chunked prefill off", sim.Config{Scenario: sim.Healthy + ":40s," + sim.LongPrompts + ":3m", Background: true}, 3*time.Minute + 40*time.Second,
			"--enable-chunked-prefill --max-num-batched-tokens 2048"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, c.cfg, diagnosis.DefaultConfig())
			rep := r.run(c.watch, step)
			for _, f := range rep.Findings {
				if f.ID == "itl_prefill_stall" {
					if got := f.Actions[0].Change; got != c.want {
						t.Fatalf("first action %q, want %q", got, c.want)
					}
					return
				}
			}
			t.Fatalf("no itl_prefill_stall; findings %v", idsOf(rep.Findings))
		})
	}
}
