package report

import (
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/llmtop/llmtop/model"
)

// SLO is the service level a request must meet to count towards goodput;
// zero fields are not checked. vllm's --goodput ttft:MS tpot:MS e2el:MS.
type SLO struct {
	TTFT, TPOT, E2EL time.Duration
}

// Any reports whether any objective is set.
func (s SLO) Any() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2EL > 0 }

// Met reports whether a successful record meets every objective set. TPOT
// is 0 for a single-token answer, as vllm counts it.
func (s SLO) Met(r *Record) bool {
	if s.TTFT > 0 && r.TTFT > s.TTFT {
		return false
	}
	if s.TPOT > 0 && tpot(r) > s.TPOT.Seconds() {
		return false
	}
	return s.E2EL <= 0 || r.E2EL <= s.E2EL
}

// tpot is (E2EL − TTFT)/(output tokens − 1) in seconds: the first token is
// excluded. 0 when there is at most one output token.
func tpot(r *Record) float64 {
	if r.OutputTokens <= 1 {
		return 0
	}
	return (r.E2EL - r.TTFT).Seconds() / float64(r.OutputTokens-1)
}

// Metrics are the numbers of one run under `vllm bench serve`'s names.
// Latencies are milliseconds; null means no observations.
type Metrics struct {
	Duration             float64   `json:"duration"` // seconds
	Completed            int       `json:"completed"`
	Failed               int       `json:"failed"`
	Cancelled            int       `json:"cancelled"` // in flight when the run was stopped; not failures
	TotalInputTokens     int       `json:"total_input_tokens"`
	TotalOutputTokens    int       `json:"total_output_tokens"`
	RequestThroughput    float64   `json:"request_throughput"`
	RequestGoodput       model.Opt `json:"request_goodput"` // null when no SLO was given
	OutputThroughput     float64   `json:"output_throughput"`
	TotalTokenThroughput float64   `json:"total_token_throughput"`
	MaxOutputTokensPerS  float64   `json:"max_output_tokens_per_s"`
	MaxConcurrent        int       `json:"max_concurrent_requests"`

	MeanTTFT   model.Opt `json:"mean_ttft_ms"`
	MedianTTFT model.Opt `json:"median_ttft_ms"`
	StdTTFT    model.Opt `json:"std_ttft_ms"`
	P90TTFT    model.Opt `json:"p90_ttft_ms"`
	P95TTFT    model.Opt `json:"p95_ttft_ms"`
	P99TTFT    model.Opt `json:"p99_ttft_ms"`
	MeanTPOT   model.Opt `json:"mean_tpot_ms"`
	MedianTPOT model.Opt `json:"median_tpot_ms"`
	StdTPOT    model.Opt `json:"std_tpot_ms"`
	P90TPOT    model.Opt `json:"p90_tpot_ms"`
	P95TPOT    model.Opt `json:"p95_tpot_ms"`
	P99TPOT    model.Opt `json:"p99_tpot_ms"`
	MeanITL    model.Opt `json:"mean_itl_ms"`
	MedianITL  model.Opt `json:"median_itl_ms"`
	StdITL     model.Opt `json:"std_itl_ms"`
	P90ITL     model.Opt `json:"p90_itl_ms"`
	P95ITL     model.Opt `json:"p95_itl_ms"`
	P99ITL     model.Opt `json:"p99_itl_ms"`
	MeanE2EL   model.Opt `json:"mean_e2el_ms"`
	MedianE2EL model.Opt `json:"median_e2el_ms"`
	StdE2EL    model.Opt `json:"std_e2el_ms"`
	P90E2EL    model.Opt `json:"p90_e2el_ms"`
	P95E2EL    model.Opt `json:"p95_e2el_ms"`
	P99E2EL    model.Opt `json:"p99_e2el_ms"`

	// ErrorsByKind counts failed (and cancelled) requests by ErrKind;
	// HTTP failures are keyed "http_<status>".
	ErrorsByKind map[string]int `json:"errors_by_kind"`
	// ErrorSamples holds the first few error messages.
	ErrorSamples []string `json:"error_samples,omitempty"`
	// MaxRetryAfterS is the longest Retry-After a 429 asked for.
	MaxRetryAfterS model.Opt `json:"max_retry_after_s"`
	// Requests whose token counts are estimates because the response had no
	// usage: output from the content chunk count, input from the target length.
	OutputTokensFromChunks int `json:"output_tokens_from_chunks"`
	InputTokensFromTarget  int `json:"input_tokens_from_target"`
	// Successful answers whose text (the first 2 KB of content) is white
	// space only, repeats the prompt, or loops (Record.Blank, Echoed,
	// Repetitive). Streams with no content at all are failures
	// (empty_response), not counted here.
	BlankResponses      int `json:"blank_responses"`
	EchoedResponses     int `json:"echoed_responses"`
	RepetitiveResponses int `json:"repetitive_responses"`
	// FinishReasons counts successful answers by the reason the server
	// gave for ending them ("length": max_tokens reached, "stop": the
	// model's end or a stop string); answers without one are not counted.
	FinishReasons map[string]int `json:"finish_reasons"`
}

const maxErrorSamples = 5

