package diagnosis

import "time"

// Config holds every threshold the rules use. The defaults come from vLLM's
// shipped alert rules (KV > 95 % for 5 m, waiting > 50 for 3 m, preemptions
// > 1/s) and common chat SLOs (TTFT p99 ≤ 200 ms, ITL p99 ≤ 50 ms).
type Config struct {
	// SLOTTFT is the TTFT p99 target; SLOITL the inter-token (TPOT) p99
	// target. --slo-ttft / --slo-tpot set them.
	SLOTTFT time.Duration `json:"slo_ttft"`
	SLOITL  time.Duration `json:"slo_itl"`

	KVHigh      float64       `json:"kv_high"`      // 0–1
	KVFor       time.Duration `json:"kv_for"`       // sustained this long
	WaitingHigh float64       `json:"waiting_high"` // requests
	WaitingFor  time.Duration `json:"waiting_for"`
	PreemptPS   float64       `json:"preempt_per_s"`

	// Hold is how long any other condition must hold before its finding
	// opens; Clear how long it must be clear before it closes. Grace is the
	// longest gap a pending condition may have without starting over, so a
	// noisy signal hovering at a threshold still opens (and stays open).
	Hold  time.Duration `json:"hold"`
	Clear time.Duration `json:"clear"`
	Grace time.Duration `json:"grace"`
	// MaxHold caps every hold (0 = no cap). `llmtop diagnose` sets it to half
	// its watch so a 30 s watch can still report a 5 m rule whose condition
	// held the whole time.
	MaxHold time.Duration `json:"max_hold,omitempty"`

	// DominantShare is the share of TTFT a phase (queue or prefill) must take
	// to be named the cause.
	DominantShare float64 `json:"dominant_share"`
	// SpecAcceptLow is the speculative-decoding acceptance below which the
	// drafts cost more than they save.
	SpecAcceptLow float64 `json:"spec_accept_low"`
	// GPUIdleUtil is the GPU utilisation (%) below which a GPU with requests
	// waiting is called idle.
	GPUIdleUtil float64 `json:"gpu_idle_util_pct"`
	// ForeignVRAM is the VRAM (bytes) other processes may hold before it is a
	// finding.
	ForeignVRAM float64 `json:"foreign_vram_bytes"`
	// FinishLengthShare / FinishErrorShare are the finish-reason shares that
	// raise the behaviour findings; MinFinished the requests needed first.
	FinishLengthShare float64 `json:"finish_length_share"`
	FinishErrorShare  float64 `json:"finish_error_share"`
	MinFinished       float64 `json:"min_finished"`
	// RejectShare is the share of requests turned away at admission (TGI
	// 429 overloaded) that raises api_rejections; ten times it is critical.
	RejectShare float64 `json:"reject_share"`
	// BreachCrit is the multiple of a threshold (TTFT p99 10× its SLO,
	// waiting 10× WaitingHigh) at which a finding is critical and opens
	// after a short hold: a breach that large needs no minutes to prove.
	BreachCrit float64 `json:"breach_crit"`
	// SmallBatch is the requests (or tokens) per engine step at or below
	// which an idle GPU with requests arriving is put down to small batches.
	SmallBatch float64 `json:"small_batch"`
	// BadOutputShare is the share of benchmark responses that are empty,
	// echoed or repetitive before it is a finding.
	BadOutputShare float64 `json:"bad_output_share"`
	// ClientGap is how much client-measured TTFT may exceed the server's
	// (absolute, and as a ratio) before it is blamed on the path between.
	ClientGapAbs   time.Duration `json:"client_gap_abs"`
	ClientGapRatio float64       `json:"client_gap_ratio"`
	// RegressionRatio is the latency ratio after/before a restart that is a
	// regression; SimilarLoad the allowed relative load difference.
	RegressionRatio float64 `json:"regression_ratio"`
	SimilarLoad     float64 `json:"similar_load"`
	// SkewRatio is the load ratio between replicas of one model that is a
	// routing problem.
	SkewRatio float64 `json:"skew_ratio"`
	// Routing (issue 26): RouteHold is how long a pool's imbalance must
	// hold before its finding opens, and RouteLag how long a router's and
	// an engine's gauges may disagree by design (vLLM #49538: 3 to 18 s;
	// an engine that started within it reads 0 running, and is left out
	// of its pool's comparison). RouteHold is never shorter than RouteLag.
	RouteHold time.Duration `json:"route_hold"`
	RouteLag  time.Duration `json:"route_lag"`
	// RouteFullKV is the KV usage at which a pool member is full.
	RouteFullKV float64 `json:"route_full_kv"`
	// RouteQueueMin is the waiting requests on a pool's busiest member
	// before a spread of queues is a finding; RouteQueueCV the coefficient
	// of variation of the members' queues that is skew.
	RouteQueueMin float64 `json:"route_queue_min"`
	RouteQueueCV  float64 `json:"route_queue_cv"`
	// RouteOneShare is the share of a pool's finished requests one member
	// takes while the others take (nearly) none; RouteMinRPS the pool's
	// requests per second before it is judged.
	RouteOneShare float64 `json:"route_one_share"`
	RouteMinRPS   float64 `json:"route_min_rps"`
	// RouteHotShare is the share of a pool's load on one member, RouteHotHit
	// how far its prefix-cache hit rate must exceed its peers', for a
	// cache-aware pile-up.
	RouteHotShare float64 `json:"route_hot_share"`
	RouteHotHit   float64 `json:"route_hot_hit"`
	// RouteDeadQPS is the rate a router sends a backend (its own
	// sliding-window gauge) at which a dead or tripped backend is still
	// receiving traffic; RouteRouterWindow is that window: a backend that
	// just tripped keeps its last window's rate for that long, so the
	// finding holds at least as long.
	RouteDeadQPS float64 `json:"route_dead_qps"`
	// RouteRouterQueueMin is the requests a router holds in its own queue,
	// with the engines' queues empty, that make it the bottleneck.
	RouteRouterQueueMin float64       `json:"route_router_queue_min"`
	RouteRouterWindow   time.Duration `json:"route_router_window"`
	// RouteOverheadShare is the part of the user's time to first token a
	// router's own overhead may take, RouteOverheadMin the overhead per
	// request below which it is no finding whatever its share.
	RouteOverheadShare float64       `json:"route_overhead_share"`
	RouteOverheadMin   time.Duration `json:"route_overhead_min"`
	// KVStallShare is the share of a decode instance's TTFT spent in KV
	// transfer, and KVStallMin the TTFT mean, that make a transfer stall.
	KVStallShare float64       `json:"kv_stall_share"`
	KVStallMin   time.Duration `json:"kv_stall_min"`
	// LoRADeferred is the requests deferred (vLLM's waiting_by_reason
	// deferred) with adapters waiting that make lora_starved.
	LoRADeferred float64 `json:"lora_deferred"`
	// EventWindow is how long a log event keeps its finding open.
	EventWindow time.Duration `json:"event_window"`
	// ColdStart is how long after a restart latency is blamed on warm-up.
	ColdStart time.Duration `json:"cold_start"`
}

