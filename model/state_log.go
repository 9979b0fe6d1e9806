package model

import (
	"fmt"
	"maps"
	"math"
	"time"
)

// Engines without a latency histogram (llama.cpp, Ollama; TGI gives only
// means for some phases) time every request in their log. withLog puts
// those per-request observations into a State's latencies:
//
//   - a latency the picture lacks becomes the log's exact distribution
//     (Source FromLog, Count requests, over the same window);
//   - a mean-only metric gets the log's exact percentiles and count, and
//     keeps its own mean (metrics win where both give a value);
//   - a metric with quantiles stays as it is; the log only cross-checks it;
//   - where the engine times no queue but publishes its waiting requests
//     (llama.cpp's requests_deferred), the mean queue wait is estimated by
//     Little's law, and TTFT's mean is queue + prefill, labelled so.
//
// The log's window ends where the picture's does (or at the log's newest
// line when later) and never reaches back before either run's start.
func (s *Store) withLog(st *State, picked *endpointSeries, k Key, window time.Duration) {
	lg := s.series[srcKey{k, FromLog}]
	if lg == nil && k.Model != "" {
		lg = s.series[srcKey{Key{Endpoint: k.Endpoint}, FromLog}]
	}
	if lg == nil || lg.obs.seen == 0 || !lg.pending.IsZero() {
		return
	}
	if window > s.cfg.MaxWindow {
		window = s.cfg.MaxWindow
	}
	// Its own map before writing into it: a derived sample's is shared.
	st.Latency = maps.Clone(st.Latency)
	end := st.Time
	if lg.last.Time.After(end) {
		end = lg.last.Time
	}
	from := end.Add(-window)
	// Never before the log's own run (its start banner), nor before a
	// restart the metrics saw. The scrape's first sample is no boundary:
	// the log's backlog, read at start, comes in about then.
	// The log was read from when the endpoint was first scraped in this
	// run, not from its first timed request: bounded by that request, a
	// burst after an idle minute read as the rate of the whole window
	// (a real llama-server: 4.62 req/s "over 40s" beside rates over 51s,
	// where 185 requests in 51 s is 3.6).
	logStart := lg.runStart
	if sc := s.series[srcKey{k, FromScrape}]; sc != nil && sc != lg && !sc.runStart.IsZero() && sc.runStart.Before(logStart) {
		logStart = sc.runStart
	}
	bounds := []time.Time{logStart}
	if n := len(st.Restarts); n > 0 {
		bounds = append(bounds, st.Restarts[n-1])
	}
	for _, rs := range bounds {
		if b := rs.Add(-time.Nanosecond); b.After(from) {
			from = b
		}
	}
	for _, l := range Latencies {
		ld, ok := lg.obs.dist(l, from, end)
		if !ok {
			continue
		}
		md := st.Latency[l]
		switch {
		case picked != lg && md.Exposed && (md.P50.OK || md.P99.OK || md.AllBelow.OK):
			md.LogCheck = crossCheck("p50", md.P50, ld.P50)
			if md.LogCheck == "" {
				md.LogCheck = crossCheck("mean", md.Mean, ld.Mean)
			}
			st.Latency[l] = md
		case picked != lg && md.Exposed && md.Mean.OK:
			ld.LogCheck = crossCheck("mean", md.Mean, ld.Mean)
			ld.Mean, ld.Approx = md.Mean, "percentiles and count from the engine's per-request log lines; mean from its metrics"
			st.Latency[l] = ld
		default:
			st.Latency[l] = ld
		}
	}
	s.queueByLittle(st, picked, from, end)
	if !st.RequestsPS.OK && end.Sub(from) >= minLogRateSpan {
		// the metrics count no requests (llama.cpp): the log timed each
		// one that finished
		st.RequestsPS = Some(float64(lg.obs.count(from, end)) / end.Sub(from).Seconds())
		st.RequestsFromLog = true
	}
}

// minLogRateSpan is the shortest window a rate of logged requests is
// given over (a few seconds after the log's start, one request would read
// as a burst).
const minLogRateSpan = 10 * time.Second

// crossCheck says when the log's figure and the metrics' differ by more
// than a quarter (and 0.1 ms): the two should describe the same requests.
func crossCheck(what string, metric, log Opt) string {
	if !metric.OK || !log.OK {
		return ""
	}
	d := math.Abs(metric.V - log.V)
	if d <= 0.0001 || d <= 0.25*math.Max(metric.V, log.V) {
		return ""
	}
	return fmt.Sprintf("log %s %s vs metrics %s: they disagree by more than 25%%", what, secText(log.V), secText(metric.V))
}

func secText(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.1fms", v*1000)
	}
	return fmt.Sprintf("%.2fs", v)
}

// LittleApprox labels a queue wait estimated from the engine's gauges.
const LittleApprox = "estimate by Little's law: mean waiting ÷ mean running × mean time in a slot (prefill + decode, from the log), over the window; the engine logs no per-request queue time"

// queueByLittle estimates the mean queue wait where the engine times no
// queue but its log times each request's stay in a slot (llama.cpp). By
// Little's law, waiting = λ·W and running = λ·S (S the mean prefill +
// decode time the log shows), so W = mean waiting ÷ mean running × S. It
// uses no arrival times (a log without wall-clock stamps, or its backlog
// read at start, would bunch them), holds for a queue that is steady over
// the window, and is a mean, with no percentiles. TTFT's mean then is
// queue + prefill, and E2E's queue + prefill + decode, where the engine
// does not expose them.
func (s *Store) queueByLittle(st *State, picked *endpointSeries, from, end time.Time) {
	pf, dc := st.Latency[Prefill], st.Latency[Decode]
	if st.Latency[Queue].Exposed || picked == nil || pf.Source != FromLog || dc.Source != FromLog ||
		pf.Count == 0 || !pf.Mean.OK || !dc.Mean.OK {
		return
	}
	waiting, okW := picked.gaugeMean(Waiting, from, end)
	running, okR := picked.gaugeMean(Running, from, end)
	if !okW || !okR || running <= 0 {
		return // nothing ran in the window: no rate to divide by
	}
	q := Dist{Exposed: true, Source: FromLog, Mean: Some(waiting / running * (pf.Mean.V + dc.Mean.V)),
		Count: pf.Count, Window: pf.Window, Approx: LittleApprox}
	st.Latency[Queue] = q
	if t := st.Latency[TTFT]; !t.Exposed {
		st.Latency[TTFT] = Dist{Exposed: true, Source: FromLog, Mean: Some(q.Mean.V + pf.Mean.V), Count: pf.Count, Window: pf.Window,
			Approx: "mean queue wait (Little's law estimate) + mean prefill (from the log); no percentiles"}
	}
	if e := st.Latency[E2E]; !e.Exposed {
		st.Latency[E2E] = Dist{Exposed: true, Source: FromLog, Mean: Some(q.Mean.V + pf.Mean.V + dc.Mean.V), Count: pf.Count, Window: pf.Window,
			Approx: "mean queue wait (Little's law estimate) + mean prefill + mean decode (from the log); no percentiles"}
	}
}

// gaugeMean is the mean of a gauge's points in (from, end].
func (es *endpointSeries) gaugeMean(g Gauge, from, end time.Time) (float64, bool) {
	r := es.spark[string(g)]
	if r == nil {
		return 0, false
	}
	var sum float64
	n := 0
	for i := r.Len() - 1; i >= 0; i-- {
		p := r.At(i)
		if !p.T.After(from) {
			break
		}
		if p.OK && !p.T.After(end) {
			sum += p.V
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
