package bench

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// SweepConfig steps the load up towards saturation.
type SweepConfig struct {
	// Base carries the target, prompt shape, SLOs and warmup; its load
	// fields (Concurrency, Rate, NumRequests, Duration) are set per step.
	Base Config
	// ByRate steps the open loop's request rate (Start, 2·Start, … ≤ Max
	// req/s, Base.Concurrency capping requests in flight) instead of the
	// closed loop's streams (1, 2, 4, … ≤ Max).
	ByRate     bool
	Start, Max float64
	// Step is each level's length (default 10 s).
	Step time.Duration
	// Waiting, when set, gives the server's mean queue depth over a step's
	// window (NaN when unknown); saturation then also needs it climbing.
	Waiting func(start, end time.Time) float64
	// AfterStep, when set, is called with each finished step's result
	// before the stop rules look at it (to attach the server's view).
	AfterStep func(r *report.Result)
	// OnProgress is called with the step's index and load and its run's
	// progress.
	OnProgress func(step int, load float64, p Progress)
}

// Defaults: streams 1…128 (rates 1…64 req/s) in 10 s steps: 8 steps, under
// two minutes with the first step's warmup.
func (sc *SweepConfig) Defaults() {
	if sc.Start <= 0 {
		sc.Start = 1
	}
	if sc.Max <= 0 {
		sc.Max = 128
		if sc.ByRate {
			sc.Max = 64
		}
	}
	if sc.Step <= 0 {
		sc.Step = 10 * time.Second
	}
}

// Loads lists the levels the sweep will try, doubling from Start to Max.
func (sc SweepConfig) Loads() []float64 {
	sc.Defaults()
	var ls []float64
	for l := sc.Start; l <= sc.Max*(1+1e-9); l *= 2 {
		ls = append(ls, l)
	}
	return ls
}

// Sweep runs one step per load level and stops at the cap, at saturation
// (TTFT keeps climbing while throughput stays flat), after two levels in a
// row miss the SLOs, when a level fails every request, or when ctx ends.
// The result keeps every finished step and names the knee.
func Sweep(ctx context.Context, sc SweepConfig) (report.Sweep, error) {
	sc.Defaults()
	sw := report.Sweep{Mode: "concurrency", Stopped: "cap", Planned: len(sc.Loads())}
	if sc.ByRate {
		sw.Mode = "rate"
	}
	var waiting []float64
	cfg := sc.Base
	for i, load := range sc.Loads() {
		cfg.NumRequests, cfg.Duration = 0, sc.Step
		if sc.ByRate {
			cfg.Rate = report.Rate(load)
		} else {
			cfg.Rate, cfg.Concurrency = report.Inf, int(math.Round(load))
		}
		if i > 0 {
			cfg.Warmup = 0
		}
		var onP func(Progress)
		if sc.OnProgress != nil {
			onP = func(p Progress) { sc.OnProgress(i, load, p) }
		}
		res, err := Run(ctx, cfg, onP)
		if err != nil {
			if i == 0 {
				return sw, err
			}
			return sw, errors.Join(errors.New("sweep stopped"), err)
		}
		if sc.AfterStep != nil {
			sc.AfterStep(&res)
		}
		// Later steps reuse what the first found out.
		cfg.Model, cfg.NoExtras = res.ModelID, !res.IgnoreEOS
		if ctx.Err() != nil {
			// A level cut short is not that level's numbers: leave it out.
			sw.Stopped = "cancelled"
			break
		}
		sw.Steps = append(sw.Steps, report.Step{Load: load, MeetsSLO: report.StepMeetsSLO(res), Result: res})
		if sc.Waiting != nil {
			waiting = append(waiting, sc.Waiting(res.StartTime, res.EndTime))
		}
		if res.Completed == 0 {
			sw.Stopped = "errors"
			break
		}
		if report.Saturated(sw.Steps, waiting) {
			sw.Stopped = "saturated"
			break
		}
		if report.MissedSLOTwice(sw.Steps) {
			sw.Stopped = "slo"
			break
		}
	}
	sw.FindKnee()
	return sw, nil
}
