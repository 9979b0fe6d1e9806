package model

import (
	"math"
	"time"
)

// The JSON contract of `llmtop snapshot --json` (and the TUI's `s`). Scripts
// depend on it: add fields, never rename or repurpose them. A value the
// engine does not expose, or that had no data in the window, is null.

// DistJSON is a latency distribution in milliseconds.
type DistJSON struct {
	P50  Opt `json:"p50"`
	P90  Opt `json:"p90"`
	P99  Opt `json:"p99"`
	Mean Opt `json:"mean"`
	// Count is the number of observations in the window (null when the
	// engine does not expose the latency): requests, unless CountOf says
	// otherwise.
	Count Opt `json:"count"`
	// CountOf is what count counts when it is not requests: "tokens" for
	// a mean over every generated token (llama.cpp's TPOT from /metrics:
	// generation seconds ÷ tokens generated, no request count).
	CountOf string `json:"count_of,omitempty"`
	// WindowS is the span this distribution covers, in seconds, when it is
	// measured over a window (omitted for a mean-only approximation with
	// no window); it can be shorter than metrics.window_s right after a
	// restart or a change of bucket layout.
	WindowS float64 `json:"window_s,omitempty"`
	// Estimate: quantiles interpolated from histogram buckets.
	Estimate bool   `json:"estimate"`
	Approx   string `json:"approx,omitempty"`
	// AllBelowMS is set when every observation in the window fell in the
	// lowest bucket: the buckets then only say "≤ all_below_ms", so p50,
	// p90 and p99 are null (interpolating inside (0, 300 ms] would print
	// 150/270/297 ms for a 7 ms queue); mean stays exact.
	AllBelowMS Opt `json:"all_below_ms,omitzero"`
	// AboveMS is set when some percentiles lie past the highest finite
	// bucket bound: the buckets only say "> above_ms" of them, so those
	// percentiles are null (p50 = p99 = 30000 beside a mean of 213654 was
	// the bound, not a measurement); the others and the mean stay.
	AboveMS Opt `json:"above_ms,omitzero"`
	// Source is "log" when the percentiles and count come from the
	// engine's per-request log lines (exact, not bucket estimates; count is
	// the requests logged in the window); the mean stays the metrics' when
	// they give one. Omitted when the numbers are the metrics'.
	Source Source `json:"source,omitempty"`
	// LogCheck says where the log's per-request figures disagree with the
	// metrics' (omitted when they agree or only one exists).
	LogCheck string `json:"log_check,omitempty"`
}

// Shown is how a face prints percentile p of j: a bound where the
// buckets give only one ("<" all_below_ms when every observation sat in
// the lowest bucket, ">" above_ms for one past the highest finite bound),
// else p itself with no mark.
func (j DistJSON) Shown(p Opt) (mark string, v Opt) {
	switch {
	case j.AllBelowMS.OK:
		return "<", j.AllBelowMS
	case !p.OK && j.AboveMS.OK:
		return ">", j.AboveMS
	}
	return "", p
}

