package exporter

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The families, named by Prometheus conventions: llmtop_ prefix, base units
// (seconds, ratios 0–1), _total only on counters. Windowed values carry the
// configured window in a window label ("1m"); llmtop_window_seconds says how
// much of it the data covers (less right after a restart: a window never
// mixes two runs). Percentiles are separate series with a percentile label
// ("99"): promtool refuses a quantile label on anything but a summary, and
// these are not summaries (their count and sum are not cumulative).

var (
	epLabels     = []string{"endpoint", "engine", "model"}
	windowLabels = []string{"endpoint", "engine", "model", "window"}
	pctLabels    = []string{"endpoint", "engine", "model", "window", "percentile", "estimate"}
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	d := prometheus.NewDesc(name, help, labels, nil)
	allDescs = append(allDescs, d)
	return d
}

var allDescs []*prometheus.Desc

// missingCodes lists llmtop_check_missing's reasons, for its help.
func missingCodes() string {
	var b strings.Builder
	for i, r := range diagnosis.MissingReasons {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Code)
	}
	return b.String()
}

var (
	dBuildInfo   = desc("llmtop_build_info", "llmtop's version; always 1.", "version")
	dLastRefresh = desc("llmtop_last_refresh_timestamp_seconds", "When llmtop last refreshed its view of the endpoints (Unix time). Alert when it falls behind: the other llmtop series are then stale.")
	dEvaluations = desc("llmtop_rule_evaluations_total", "How many times llmtop ran its diagnosis rules.")

	dEndpointInfo  = desc("llmtop_endpoint_info", "The engine an endpoint runs, as detected; always 1. simulated=\"true\" for llmtop's simulated engine.", "endpoint", "engine", "version", "simulated")
	dEndpointState = desc("llmtop_endpoint_state", "The engine's lifecycle state: 1 for the current state, 0 for the others.", "endpoint", "state")
	dEndpointUp    = desc("llmtop_endpoint_up", "1 when llmtop's newest scrape of the endpoint read its metrics, 0 when it failed; absent before the first scrape.", "endpoint", "engine")
	dScrapeError   = desc("llmtop_endpoint_scrape_error", "1 while llmtop's newest scrape of the endpoint failed, with the kind of failure (refused, timeout, auth, not_found, server, malformed, too_large, stalled, redirect, unreachable).", "endpoint", "kind")
	dLastSuccess   = desc("llmtop_endpoint_last_success_timestamp_seconds", "When llmtop last read the endpoint's metrics (Unix time).", "endpoint")

	dRunning    = desc("llmtop_requests_running", "Requests in the engine's running batch (the engine's own gauge).", epLabels...)
	dWaiting    = desc("llmtop_requests_waiting", "Requests waiting in the engine's queue (the engine's own gauge).", epLabels...)
	dKVUsage    = desc("llmtop_kv_cache_usage_ratio", "KV-cache usage, 0–1 (an approximation where the engine has no KV metric: see llmtop snapshot --json notes).", epLabels...)
	dKVUsageMax = desc("llmtop_kv_cache_usage_ratio_max", "The most KV-cache usage can be, 0–1, present only while llmtop_kv_cache_usage_ratio is a floor (llama.cpp when whether its KV cache is unified is unknown: attach its log or run llmtop on its machine).", epLabels...)
	dKVCapacity = desc("llmtop_kv_cache_capacity_tokens", "Tokens the engine's KV cache holds, as the engine states it.", epLabels...)

	dPrefixHit     = desc("llmtop_prefix_cache_hit_ratio", "Prefix-cache hit ratio over the window, 0–1.", windowLabels...)
	dPreemptPS     = desc("llmtop_preemptions_per_second", "Preemptions (SGLang: retractions) per second over the window.", windowLabels...)
	dPromptTPS     = desc("llmtop_prompt_tokens_per_second", "Prompt (prefill) tokens per second over the window.", windowLabels...)
	dGenTPS        = desc("llmtop_generation_tokens_per_second", "Generated tokens per second over the window.", windowLabels...)
	dRequestsPS    = desc("llmtop_requests_per_second", "Finished requests per second over the window.", windowLabels...)
	dSpecAccept    = desc("llmtop_spec_decode_acceptance_ratio", "Speculative-decoding acceptance ratio over the window, 0–1.", windowLabels...)
	dWindowCovered = desc("llmtop_window_seconds", "How many seconds of the window the rates and latencies cover (less than the window right after a restart or a first scrape).", windowLabels...)

	dFinding       = desc("llmtop_finding", "1 while llmtop's diagnosis finding id is open on the endpoint (absent once it closes). severity is info, warn or crit.", "endpoint", "id", "category", "severity")
	dFindingInfo   = desc("llmtop_finding_info", "An open finding's title and the first action llmtop suggests; always 1. Join on endpoint and id.", "endpoint", "id", "title", "action")
	dFindingOpened = desc("llmtop_finding_opened_timestamp_seconds", "When the open finding opened (Unix time).", "endpoint", "id")
	dNotChecked    = desc("llmtop_check_missing", "How many checks llmtop could not make, by why their input was missing (reason: "+missingCodes()+"); which checks: llmtop diagnose, or a snapshot's missing lines. No finding is not the same as fine.", "reason")
)

// latency is one latency family: percentiles, mean and observations.
type latency struct {
	pct, mean, count *prometheus.Desc
	get              func(*model.MetricsJSON) model.DistJSON
}

func newLatency(base, what string, get func(*model.MetricsJSON) model.DistJSON) latency {
	return latency{
		pct:   desc("llmtop_"+base+"_seconds", what+" percentile over the window, in seconds; estimate=\"true\" when interpolated from the engine's histogram buckets.", pctLabels...),
		mean:  desc("llmtop_"+base+"_mean_seconds", what+" mean over the window, in seconds.", windowLabels...),
		count: desc("llmtop_"+base+"_observations", what+": observations in the window.", windowLabels...),
		get:   get,
	}
}

var latencies = []latency{
	newLatency("ttft", "Time to first token", func(m *model.MetricsJSON) model.DistJSON { return m.TTFTms }),
	newLatency("tpot", "Time per output token (per-request mean, first token excluded)", func(m *model.MetricsJSON) model.DistJSON { return m.TPOTms }),
	newLatency("itl", "Inter-token latency", func(m *model.MetricsJSON) model.DistJSON { return m.ITLms }),
	newLatency("e2e_request_latency", "End-to-end request latency", func(m *model.MetricsJSON) model.DistJSON { return m.E2Ems }),
	newLatency("queue_time", "Time requests waited in the queue", func(m *model.MetricsJSON) model.DistJSON { return m.Queuems }),
}

var lifecycles = []model.Lifecycle{
	model.LifeUnknown, model.LifeStarting, model.LifeServing, model.LifeStopping,
	model.LifeStopped, model.LifeCrashed, model.LifeUnreachable, model.LifeGone,
}

// windowLabel writes the window as Prometheus writes durations: 1m, 5m, 90s.
func windowLabel(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return promDuration(d)
}