// DefaultConfig returns the defaults described on Config.
func DefaultConfig() Config {
	return Config{
		SLOTTFT:             200 * time.Millisecond,
		SLOITL:              50 * time.Millisecond,
		KVHigh:              0.95,
		KVFor:               5 * time.Minute,
		WaitingHigh:         50,
		WaitingFor:          3 * time.Minute,
		PreemptPS:           1,
		Hold:                30 * time.Second,
		Clear:               60 * time.Second,
		Grace:               15 * time.Second,
		DominantShare:       0.5,
		SpecAcceptLow:       0.5,
		GPUIdleUtil:         30,
		ForeignVRAM:         1 << 30,
		FinishLengthShare:   0.3,
		FinishErrorShare:    0.05,
		MinFinished:         20,
		RejectShare:         0.01,
		BreachCrit:          10,
		SmallBatch:          2,
		BadOutputShare:      0.1,
		ClientGapAbs:        50 * time.Millisecond,
		ClientGapRatio:      1.5,
		RegressionRatio:     1.3,
		SimilarLoad:         0.3,
		SkewRatio:           2,
		RouteHold:           20 * time.Second,
		RouteLag:            20 * time.Second,
		RouteFullKV:         0.9,
		RouteQueueMin:       10,
		RouteQueueCV:        0.8,
		RouteOneShare:       0.9,
		RouteMinRPS:         0.5,
		RouteHotShare:       0.6,
		RouteHotHit:         0.2,
		RouteDeadQPS:        0.1,
		RouteRouterQueueMin: 4,
		RouteRouterWindow:   30 * time.Second,
		RouteOverheadShare:  0.2,
		RouteOverheadMin:    20 * time.Millisecond,
		KVStallShare:        0.5,
		KVStallMin:          time.Second,
		LoRADeferred:        5,
		EventWindow:         10 * time.Minute,
		ColdStart:           2 * time.Minute,
	}
}

// hold returns d capped by MaxHold.
func (c Config) hold(d time.Duration) time.Duration {
	if c.MaxHold > 0 && d > c.MaxHold {
		return c.MaxHold
	}
	return d
}
