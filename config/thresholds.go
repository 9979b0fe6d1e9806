package config

import (
	"time"

	"github.com/llmtop/llmtop/diagnosis"
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

	// The routing rules' (issue 26); zero keeps the diagnosis default.
	RouteHold     time.Duration // a pool's imbalance holds this long
	RouteLag      time.Duration // router/engine gauges may disagree this long
	RouteFullKV   float64       // KV 0–1 at which a pool member is full
	RouteQueueMin float64       // waiting on the busiest member before queue skew
	KVStallShare  float64       // share 0–1 of TTFT spent in KV transfer
	// A router's own word (dead_backend_traffic, router_bottleneck).
	RouteDeadQPS        float64       // req/s a router sends a dead backend that is traffic
	RouteRouterWindow   time.Duration // the router's rate window: a tripped backend's rate outlives its trip this long
	RouteRouterQueueMin float64       // requests held in a router's own queue that make it the bottleneck
	RouteOverheadShare  float64       // a router's own overhead's share of TTFT that is a finding
	RouteOverheadMin    time.Duration // and the overhead per request below which it is none
}

// DefaultThresholds: TTFT p99 200 ms, ITL p99 50 ms, KV 95 %, waiting > 0.
var DefaultThresholds = Thresholds{
	TTFTp99: 200 * time.Millisecond, ITLp99: 50 * time.Millisecond,
	KVWarn: 0.85, KVCrit: 0.95, WaitingMax: 0, GPUTemp: 83, GPUMem: 0.98, GPUIdle: 30,
}

// DiagnosisConfig carries the thresholds (config file, flags) into
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
	dur(&c.RouteHold, t.RouteHold)
	dur(&c.RouteLag, t.RouteLag)
	num(&c.RouteFullKV, t.RouteFullKV)
	num(&c.RouteQueueMin, t.RouteQueueMin)
	num(&c.KVStallShare, t.KVStallShare)
	num(&c.RouteDeadQPS, t.RouteDeadQPS)
	dur(&c.RouteRouterWindow, t.RouteRouterWindow)
	num(&c.RouteRouterQueueMin, t.RouteRouterQueueMin)
	num(&c.RouteOverheadShare, t.RouteOverheadShare)
	dur(&c.RouteOverheadMin, t.RouteOverheadMin)
	return c
}
