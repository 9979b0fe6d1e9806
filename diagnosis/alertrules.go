package diagnosis

import (
	"fmt"
	"time"
)

// AlertThresholds are the conditions of the rules that Prometheus alerting
// rules restate (`llmtop rules`): the values come from a Config and the
// holds from the registered rules themselves, so the alerts cannot drift
// from the diagnosis.
type AlertThresholds struct {
	KVHigh float64       // kv_full: KV usage ≥ this (0–1)
	KVFor  time.Duration // … held this long
	// WaitingHigh: queue_backlog opens above this many waiting requests.
	WaitingHigh float64
	WaitingFor  time.Duration
	// SLOTTFT: ttft_high (and its queueing/prefill variants) when the TTFT
	// p99 is above it for TTFTFor.
	SLOTTFT time.Duration
	TTFTFor time.Duration
	// PreemptPS: kv_preemption above this many preemptions per second.
	PreemptPS  float64
	PreemptFor time.Duration
	// ErrorShare: finish_errors is critical when the error share of
	// finished requests is at least this, warning when abort+error is;
	// only once MinFinished requests finished in the window.
	ErrorShare  float64
	MinFinished float64
	ErrorFor    time.Duration
}

// AlertThresholdsOf returns c's thresholds with the holds the rules apply
// (MaxHold caps them, as in the diagnosis).
func AlertThresholdsOf(c Config) AlertThresholds {
	return AlertThresholds{
		KVHigh: c.KVHigh, KVFor: RuleHold("kv_full", c),
		WaitingHigh: c.WaitingHigh, WaitingFor: RuleHold("queue_backlog", c),
		SLOTTFT: c.SLOTTFT, TTFTFor: RuleHold("ttft_high", c),
		PreemptPS: c.PreemptPS, PreemptFor: RuleHold("kv_preemption", c),
		ErrorShare: c.FinishErrorShare, MinFinished: c.MinFinished, ErrorFor: RuleHold("finish_errors", c),
	}
}

// RuleHold is how long the registered rule id's condition must hold before
// its finding opens under c. It panics on an unknown id: a caller naming a
// rule that does not exist is a programming error a test catches.
func RuleHold(id string, c Config) time.Duration {
	for _, r := range rules {
		if r.id == id {
			return c.hold(r.hold(c))
		}
	}
	panic(fmt.Sprintf("diagnosis: no rule %q", id))
}
