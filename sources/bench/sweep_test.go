package bench

import (
	"context"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// A server that runs 4 requests at a time and queues the rest has its knee
// at 4 streams: throughput stops growing there and TTFT starts climbing.
func TestSweepFindsTheKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few seconds of load")
	}
	for _, slo := range []bool{false, true} {
		// Times large enough that a busy machine's scheduling jitter (the
		// race detector, other jobs on two cores) does not move the knee:
		// at 2 ms a token this test failed under load. A request holds a
		// slot ~110 ms, so past 4 streams one waits a whole request (TTFT
		// ≥ 110 ms against the 60 ms SLO) and throughput stays flat.
		f := &fakeEngine{tokens: 10, first: 10 * time.Millisecond, gap: 10 * time.Millisecond, slots: make(chan struct{}, 4)}
		s := newFake(t, f)
		sc := SweepConfig{Base: quick(s.URL), Max: 64, Step: time.Second}
		if slo {
			sc.Base.SLO = report.SLO{TTFT: 60 * time.Millisecond}
		}
		steps := 0
		sc.OnProgress = func(i int, _ float64, _ Progress) { steps = max(steps, i+1) }
		sw, err := Sweep(context.Background(), sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range sw.Steps {
			t.Logf("slo=%v load %v: %.0f tok/s, TTFT p50 %.1f ms, meets %v", slo, st.Load, st.Result.OutputThroughput, st.Result.MedianTTFT.V, st.MeetsSLO)
		}
		if sw.Knee < 0 || sw.Steps[sw.Knee].Load != 4 {
			t.Fatalf("slo=%v: knee %d (%s), want the 4-stream step", slo, sw.Knee, sw.KneeRule)
		}
		if (sw.Stopped != "saturated" && sw.Stopped != "slo") || len(sw.Steps) >= len(sc.Loads()) {
			t.Errorf("slo=%v: the sweep should stop early at saturation, stopped %q after %d steps", slo, sw.Stopped, len(sw.Steps))
		}
		if steps != len(sw.Steps) {
			t.Errorf("progress saw %d steps, result has %d", steps, len(sw.Steps))
		}
	}
}

func TestSweepLoads(t *testing.T) {
	sc := SweepConfig{}
	sc.Defaults()
	got := sc.Loads()
	if len(got) != 8 || got[0] != 1 || got[7] != 128 {
		t.Fatalf("default loads %v", got)
	}
	if d := time.Duration(len(got)) * sc.Step; d >= 2*time.Minute {
		t.Errorf("default sweep takes %v of load, want under 2 min", d)
	}
}
