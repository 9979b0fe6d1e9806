package tui

import (
	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/model"
)

// Thresholds are the SLOs and limits the screen judges numbers against
// (config.Thresholds: the config file's [thresholds]).
type Thresholds = config.Thresholds

// DefaultThresholds are config.DefaultThresholds.
var DefaultThresholds = config.DefaultThresholds

// Metric names a number the thresholds judge.
type Metric int

const (
	MTTFT    Metric = iota // seconds, a p99
	MITL                   // seconds, a p99
	MKV                    // 0–1
	MWaiting               // requests
	MPreempt               // preemptions/s
	MGPUTemp               // °C
	MGPUMem                // 0–1
	MGPUUtil               // %, judged only while requests wait (see Judge)
	MErrors                // request errors/s
)

// Judge is the one place numbers become levels. A missing value has no
// level. GPU utilisation is high-is-good: on a serving box a busy GPU is
// healthy, an idle one with a queue is the warning, so its caller passes
// the waiting count as ctx.
func judgeLevel(t Thresholds, m Metric, v model.Opt, ctx ...float64) Level {
	if !v.OK {
		return LevelNone
	}
	x := v.V
	switch m {
	case MTTFT:
		return slo(x, t.TTFTp99.Seconds())
	case MITL:
		return slo(x, t.ITLp99.Seconds())
	case MKV:
		return over(x, t.KVWarn, t.KVCrit)
	case MWaiting:
		if x > t.WaitingMax {
			return LevelWarn
		}
		return LevelOK
	case MPreempt, MErrors:
		if x > 0 {
			return LevelCrit
		}
		return LevelOK
	case MGPUTemp:
		return over(x, t.GPUTemp, t.GPUTemp+10)
	case MGPUMem:
		return over(x, t.GPUMem, 2) // a full card is only a warning
	case MGPUUtil:
		if len(ctx) > 0 && ctx[0] > 0 && x < t.GPUIdle {
			return LevelWarn
		}
		return LevelOK
	}
	return LevelNone
}

// slo: a p99 at or under its SLO meets it; above is a warning, above twice
// the SLO critical.
func slo(x, limit float64) Level {
	switch {
	case x > 2*limit:
		return LevelCrit
	case x > limit:
		return LevelWarn
	default:
		return LevelOK
	}
}

// over: ≥ warn is a warning, ≥ crit critical.
func over(x, warn, crit float64) Level {
	switch {
	case x >= crit:
		return LevelCrit
	case x >= warn:
		return LevelWarn
	default:
		return LevelOK
	}
}

// Judged returns the style a metric's value is drawn with.
func (s *Styles) Judged(t Thresholds, m Metric, v model.Opt, ctx ...float64) Ink {
	return s.Level(judgeLevel(t, m, v, ctx...))
}
