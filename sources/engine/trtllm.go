package engine

import (
	"encoding/json"
	"errors"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

const trtIterNote = "running, waiting and KV from trtllm-serve's /metrics iteration stats (JSON); " +
	"reading them drains the stats queue other readers share"

// collectTRTLLM reads trtllm-serve: Prometheus text at /prometheus/metrics
// (only with return_perf_metrics: true) and, when that lacks the iteration
// gauges or is off, the JSON iteration stats at /metrics.
func collectTRTLLM(c *collector) ([]model.Sample, error) {
	fams, promErr := c.prom(c.metricsPath())
	var ss []model.Sample
	if promErr == nil {
		if p := engines.TRTLLM.Prefix(); !hasPrefix(fams, p) {
			promErr = &scrapeError{model.ErrNotFound, c.s.cfg.URL + c.lastPath + " answers, but without any " + p + " metrics", c.a.hint404}
		} else {
			ss = mapTRTLLM(fams, c.meta())
			if _, ok := ss[0].Gauges[model.Running]; ok {
				return ss, nil
			}
		}
	}
	path := c.lastPath
	body, err := c.get("/metrics", "application/json")
	c.lastPath = path
	if err != nil {
		if promErr != nil {
			return nil, promErr
		}
		return ss, nil // Prometheus without iteration gauges is still a scrape
	}
	var stats []trtIterStats
	if json.Unmarshal(body, &stats) != nil {
		if ss == nil && c.s.cfg.MetricsPath == "" {
			// Prometheus text at /metrics (a build or a metrics port that
			// serves it there; the probe may have recognised it from
			// these very metrics): read it from the path that answered,
			// never "started without its metrics switch".
			if fams, err := parseProm(body); err == nil && hasPrefix(fams, "trtllm_") {
				c.lastPath = "/metrics"
				c.notes = append(c.notes, limitSeries(fams, maxSeries, maxLabelValues)...)
				c.notes = append(c.notes, rejectImplausible(fams)...)
				return mapTRTLLM(fams, c.meta()), nil
			}
		}
		if promErr != nil {
			return nil, promErr
		}
		return ss, nil
	}
	if ss == nil {
		var he *probe.HTTPError
		if !errors.As(promErr, &he) || he.Status != 404 {
			return nil, promErr // a real failure of the Prometheus route
		}
		s := c.meta().sample("")
		s.Notes = append(s.Notes, "Prometheus route off ("+c.a.metricsPath+"): no latencies or token rates; "+c.a.hint404)
		ss = []model.Sample{s}
	}
	if applyTRTIter(&ss[0], stats) {
		ss[0].Notes = append(ss[0].Notes, trtIterNote)
	}
	return ss, nil
}

// mapTRTLLM maps trtllm-serve's Prometheus families. Its model_name label
// reads "undefined" in the versions seen: the model then comes from
// /v1/models.
func mapTRTLLM(f families, m meta) []model.Sample {
	name := ""
	if ns := modelNames(f, engines.TRTLLM.Prefix(), "model_name"); len(ns) == 1 && ns[0] != "undefined" {
		name = ns[0]
	}
	v := view{fams: f}
	s := m.sample(name)
	setGauge(&s, model.Running, v, names(model.TRTLLM, model.Running)...)
	setGauge(&s, model.Waiting, v, names(model.TRTLLM, model.Waiting)...)
	setGauge(&s, model.KVUsage, v, names(model.TRTLLM, model.KVUsage)...)
	setGauge(&s, model.PrefixHitGauge, v, names(model.TRTLLM, model.PrefixHitGauge)...)
	setGauge(&s, model.MaxRunning, v, names(model.TRTLLM, model.MaxRunning)...)
	if blocks, ok := v.sum(engines.TRTLLMKVMaxBlocks); ok {
		if per, ok := v.sum(engines.TRTLLMKVTokensPerBlock); ok && per > 0 {
			s.Gauges[model.KVCapacityTokens] = blocks * per
		}
	}

	setCounter(&s, model.PromptTokens, v, names(model.TRTLLM, model.PromptTokens)...)
	setCounter(&s, model.GenTokens, v, names(model.TRTLLM, model.GenTokens)...)
	setCounter(&s, model.RequestErrors, v, names(model.TRTLLM, model.RequestErrors)...)
	if reasons := v.byLabel(engines.TRTLLMRequestSuccess, "finished_reason"); len(reasons) > 0 {
		readFrom(&s, model.FinishReasons, engines.TRTLLMRequestSuccess)
		var total float64
		for r, x := range reasons {
			if r != "" {
				// A series without finished_reason counts as a request, but
				// says nothing about why it finished: no "" reason (drawn as
				// "finish 100%").
				s.FinishReasons[r] = x
			}
			total += x
		}
		s.Counters[model.Requests] = total
	}
	// Prefix hits in tokens when exposed, else in blocks (reused vs missed).
	if hits, ok := v.sum(engines.TRTLLMPromptCached); ok && has(s.Counters, model.PromptTokens) {
		s.Counters[model.PrefixHits] = hits
		s.Counters[model.PrefixQueries] = s.Counters[model.PromptTokens]
		readFrom(&s, string(model.PrefixHits), engines.TRTLLMPromptCached)
		readFrom(&s, string(model.PrefixQueries), s.From[string(model.PromptTokens)])
	} else if reused, ok := v.sum(engines.TRTLLMKVReusedBlocks); ok {
		if missed, ok := v.sum(engines.TRTLLMKVMissedBlocks); ok {
			s.Counters[model.PrefixHits] = reused
			s.Counters[model.PrefixQueries] = reused + missed
			readFrom(&s, string(model.PrefixHits), engines.TRTLLMKVReusedBlocks)
			readDerived(&s, model.TRTLLM, string(model.PrefixQueries), 1)
			s.Notes = append(s.Notes, "prefix-cache hit ratio in KV blocks (reused / reused+missed), not tokens")
		}
	}
	if setCounter(&s, model.SpecDraftTokens, v, names(model.TRTLLM, model.SpecDraftTokens)...) != "" {
		setCounter(&s, model.SpecAcceptTokens, v, names(model.TRTLLM, model.SpecAcceptTokens)...)
	}

	setLatency(&s, model.TTFT, v, names(model.TRTLLM, model.TTFT)...)
	setLatency(&s, model.TPOT, v, names(model.TRTLLM, model.TPOT)...)
	setLatency(&s, model.E2E, v, names(model.TRTLLM, model.E2E)...)
	setLatency(&s, model.Queue, v, names(model.TRTLLM, model.Queue)...)
	setLatency(&s, model.Prefill, v, names(model.TRTLLM, model.Prefill)...)
	setLatency(&s, model.Decode, v, names(model.TRTLLM, model.Decode)...)
	setLatency(&s, model.KVTransfer, v, names(model.TRTLLM, model.KVTransfer)...)
	setHistSum(&s, model.KVTransferBytes, v, 1, names(model.TRTLLM, model.KVTransferBytes)...)
	if has(s.Counters, model.PromptTokens) {
		s.Notes = append(s.Notes, "token rates counted when requests finish")
	}
	return []model.Sample{s}
}

// trtIterStats is one iteration-stats entry of trtllm-serve's JSON
// /metrics (the executor's IterationStats, camelCase).
type trtIterStats struct {
	NumActiveRequests    *float64 `json:"numActiveRequests"`
	NumQueuedRequests    *float64 `json:"numQueuedRequests"`
	MaxNumActiveRequests *float64 `json:"maxNumActiveRequests"`
	// InflightBatchingStats: the requests scheduled in this iteration
	// (its batch) and those paused for want of KV blocks (TensorRT-LLM's
	// preemption under the MAX_UTILIZATION scheduler).
	InflightBatchingStats *struct {
		NumScheduledRequests *float64 `json:"numScheduledRequests"`
		NumPausedRequests    *float64 `json:"numPausedRequests"`
	} `json:"inflightBatchingStats"`
	KVCacheStats *struct {
		MaxNumBlocks   float64  `json:"maxNumBlocks"`
		UsedNumBlocks  float64  `json:"usedNumBlocks"`
		TokensPerBlock float64  `json:"tokensPerBlock"`
		CacheHitRate   *float64 `json:"cacheHitRate"`
	} `json:"kvCacheStats"`
}

// applyTRTIter fills the gauges the Prometheus route lacked from the newest
// iteration entry; false when there was none (an idle server returns []).
func applyTRTIter(s *model.Sample, stats []trtIterStats) bool {
	if len(stats) == 0 {
		return false
	}
	it := stats[len(stats)-1]
	set := func(g model.Gauge, p *float64) {
		if _, ok := s.Gauges[g]; !ok && p != nil && finite(*p) {
			s.Gauges[g] = *p
		}
	}
	set(model.Running, it.NumActiveRequests)
	set(model.Waiting, it.NumQueuedRequests)
	set(model.MaxRunning, it.MaxNumActiveRequests)
	if ib := it.InflightBatchingStats; ib != nil {
		set(model.BatchPerStep, ib.NumScheduledRequests)
		set(model.Paused, ib.NumPausedRequests)
	}
	if kv := it.KVCacheStats; kv != nil && kv.MaxNumBlocks > 0 {
		ratio := kv.UsedNumBlocks / kv.MaxNumBlocks
		set(model.KVUsage, &ratio)
		if kv.TokensPerBlock > 0 {
			tokens := kv.MaxNumBlocks * kv.TokensPerBlock
			set(model.KVCapacityTokens, &tokens)
		}
		set(model.PrefixHitGauge, kv.CacheHitRate)
	}
	return true
}
