package engine

import (
	"fmt"
	"strconv"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// mapSGLang maps an SGLang scrape (only served with --enable-metrics) onto
// one sample per model_name (`name` in the first 2024 releases).
//
// Scheduler-side series carry tp_rank/pp_rank (and dp_rank with DP
// attention). Only attention-TP rank 0 reports unless
// --enable-metrics-for-all-schedulers is set. Schedulers of one DP group
// run the same batch, so counts are summed over DP groups (dp_rank), each
// read from its lowest tp_rank, and only the first pipeline stage is read:
// with the flag on a plain TP deployment, summing every tp_rank would count
// each request TP times. Fractions (token_usage, cache_hit_rate) are
// averaged, never summed.
func mapSGLang(f families, m meta) []model.Sample {
	lbl := "model_name"
	names := modelNames(f, engines.SGLang.Prefix(), lbl)
	if len(names) == 0 {
		if names = modelNames(f, engines.SGLang.Prefix(), "name"); len(names) > 0 {
			lbl = "name"
		}
	}
	if len(names) == 0 {
		names = []string{""}
	}
	parts := byModel(f, lbl)
	out := make([]model.Sample, 0, len(names))
	for _, name := range names {
		v := modelView(f, parts, name)
		keep, groups, ranks := sglangRanks(v)
		v.skip = func(s *dto.Metric) bool { return !keep(s) }
		smp := m.sample(name)
		mapSGLangModel(&smp, v)
		if ranks > groups {
			smp.Notes = append(smp.Notes, fmt.Sprintf("%d scheduler ranks report (--enable-metrics-for-all-schedulers): "+
				"read once per DP group (%d), fractions averaged", ranks, groups))
		} else if groups > 1 {
			smp.Notes = append(smp.Notes, fmt.Sprintf("counts summed over %d DP-attention groups, fractions averaged", groups))
		}
		out = append(out, smp)
	}
	return out
}

// sglangRanks decides which scheduler series to read: per dp_rank the
// lowest tp_rank, and the lowest pp_rank. Series without rank labels
// (tokenizer side) are always read. It also returns how many DP groups and
// how many scheduler ranks were seen.
func sglangRanks(v view) (keep func(*dto.Metric) bool, groups, ranks int) {
	minTP := map[string]int{} // dp_rank → lowest tp_rank
	minPP := -1
	seen := map[string]bool{}
	for _, s := range v.series(engines.SGLangRunning) {
		tp, err := strconv.Atoi(label(s, "tp_rank"))
		if err != nil {
			continue
		}
		dp := label(s, "dp_rank")
		if cur, ok := minTP[dp]; !ok || tp < cur {
			minTP[dp] = tp
		}
		if pp, err := strconv.Atoi(label(s, "pp_rank")); err == nil && (minPP < 0 || pp < minPP) {
			minPP = pp
		}
		seen[dp+"/"+label(s, "tp_rank")] = true
	}
	keep = func(s *dto.Metric) bool {
		if pp, err := strconv.Atoi(label(s, "pp_rank")); err == nil && minPP >= 0 && pp != minPP {
			return false
		}
		tp, err := strconv.Atoi(label(s, "tp_rank"))
		if err != nil {
			return true
		}
		want, ok := minTP[label(s, "dp_rank")]
		return !ok || tp == want
	}
	return keep, len(minTP), len(seen)
}

// setQueueGauge reads one of SGLang's QueueCount gauges: with priority
// scheduling on it serves the total under priority="" beside a breakdown
// by priority (metrics_collector.py _log_gauge_queue_count), so only the
// series without a priority are summed.
func setQueueGauge(s *model.Sample, g model.Gauge, v view, names ...string) {
	n := v.first(names...)
	if n == "" {
		return
	}
	if x, ok := v.sumWhere(n, engines.SGLangPriority, ""); ok { // engines.SGLang.TotalMatch
		s.Gauges[g] = x
		readFrom(s, string(g), n)
	}
}

func mapSGLangModel(s *model.Sample, v view) {
	setQueueGauge(s, model.Running, v, names(model.SGLang, model.Running)...)
	setQueueGauge(s, model.Waiting, v, names(model.SGLang, model.Waiting)...)
	setQueueGauge(s, model.PDBootstrapQueue, v, names(model.SGLang, model.PDBootstrapQueue)...)
	setQueueGauge(s, model.PDPreallocQueue, v, names(model.SGLang, model.PDPreallocQueue)...)
	setQueueGauge(s, model.PDTransferQueue, v, names(model.SGLang, model.PDTransferQueue)...)
	setGauge(s, model.LoRASlotsUsed, v, names(model.SGLang, model.LoRASlotsUsed)...)
	setGauge(s, model.LoRASlotsTotal, v, names(model.SGLang, model.LoRASlotsTotal)...)
	if x, n := v.mean(engines.SGLangTokenUsage); n > 0 {
		s.Gauges[model.KVUsage] = x
		readFrom(s, string(model.KVUsage), engines.SGLangTokenUsage)
	} else if used, ok := v.sum(engines.SGLangKVUsedTokens); ok {
		if total, ok := v.sum(engines.SGLangMaxTotalTokens); ok && total > 0 {
			s.Gauges[model.KVUsage] = used / total
			readDerived(s, model.SGLang, string(model.KVUsage), 0)
		}
	}
	setGauge(s, model.KVCapacityTokens, v, names(model.SGLang, model.KVCapacityTokens)...)
	if x, n := v.mean(engines.SGLangCacheHitRate); n > 0 {
		s.Gauges[model.PrefixHitGauge] = x
		readFrom(s, string(model.PrefixHitGauge), engines.SGLangCacheHitRate)
	}
	setGauge(s, model.GenTPSGauge, v, names(model.SGLang, model.GenTPSGauge)...)
	// spec_accept_rate reads 0 when speculative decoding is off; the
	// acceptance length is ≥ 1 whenever it is on.
	if l, n := v.mean(engines.SGLangSpecAcceptLength); n > 0 && l > 0 {
		if x, n := v.mean(engines.SGLangSpecAcceptRate); n > 0 {
			s.Gauges[model.SpecAcceptGauge] = x
			readFrom(s, string(model.SpecAcceptGauge), engines.SGLangSpecAcceptRate)
		}
	}

	setCounter(s, model.PromptTokens, v, names(model.SGLang, model.PromptTokens)...)
	setCounter(s, model.GenTokens, v, names(model.SGLang, model.GenTokens)...)
	setCounter(s, model.Requests, v, names(model.SGLang, model.Requests)...)
	setCounter(s, model.Preemptions, v, names(model.SGLang, model.Preemptions)...)
	// Prefix hits: cached prompt tokens out of all prompt tokens.
	if hits, ok := v.sum(engines.SGLangCachedTokens); ok {
		if q, ok := s.Counters[model.PromptTokens]; ok {
			s.Counters[model.PrefixHits] = hits
			s.Counters[model.PrefixQueries] = q
			readFrom(s, string(model.PrefixHits), engines.SGLangCachedTokens)
			readFrom(s, string(model.PrefixQueries), s.From[string(model.PromptTokens)])
		}
	}

	setLatency(s, model.TTFT, v, names(model.SGLang, model.TTFT)...)
	setLatency(s, model.ITL, v, names(model.SGLang, model.ITL)...)
	setLatency(s, model.E2E, v, names(model.SGLang, model.E2E)...)
	setLatency(s, model.Queue, v, names(model.SGLang, model.Queue)...)
	// Per-request token counts (--collect-tokens-histogram; tokenizer side).
	setLatency(s, model.PromptLen, v, names(model.SGLang, model.PromptLen)...)
	setLatency(s, model.OutputLen, v, names(model.SGLang, model.OutputLen)...)
	// The KV hand-over on a disaggregated instance, in ms on SGLang's
	// histogram (a gauge before sglang PR #19009: not read), in seconds here.
	setCounter(s, model.KVTransferFailures, v, names(model.SGLang, model.KVTransferFailures)...)
	if h, ok := v.hist(engines.SGLangKVTransferLat); ok {
		s.Latencies[model.KVTransfer] = scaleHist(h, engines.ScaleOf(model.SGLang, string(model.KVTransfer)))
		readFrom(s, string(model.KVTransfer), engines.SGLangKVTransferLat)
	}
	setHistSum(s, model.KVTransferBytes, v, engines.ScaleOf(model.SGLang, string(model.KVTransferBytes)), names(model.SGLang, model.KVTransferBytes)...)
	// Per-request stage timings; stage names seen: prefill_forward,
	// decode_forward / decode_loop, request_process, tokenize.
	const stages = engines.SGLangPerStageLatency
	if h, ok := v.histWhere(stages, "stage", "prefill_forward"); ok {
		s.Latencies[model.Prefill] = h
	}
	for _, st := range []string{"decode_forward", "decode_loop"} {
		if h, ok := v.histWhere(stages, "stage", st); ok {
			s.Latencies[model.Decode] = h
			break
		}
	}
	s.Info = sglangInfo(v)
}

// sglangInfo keeps the static capacity gauges worth showing next to the
// flags they come from.
func sglangInfo(v view) map[string]string {
	info := map[string]string{}
	for _, k := range []struct{ metric, key string }{
		{engines.SGLangContextLen, "context_len"},
		{engines.SGLangPageSize, "page_size"},
		{engines.SGLangMaxTotalTokens, "max_total_num_tokens"},
		{engines.SGLangKVCacheMemoryGB, "kv_cache_memory_gb"},
		{engines.SGLangWeightMemoryGB, "weight_memory_gb"},
	} {
		if x, n := v.mean(k.metric); n > 0 {
			info[k.key] = strconv.FormatFloat(x, 'f', -1, 64)
		}
	}
	return info
}

// scaleHist is h with its values (bucket bounds and sum) multiplied by f:
// a histogram in milliseconds read as seconds.
func scaleHist(h model.Histogram, f float64) model.Histogram {
	out := model.Histogram{Sum: h.Sum * f, Count: h.Count, Approx: h.Approx, Buckets: make([]model.Bucket, len(h.Buckets))}
	for i, b := range h.Buckets {
		out.Buckets[i] = model.Bucket{UpperBound: b.UpperBound * f, Count: b.Count}
	}
	for _, p := range h.Parts {
		out.Parts = append(out.Parts, scaleHist(p, f))
	}
	return out
}