// MetricsJSON is one endpoint+model's metrics over the snapshot window.
type MetricsJSON struct {
	Running           Opt `json:"running"`
	Waiting           Opt `json:"waiting"`
	KVCacheUsageRatio Opt `json:"kv_cache_usage_ratio"`
	// KVCacheUsageRatioMax is set when kv_cache_usage_ratio is only a floor.
	KVCacheUsageRatioMax Opt `json:"kv_cache_usage_ratio_max,omitzero"`
	PrefixCacheHitRatio  Opt `json:"prefix_cache_hit_ratio"`
	PreemptionsPerS      Opt `json:"preemptions_per_s"`
	PromptTokensPerS     Opt `json:"prompt_tokens_per_s"`
	GenerationTokensPerS Opt `json:"generation_tokens_per_s"`
	RequestsPerS         Opt `json:"requests_per_s"`
	// RequestsFromLog: requests_per_s counts the requests the engine's log
	// timed (its metrics count none: llama.cpp with --log).
	RequestsFromLog bool `json:"requests_per_s_from_log,omitempty"`
	// EnginePromptTokensPerS and EngineGenerationTokensPerS are the
	// engine's own throughput gauges as it states them (llama.cpp's
	// prompt_tokens_seconds, SGLang's gen_throughput), beside the rates
	// above, which llmtop computes from counters over the window; absent
	// where they say nothing more (State.EngineOwnTPS).
	// EngineRatesOver is "busy_time" where the engine divides by the
	// seconds its slots spent processing, not the wall clock (llama.cpp:
	// a slot's speed, thousands of tok/s on a mostly idle server).
	EnginePromptTokensPerS     Opt    `json:"engine_prompt_tokens_per_s,omitzero"`
	EngineGenerationTokensPerS Opt    `json:"engine_generation_tokens_per_s,omitzero"`
	EngineRatesOver            string `json:"engine_rates_over,omitempty"`
	SpecDecodeAcceptance       Opt    `json:"spec_decode_acceptance_ratio"`
	KVCapacityTokens           Opt    `json:"kv_capacity_tokens"`

	TTFTms    DistJSON `json:"ttft_ms"`
	TPOTms    DistJSON `json:"tpot_ms"`
	ITLms     DistJSON `json:"itl_ms"`
	E2Ems     DistJSON `json:"e2e_ms"`
	Queuems   DistJSON `json:"queue_ms"`
	Prefillms DistJSON `json:"prefill_ms"`
	Decodems  DistJSON `json:"decode_ms"`

	FinishReasons map[string]float64 `json:"finish_reasons"` // share of finished requests in the window
	WindowS       float64            `json:"window_s"`
	Source        Source             `json:"source"`
	Restarts      int                `json:"restarts"`
	// Engines is each data-parallel engine's gauges (vLLM engine="N");
	// kv_cache_usage_ratio above is the fullest one's.
	Engines []EngineShare `json:"engines,omitempty"`
	// SinceStart is each latency since the engine started, for those the
	// window has no observations of (an idle server); never the window's.
	// Keys are "<latency>_ms" in milliseconds, and "prompt_len_tokens",
	// "output_len_tokens", "step_tokens_tokens" in tokens.
	SinceStart map[string]DistJSON `json:"since_start,omitempty"`
}