// ReasonsByCount lists the keys of FinishReasons, most frequent first (ties
// by name).
func ReasonsByCount(reasons map[string]int) []string {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if reasons[keys[i]] != reasons[keys[j]] {
			return reasons[keys[i]] > reasons[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Compute turns records into Metrics over a run of duration dur, as vllm's
// calculate_metrics does (TPOT excludes the first token; ITL is every gap
// between content chunks; goodput counts successful requests meeting every
// objective in slo, null when none is set).
func Compute(recs []Record, dur time.Duration, slo SLO) Metrics {
	m := Metrics{Duration: dur.Seconds(), ErrorsByKind: map[string]int{}, FinishReasons: map[string]int{}}
	var ttfts, tpots, itls, e2els []float64
	good := 0
	for i := range recs {
		r := &recs[i]
		if !r.OK {
			key := string(r.Err)
			if r.Err == ErrHTTP {
				key = "http_" + strconv.Itoa(r.Status)
			}
			m.ErrorsByKind[key]++
			if r.Err == ErrCancelled {
				m.Cancelled++
				continue
			}
			m.Failed++
			if len(m.ErrorSamples) < maxErrorSamples && r.Detail != "" && !slices.Contains(m.ErrorSamples, r.Detail) {
				m.ErrorSamples = append(m.ErrorSamples, r.Detail)
			}
			if r.RetryAfter > 0 && (!m.MaxRetryAfterS.OK || r.RetryAfter.Seconds() > m.MaxRetryAfterS.V) {
				m.MaxRetryAfterS = model.Some(r.RetryAfter.Seconds())
			}
			continue
		}
		m.Completed++
		m.TotalInputTokens += r.PromptTokens
		m.TotalOutputTokens += r.OutputTokens
		if !r.OutputFromUsage {
			m.OutputTokensFromChunks++
		}
		if !r.PromptFromUsage {
			m.InputTokensFromTarget++
		}
		m.BlankResponses += b2i(r.Blank)
		m.EchoedResponses += b2i(r.Echoed)
		m.RepetitiveResponses += b2i(r.Repetitive)
		if r.FinishReason != "" {
			m.FinishReasons[r.FinishReason]++
		}
		ttfts = append(ttfts, r.TTFT.Seconds())
		e2els = append(e2els, r.E2EL.Seconds())
		if r.OutputTokens > 1 {
			tpots = append(tpots, tpot(r))
		}
		for _, g := range r.ITL {
			itls = append(itls, g.Seconds())
		}
		if slo.Any() && slo.Met(r) {
			good++
		}
	}
	if s := dur.Seconds(); s > 0 {
		m.RequestThroughput = float64(m.Completed) / s
		m.OutputThroughput = float64(m.TotalOutputTokens) / s
		m.TotalTokenThroughput = float64(m.TotalInputTokens+m.TotalOutputTokens) / s
		if slo.Any() {
			m.RequestGoodput = model.Some(float64(good) / s)
		}
	}
	set := func(s Summary, mean, median, std, p90, p95, p99 *model.Opt) {
		*mean, *median, *std, *p90, *p95, *p99 = s.Mean, s.Median, s.Std, s.P90, s.P95, s.P99
	}
	set(summarize(ttfts), &m.MeanTTFT, &m.MedianTTFT, &m.StdTTFT, &m.P90TTFT, &m.P95TTFT, &m.P99TTFT)
	set(summarize(tpots), &m.MeanTPOT, &m.MedianTPOT, &m.StdTPOT, &m.P90TPOT, &m.P95TPOT, &m.P99TPOT)
	set(summarize(itls), &m.MeanITL, &m.MedianITL, &m.StdITL, &m.P90ITL, &m.P95ITL, &m.P99ITL)
	set(summarize(e2els), &m.MeanE2EL, &m.MedianE2EL, &m.StdE2EL, &m.P90E2EL, &m.P95E2EL, &m.P99E2EL)
	m.MaxConcurrent = peakConcurrency(recs)
	m.MaxOutputTokensPerS = peakTokensPerSecond(recs)
	return m
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// peakConcurrency sweeps successful requests' [start, start+E2EL) intervals,
// ends before starts at equal times, as vllm does.
func peakConcurrency(recs []Record) int {
	type ev struct {
		t int64
		d int
	}
	var evs []ev
	for i := range recs {
		if recs[i].OK {
			s := recs[i].Start.UnixNano()
			evs = append(evs, ev{s, 1}, ev{s + int64(recs[i].E2EL), -1})
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return evs[i].d < evs[j].d
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.d
		peak = max(peak, cur)
	}
	return peak
}

// peakTokensPerSecond buckets content chunk arrivals of successful requests
// into whole seconds from the first start and returns the fullest bucket
// (vllm's max_output_tokens_per_s counts chunks the same way).
func peakTokensPerSecond(recs []Record) float64 {
	var first time.Time
	for i := range recs {
		if recs[i].OK && (first.IsZero() || recs[i].Start.Before(first)) {
			first = recs[i].Start
		}
	}
	if first.IsZero() {
		return 0
	}
	buckets := map[int64]int{}
	for i := range recs {
		r := &recs[i]
		if !r.OK || r.Chunks == 0 {
			continue
		}
		t := r.Start.Sub(first) + r.TTFT
		buckets[int64(t/time.Second)]++
		for _, g := range r.ITL {
			t += g
			buckets[int64(t/time.Second)]++
		}
	}
	peak := 0
	for _, n := range buckets {
		peak = max(peak, n)
	}
	return float64(peak)
}
