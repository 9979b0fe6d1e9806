package bench

import (
	"sort"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// Progress is a run's state while it runs, for a progress bar with live
// counts and running percentiles (over the requests completed so far).
type Progress struct {
	Warmup   bool // still in the warmup requests
	Elapsed  time.Duration
	Duration time.Duration // the run's length when time-bound, else 0
	Target   int           // the run's request count when count-bound, else 0

	Sent, Completed, Failed, InFlight int
	OutputTokens                      int
	// Milliseconds; None before the first completion.
	MedianTTFT, P99TTFT, MedianTPOT, P99TPOT model.Opt
}

// Fraction is how far the run is, 0–1.
func (p Progress) Fraction() float64 {
	var f float64
	switch {
	case p.Target > 0:
		f = float64(p.Completed+p.Failed) / float64(p.Target)
	case p.Duration > 0:
		f = p.Elapsed.Seconds() / p.Duration.Seconds()
	}
	return min(max(f, 0), 1)
}

// progress snapshots the run. Called a few times a second, off the hot path.
func (r *runState) progress() Progress {
	r.mu.Lock()
	ttft := append([]float64(nil), r.ttftMS...)
	tpot := append([]float64(nil), r.tpotMS...)
	p := Progress{
		Warmup: r.warmup, Duration: r.cfg.Duration, Target: r.cfg.NumRequests,
		Completed: r.completed, Failed: r.failed, OutputTokens: r.outTokens,
	}
	start := r.start
	r.mu.Unlock()
	p.Sent = int(r.sent.Load())
	p.InFlight = int(r.inflight.Load())
	if !start.IsZero() {
		p.Elapsed = time.Since(start)
	}
	p.MedianTTFT, p.P99TTFT = pcts(ttft)
	p.MedianTPOT, p.P99TPOT = pcts(tpot)
	return p
}

func pcts(v []float64) (model.Opt, model.Opt) {
	if len(v) == 0 {
		return model.None, model.None
	}
	sort.Float64s(v)
	return model.Some(report.Percentile(v, 50)), model.Some(report.Percentile(v, 99))
}
