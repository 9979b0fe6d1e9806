package tui

import (
	"context"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// The benchmark (`b`) talks to the load generator through BenchRunner,
// implemented in cmd (cmd/llmtop/wire_bench.go): the tui never sends HTTP
// nor writes files itself. cmd registers the overlay with its runner:
//
//	tui.RegisterOverlay(tui.OverlaySpec{ID: "bench", Key: tui.DefaultKeyMap().Bench,
//		New: func() tui.Overlay { return tui.NewBenchOverlay(runner) }})

// BenchRunner runs a benchmark and saves its result.
type BenchRunner interface {
	// Run blocks until the run ends or ctx is cancelled (in-flight
	// requests are aborted then, and the partial result returned). It
	// calls progress a few times a second from another goroutine.
	Run(ctx context.Context, spec BenchSpec, progress func(BenchProgress)) BenchOutcome
	// Save writes the outcome as JSON and says where.
	Save(o BenchOutcome) (string, error)
	// Saved reads back the newest n saved outcomes, newest first, with the
	// file each came from in Saved.
	Saved(n int) []BenchOutcome
}

// BenchSpec is what the form asks for.
type BenchSpec struct {
	URL    string
	Preset string // "quick", "sweep" or "custom"
	// Streams, Duration, InputLen, OutputLen: the closed loop's shape
	// (the sweep steps Streams itself).
	Streams             int
	Duration            time.Duration
	InputLen, OutputLen int
}

// BenchProgress is a run's progress, relayed from the load generator.
type BenchProgress struct {
	Step                              string // the sweep's step ("2/8 · 4 streams"), "" for one run
	Warmup                            bool
	Fraction                          float64
	Elapsed                           time.Duration
	Sent, Completed, Failed, InFlight int
	// Running percentiles over the requests completed so far, in ms.
	MedianTTFT, P99TTFT, MedianTPOT, P99TPOT model.Opt
}

// BenchOutcome is a finished (or cancelled) run: one Result, or a Sweep.
type BenchOutcome struct {
	Spec   BenchSpec
	Result *report.Result
	Sweep  *report.Sweep
	Err    error
	// Saved is the file the outcome was read from (history from disk).
	Saved string
}

// window is the span the outcome's load covered.
func (o BenchOutcome) window() (start, end time.Time) {
	switch {
	case o.Result != nil:
		return o.Result.StartTime, o.Result.EndTime
	case o.Sweep != nil && len(o.Sweep.Steps) > 0:
		return o.Sweep.Steps[0].Result.StartTime, o.Sweep.Steps[len(o.Sweep.Steps)-1].Result.EndTime
	}
	return time.Time{}, time.Time{}
}
