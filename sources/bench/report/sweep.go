package report

import "fmt"

// Sweep is a stepped run towards saturation: one Result per load level, the
// rule that stopped it, and the knee.
type Sweep struct {
	// Mode is "concurrency" (closed loop, Load = streams) or "rate" (open
	// loop, Load = req/s).
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
	// Stopped says why the sweep ended: "cap" (the last level ran),
	// "saturated" (TTFT kept climbing while throughput stayed flat),
	// "slo" (two levels in a row missed the SLOs), "errors" or "cancelled".
	Stopped string `json:"stopped"`
	// Knee is the index into Steps of the knee (see FindKnee); -1 when no
	// step qualifies.
	Knee int `json:"knee"`
	// KneeRule says which of the two rules chose Knee, or why there is
	// none (throughput still rising, every level met the SLOs, the sweep
	// cut short).
	KneeRule string `json:"knee_rule"`
	// Planned is how many levels the sweep meant to run (0: not known).
	Planned int `json:"planned,omitempty"`
}

// Step is one load level of a sweep.
type Step struct {
	Load float64 `json:"load"`
	// MeetsSLO is set when SLOs were given and at least SLOAttainment of
	// the step's requests met all of them (goodput/throughput).
	MeetsSLO *bool  `json:"meets_slo,omitempty"`
	Result   Result `json:"result"`
}

const (
	// SLOAttainment is the share of requests that must meet every SLO for
	// a load level to count as meeting them.
	SLOAttainment = 0.9
	// KneeShare is the share of peak throughput the knee must reach when no
	// SLO is given.
	KneeShare = 0.9
	// flatGain is the throughput growth below which a step adds nothing,
	// and ttftGrowth the TTFT growth that signals queueing.
	flatGain   = 1.10
	ttftGrowth = 1.5
	// stepWaits is how many of the earlier step's median ITLs a TTFT rise
	// must exceed to count as queueing: a request that arrives while the
	// engine is mid-step waits up to one step before its prefill, which at
	// low load doubles a small TTFT without any request waiting for a slot.
	stepWaits = 2.0
	// kneeContradicted is the throughput growth past a candidate knee that
	// says it was none (1688 → 4767 tok/s after a "knee" at 32 streams);
	// smaller rises are a full server's noise.
	kneeContradicted = 1.5
)

// ttftQueued reports whether median TTFT from step a to step b rose as
// queueing does: by ttftGrowth× and by more than stepWaits of a's decode
// steps (its median ITL, where measured).
func ttftQueued(a, b Result) bool {
	if !a.MedianTTFT.OK || !b.MedianTTFT.OK || b.MedianTTFT.V < ttftGrowth*a.MedianTTFT.V {
		return false
	}
	return !a.MedianITL.OK || b.MedianTTFT.V-a.MedianTTFT.V > stepWaits*a.MedianITL.V
}

// StepMeetsSLO applies SLOAttainment to a step's result; nil without SLOs.
func StepMeetsSLO(r Result) *bool {
	if !r.RequestGoodput.OK {
		return nil
	}
	ok := r.Completed > 0 && r.RequestThroughput > 0 && r.RequestGoodput.V >= SLOAttainment*r.RequestThroughput
	return &ok
}

// Saturated reports whether each of the last two steps grew median TTFT as
// queueing does (ttftQueued) over the step before while its output throughput stayed
// below flatGain × the best of the earlier steps: the server queues the
// extra load instead of serving it. (The best so far, not the previous step,
// so that one noisy step cannot hide a plateau.) waiting, when non-nil, is
// the server's queue depth per step (NaN unknown); where known it must be
// climbing too.
func Saturated(steps []Step, waiting []float64) bool {
	n := len(steps)
	if n < 3 {
		return false
	}
	for i := n - 2; i < n; i++ {
		a, b := steps[i-1].Result, steps[i].Result
		best := 0.0
		for _, s := range steps[:i] {
			best = max(best, s.Result.OutputThroughput)
		}
		if !a.MedianTTFT.OK || !b.MedianTTFT.OK || best <= 0 {
			return false
		}
		if !ttftQueued(a, b) || b.OutputThroughput >= flatGain*best {
			return false
		}
		if len(waiting) == n && !(waiting[i] > waiting[i-1]) && !isNaN(waiting[i]) && !isNaN(waiting[i-1]) {
			return false
		}
	}
	return true
}

