package tui

import (
	"time"

	"github.com/llmtop/llmtop/diagnosis"
)

// DiagnosisConfig carries the screen's thresholds (config file, flags) into
// the rules; the rest are the diagnosis defaults. `llmtop diagnose` uses it
// too, so both judge by the same [thresholds].
func DiagnosisConfig(t Thresholds) diagnosis.Config {
	c := diagnosis.DefaultConfig()
	// A zero threshold is unset: the diagnosis default stays.
	dur := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	num := func(dst *float64, v float64) {
		if v > 0 {
			*dst = v
		}
	}
	dur(&c.SLOTTFT, t.TTFTp99)
	dur(&c.SLOITL, t.ITLp99)
	num(&c.KVHigh, t.KVCrit)
	dur(&c.KVFor, t.KVFor)
	num(&c.WaitingHigh, t.WaitingHigh)
	dur(&c.WaitingFor, t.WaitingFor)
	num(&c.PreemptPS, t.PreemptPS)
	num(&c.GPUIdleUtil, t.GPUIdle)
	return c
}
