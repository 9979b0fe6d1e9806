package engine

import (
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// TGI exposes no TTFT histogram; its maintainers point at the prefill
// timings instead (huggingface/text-generation-inference#2887).
const (
	tgiTTFTApprox = "≈ mean validation + queue + prefill-batch time (TGI has no TTFT metric)"
	tgiKVNote     = "KV usage ≈ tokens reserved by the running batch / max batch total tokens " +
		"(" + engines.TGIBatchCurrentMaxTokens + " / " + engines.TGIBatchMaxTotalTokens + "; TGI has no KV metric)"
	tgiTokensNote = "token rates from " + engines.TGIInputLength + " / generated_tokens sums: counted when requests finish"
)

// mapTGI maps a TGI scrape. Its exporter writes counters without _total and
// has no model label: the model comes from /info. Prefill and decode are
// per batch step, not per request, and say so.
func mapTGI(f families, m meta) []model.Sample {
	v := view{fams: f}
	s := m.sample("")
	setGauge(&s, model.Running, v, names(model.TGI, model.Running)...)
	setGauge(&s, model.Waiting, v, names(model.TGI, model.Waiting)...)
	if maxTok, ok := v.sum(engines.TGIBatchMaxTotalTokens); ok && maxTok > 0 {
		s.Gauges[model.KVCapacityTokens] = maxTok
		if cur, ok := v.sum(engines.TGIBatchCurrentMaxTokens); ok {
			s.Gauges[model.KVUsage] = cur / maxTok
			readDerived(&s, model.TGI, string(model.KVUsage), 0)
			s.Notes = append(s.Notes, tgiKVNote)
		}
	}

	if succ, ok := v.sum(engines.TGIRequestSuccess); ok {
		s.FinishReasons["success"] = succ
		readDerived(&s, model.TGI, model.FinishReasons, 0)
		total := succ
		var errs float64
		for reason, x := range v.byLabel(engines.TGIRequestFailure, "err") {
			if reason == "" {
				reason = "failure" // no err label: a failure of unknown kind
			}
			s.FinishReasons[reason] += x
			errs += x
			total += x
		}
		s.Counters[model.Requests] = total
		if v.has(engines.TGIRequestFailure) {
			s.Counters[model.RequestErrors] = errs
		}
	}
	if h, ok := v.hist(engines.TGIInputLength); ok {
		s.Counters[model.PromptTokens] = h.Sum
	}
	if h, ok := v.hist(engines.TGIGeneratedTokens); ok {
		s.Counters[model.GenTokens] = h.Sum
	}
	if has(s.Counters, model.PromptTokens) || has(s.Counters, model.GenTokens) {
		s.Notes = append(s.Notes, tgiTokensNote)
	}

	setLatency(&s, model.E2E, v, names(model.TGI, model.E2E)...)
	setLatency(&s, model.Queue, v, names(model.TGI, model.Queue)...)
	setLatency(&s, model.TPOT, v, names(model.TGI, model.TPOT)...)
	stepFamily := v.first(engines.TGIBatchInference, engines.TGIBatchForward)
	if stepFamily != "" {
		if h, ok := v.histWhere(stepFamily, "method", "prefill"); ok {
			h.Approx = "per prefill batch step (" + stepFamily + "), not per request"
			s.Latencies[model.Prefill] = h
		}
		if h, ok := v.histWhere(stepFamily, "method", "decode"); ok {
			h.Approx = "per decode batch step (" + stepFamily + "), not per request"
			s.Latencies[model.Decode] = h
		}
	}
	val, okV := v.hist(engines.TGIValidation)
	queue, okQ := v.hist(engines.TGIQueue)
	prefill, okP := s.Latencies[model.Prefill]
	if okV && okQ && okP {
		prefill.Approx = ""
		s.Latencies[model.TTFT] = model.Histogram{
			Approx: tgiTTFTApprox,
			Parts:  []model.Histogram{meanOnly(val.Sum, val.Count, ""), meanOnly(queue.Sum, queue.Count, ""), meanOnly(prefill.Sum, prefill.Count, "")},
		}
		readDerived(&s, model.TGI, string(model.TTFT), 0)
	}
	return []model.Sample{s}
}

func has[K comparable](m map[K]float64, k K) bool {
	_, ok := m[k]
	return ok
}