// EndpointJSON is one endpoint in a snapshot.
type EndpointJSON struct {
	URL        string   `json:"url"`
	Engine     Engine   `json:"engine"`
	Version    string   `json:"version"`
	Models     []string `json:"models"`
	MaxContext Opt      `json:"max_context"`
	Health     Health   `json:"health"`
	// Status is the endpoint's state in one word, the screen's badge
	// (core.Status: UP, DEGRADED when it answers but its metrics do not
	// read or its health route is not up, DOWN, …).
	Status string `json:"status"`
	// Answered: anything answered there (metrics, an error that is not
	// "down", a health route); the core's Endpoint.Answered.
	Answered  bool `json:"answered"`
	Simulated bool `json:"simulated,omitempty"`
	// Role is its prefill/decode role where its metrics say (RoleFrom
	// what said it); Via the layer it is served through; Layer what it is
	// when it is a router, proxy or KV cache layer and not an engine.
	Layer string `json:"layer,omitempty"`
	// LayerDetail is what the layer says of the engines behind it
	// (Identity.LayerDetail: "3 workers, 2 healthy, breaker open on 1
	// (…); 14 running by its count").
	LayerDetail string `json:"layer_detail,omitempty"`
	Role        PDRole `json:"role,omitempty"`
	RoleFrom    string `json:"role_from,omitempty"`
	Via         string `json:"via,omitempty"`
	Model       string `json:"model"` // the model the metrics belong to
	// NotLoaded are the models the engine lists but has not loaded
	// (Ollama after its keep-alive expired: the next request pays the
	// load); absent when every model listed is loaded or the engine
	// does not say.
	NotLoaded []string          `json:"not_loaded,omitempty"`
	Metrics   *MetricsJSON      `json:"metrics"`
	Info      map[string]string `json:"info,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
	Error     string            `json:"error,omitempty"`
	Hint      string            `json:"hint,omitempty"`
	// State is the engine's lifecycle (starting, serving, stopping,
	// stopped, crashed, unreachable, unknown) and StateDetail what says so.
	State       Lifecycle `json:"state"`
	StateDetail string    `json:"state_detail,omitempty"`
	// Runs is the endpoint's run ledger, oldest first.
	Runs []Run `json:"runs"`
	// Host is the newest reading of the machine around a local engine
	// (its processes and busiest threads, memory, cgroup, /dev/shm,
	// disks); absent when none was taken.
	Host *HostReading `json:"host,omitempty"`
	// Name, Source and Missing are set for an endpoint read through
	// Prometheus (model/origin.go): its job/instance or namespace/pod name,
	// "prometheus", and what that source cannot give.
	Name    string   `json:"name,omitempty"`
	Source  string   `json:"source,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// SnapshotJSON is the whole document.
type SnapshotJSON struct {
	Time      time.Time      `json:"time"`
	Endpoints []EndpointJSON `json:"endpoints"`
	GPU       *GPUSnapshot   `json:"gpu,omitempty"`
}

// DistMS converts a Dist in seconds into milliseconds for JSON.
func DistMS(d Dist) DistJSON { return distScaled(d, 1000) }

// distScaled is d for JSON with its values multiplied by f.
func distScaled(d Dist, f float64) DistJSON {
	j := DistJSON{
		P50: d.P50.Scale(f), P90: d.P90.Scale(f), P99: d.P99.Scale(f), Mean: d.Mean.Scale(f),
		Estimate: d.Estimate, Approx: d.Approx, AllBelowMS: d.AllBelow.Scale(f),
		WindowS: math.Round(d.Window.Seconds()*1000) / 1000,
		Source:  d.Source, LogCheck: d.LogCheck,
	}
	if d.Exposed {
		j.Count = Some(d.Count)
	}
	if d.AllBelow.OK {
		j.P50, j.P90, j.P99 = None, None, None
	}
	if d.Above.OK {
		j.AboveMS = d.Above.Scale(f)
		for q, p := range map[float64]*Opt{0.50: &j.P50, 0.90: &j.P90, 0.99: &j.P99} {
			if d.Past(q) {
				*p = None
			}
		}
	}
	return j
}

// distTokens is a token-count distribution for JSON, in tokens (the
// fields keep their _ms-free meaning: the values are not scaled).
func distTokens(d Dist) DistJSON { return distScaled(d, 1) }

// MetricsOf converts a State into the JSON metrics object.
func MetricsOf(st State) *MetricsJSON {
	m := &MetricsJSON{
		Running: st.Running, Waiting: st.Waiting, KVCacheUsageRatio: st.KVUsage, KVCacheUsageRatioMax: st.KVUsageMax,
		PrefixCacheHitRatio: st.PrefixHit, PreemptionsPerS: st.PreemptionsPS,
		PromptTokensPerS: st.PromptTPS, GenerationTokensPerS: st.GenTPS, RequestsPerS: st.RequestsPS, RequestsFromLog: st.RequestsFromLog,
		SpecDecodeAcceptance: st.SpecAccept, KVCapacityTokens: st.KVCapacityTokens,
		TTFTms: DistMS(st.Latency[TTFT]), TPOTms: DistMS(st.Latency[TPOT]), ITLms: DistMS(st.Latency[ITL]),
		E2Ems: DistMS(st.Latency[E2E]), Queuems: DistMS(st.Latency[Queue]),
		Prefillms: DistMS(st.Latency[Prefill]), Decodems: DistMS(st.Latency[Decode]),
		FinishReasons: st.FinishShare, WindowS: st.RateWindow.Seconds(), Source: st.Source,
		Restarts: len(st.Restarts), Engines: st.Engines,
	}
	m.EnginePromptTokensPerS, m.EngineGenerationTokensPerS = st.EngineOwnTPS()
	if m.WindowS == 0 {
		for _, d := range st.Latency {
			if d.Window > 0 {
				m.WindowS = d.Window.Seconds()
				break
			}
		}
	}
	m.WindowS = math.Round(m.WindowS*1000) / 1000 // ms precision: scrape jitter is noise
	for l, d := range st.SinceStart {
		if m.SinceStart == nil {
			m.SinceStart = map[string]DistJSON{}
		}
		if l.Tokens() {
			// token counts per request or step: tokens, not ×1000 "ms"
			m.SinceStart[string(l)+"_tokens"] = distTokens(d)
			continue
		}
		m.SinceStart[string(l)+"_ms"] = DistMS(d)
	}
	return m
}
