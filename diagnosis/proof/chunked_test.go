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
// it is on (and that budget, applied, cuts the ITL tail), turning it on
// after a restart that switched it off (the earlier start's line is stale),
// as in the demo's timeline.
func TestPrefillStallAdviceFollowsTheStartupLine(t *testing.T) {
	yes := true
	cases := []struct {
		name  string
		cfg   sim.Config
		watch time.Duration
		want  string
		prove bool // apply the advice and check ITL p99 falls
	}{
		{"chunked prefill on, 2048-token budget", sim.Config{Scenario: sim.LongPrompts, Background: true, ChunkedPrefill: &yes}, 2 * time.Minute,
			"--max-num-batched-tokens 1024", true},
		{"restarted with chunked prefill off", sim.Config{Scenario: sim.Healthy + ":40s," + sim.LongPrompts + ":3m", Background: true}, 3*time.Minute + 40*time.Second,
			"--max-num-batched-tokens 2048 without --no-enable-chunked-prefill", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dcfg := diagnosis.DefaultConfig()
			r := newRig(t, c.cfg, dcfg)
			rep := r.run(c.watch, step)
			f := byID(rep.Findings, "itl_prefill_stall")
			if f == nil {
				t.Fatalf("no itl_prefill_stall; findings %v", idsOf(rep.Findings))
			}
			fix := f.Actions[0].Change
			if fix != c.want {
				t.Fatalf("first action %q, want %q", fix, c.want)
			}
			if !c.prove {
				return
			}
			base := c.cfg
			base.Rate = r.arrivals(c.watch)
			fixed := base
			if err := apply(&fixed, fix); err != nil {
				t.Fatal(err)
			}
			before, after := newRig(t, base, dcfg), newRig(t, fixed, dcfg)
			before.run(c.watch, step)
			after.run(c.watch, step)
			b, a := before.metrics(), after.metrics()
			t.Logf("applied %q at %.2f req/s\n  before: %v\n  after:  %v", fix, base.Rate, b, a)
			if b.ITLp99 <= 0 || a.ITLp99 < 0 || a.ITLp99 > 0.7*b.ITLp99 {
				t.Fatalf("ITL p99 did not fall enough: %.3f → %.3f", b.ITLp99, a.ITLp99)
			}
		})
	}
}
