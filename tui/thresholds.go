package tui

import (
	"time"

	"github.com/llmtop/llmtop/model"
)

// Thresholds are the SLOs and limits the screen judges numbers against. The
// defaults match the diagnosis runbooks; the config file can change them.
type Thresholds struct {
	TTFTp99    time.Duration // TTFT p99 SLO
	ITLp99     time.Duration // ITL/TPOT p99 SLO
	KVWarn     float64       // KV-cache usage 0–1 that starts to matter
	KVCrit     float64       // KV-cache usage 0–1 where preemption is near
	WaitingMax float64       // requests waiting above this are a warning
	GPUTemp    float64       // °C warning; +10 °C is critical
	GPUMem     float64       // memory share 0–1 warning (not engine-held)
	GPUIdle    float64       // util % below which a GPU is idle while requests wait

	// The diagnosis' alert rules (vLLM's: KV > 95 % for 5 m, waiting > 50
	// for 3 m, preemptions > 1/s); zero keeps diagnosis.DefaultConfig's.
	KVFor       time.Duration // KV at KVCrit this long opens kv_full
	WaitingHigh float64       // requests waiting that make a backlog
	WaitingFor  time.Duration // … sustained this long
	PreemptPS   float64       // preemptions/s that are KV pressure
}

// DefaultThresholds: TTFT p99 200 ms, ITL p99 50 ms, KV 95 %, waiting > 0.
var DefaultThresholds = Thresholds{
	TTFTp99: 200 * time.Millisecond, ITLp99: 50 * time.Millisecond,
	KVWarn: 0.85, KVCrit: 0.95, WaitingMax: 0, GPUTemp: 83, GPUMem: 0.98, GPUIdle: 30,
}

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
func (t Thresholds) Judge(m Metric, v model.Opt, ctx ...float64) Level {
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
	return s.Level(t.Judge(m, v, ctx...))
}