// MissedSLOTwice reports whether the last two steps both missed the SLOs.
func MissedSLOTwice(steps []Step) bool {
	n := len(steps)
	if n < 2 {
		return false
	}
	for _, s := range steps[n-2:] {
		if s.MeetsSLO == nil || *s.MeetsSLO {
			return false
		}
	}
	return true
}

// FindKnee sets sw.Knee and sw.KneeRule from the steps, claiming a knee
// only where the data shows one. With SLOs, the knee is the highest load
// meeting them, once a higher load missed them. Without, it is the last
// load before queueing set in — the first step whose median TTFT rose as
// queueing does (ttftQueued) while output throughput grew less than 3/4 of
// the load's growth, and past which throughput never rose kneeContradicted×
// (throughput that keeps rising says the server was not full) —
// or, when no step queued, the lowest load reaching KneeShare of a peak
// that has flattened (the last step under flatGain × the best before it).
// A sweep whose throughput still rises at its last step has no knee: it
// says so, and whether it was cut short.
func (sw *Sweep) FindKnee() {
	sw.Knee, sw.KneeRule = -1, ""
	unit := "streams"
	if sw.Mode == "rate" {
		unit = "req/s"
	}
	short := ""
	if sw.Stopped == "cancelled" || sw.Stopped == "errors" {
		short = fmt.Sprintf("; the sweep was cut short (%s) after %d", sw.Stopped, len(sw.Steps))
		if sw.Planned > 0 {
			short += fmt.Sprintf(" of %d", sw.Planned)
		}
		short += " levels"
	}
	slo, missed := false, false
	for i, s := range sw.Steps {
		if s.MeetsSLO != nil {
			slo = true
			if *s.MeetsSLO && !missed {
				sw.Knee = i
			}
			missed = missed || !*s.MeetsSLO
		}
	}
	if slo {
		sw.KneeRule = "highest load meeting the SLOs"
		if !missed && len(sw.Steps) > 0 {
			sw.Knee = -1
			sw.KneeRule = fmt.Sprintf("none within the loads tried: every level up to %g %s met the SLOs%s", sw.Steps[len(sw.Steps)-1].Load, unit, short)
		}
		return
	}
	peak := 0.0
	for _, s := range sw.Steps {
		peak = max(peak, s.Result.OutputThroughput)
	}
	for i := 1; i < len(sw.Steps); i++ {
		a, b := sw.Steps[i-1], sw.Steps[i]
		if !a.Result.MedianTTFT.OK || !b.Result.MedianTTFT.OK || a.Result.OutputThroughput <= 0 || a.Load <= 0 {
			continue
		}
		loadGain := b.Load / a.Load
		thrGain := b.Result.OutputThroughput / a.Result.OutputThroughput
		if ttftQueued(a.Result, b.Result) && thrGain < 1+0.75*(loadGain-1) && peak < kneeContradicted*a.Result.OutputThroughput {
			sw.Knee, sw.KneeRule = i-1, "last load before queueing (TTFT jumped, throughput flattened)"
			return
		}
	}
	if peak <= 0 {
		sw.KneeRule = "none: no output throughput measured" + short
		return
	}
	if n := len(sw.Steps); n < 2 || sw.Steps[n-1].Result.OutputThroughput >= flatGain*bestBefore(sw.Steps, n-1) {
		last := sw.Steps[n-1]
		sw.KneeRule = fmt.Sprintf("none: output throughput still rising at %g %s (%.0f tok/s)%s", last.Load, unit, last.Result.OutputThroughput, short)
		if n < 2 {
			sw.KneeRule = fmt.Sprintf("none: one level (%g %s) shows no curve%s", last.Load, unit, short)
		}
		return
	}
	for i, s := range sw.Steps {
		if s.Result.OutputThroughput >= KneeShare*peak {
			sw.Knee, sw.KneeRule = i, "lowest load reaching 90% of peak output throughput"
			return
		}
	}
}

// bestBefore is the highest output throughput of the steps before i.
func bestBefore(steps []Step, i int) float64 {
	best := 0.0
	for _, s := range steps[:i] {
		best = max(best, s.Result.OutputThroughput)
	}
	return best
}

func isNaN(f float64) bool { return f != f }
