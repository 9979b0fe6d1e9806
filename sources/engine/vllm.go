package engine

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// mapVLLM maps a vLLM scrape (V1 names, with fallbacks to the renamed and
// removed ones) onto one sample per model_name. Series are summed over the
// `engine` label (data-parallel engines); a scrape without that label is a
// V0 engine and reads the same way. KV usage is a fraction, so the
// endpoint's is the fullest engine's, and each engine's gauges are kept.
func mapVLLM(f families, m meta) []model.Sample {
	names := modelNames(f, engines.VLLM.Prefix(), "model_name")
	if len(names) == 0 {
		names = []string{""}
	}
	info, kvCap := vllmCacheConfig(view{fams: f})
	lora := vllmLoRA(f)
	parts := byModel(f, "model_name")
	out := make([]model.Sample, 0, len(names))
	for _, name := range names {
		v := modelView(f, parts, name)
		s := m.sample(name)
		mapVLLMModel(&s, v)
		if len(names) == 1 {
			// The HTTP instrumentation has no model label: it is the
			// endpoint's, so only a one-model endpoint gets it.
			setHTTPStatus(&s, view{fams: f}, "http_requests_total")
		}
		for k, x := range info {
			s.Info[k] = x
		}
		if c := poolOf(kvCap, s.Engines); c > 0 {
			s.Gauges[model.KVCapacityTokens] = c
		}
		if lora != nil {
			s.LoRA = lora
			readFrom(&s, "lora", engines.VLLMLoRAInfo)
		}
		out = append(out, s)
	}
	return out
}

// vllmLoRA reads vllm:lora_requests_info: an info gauge whose value is the
// time it was set and whose labels name the adapters (comma-joined). The
// Python frontend leaves old label sets behind, so the newest series (the
// largest value) is the current one; it has no model_name (loggers.py).
func vllmLoRA(f families) *model.LoRA {
	fam, ok := f[engines.VLLMLoRAInfo]
	if !ok {
		return nil
	}
	var newest *dto.Metric
	for _, m := range fam.GetMetric() {
		if v := scalar(m); finite(v) && (newest == nil || v > scalar(newest)) {
			newest = m
		}
	}
	if newest == nil {
		return nil
	}
	split := func(s string) []string {
		var out []string
		for _, x := range strings.Split(s, ",") {
			if x = strings.TrimSpace(x); x != "" {
				out = append(out, x)
			}
		}
		return out
	}
	l := &model.LoRA{Running: split(label(newest, engines.VLLMLoRARunning)), Waiting: split(label(newest, engines.VLLMLoRAWaiting))}
	if n, err := strconv.Atoi(label(newest, engines.VLLMLoRAMax)); err == nil && n > 0 {
		l.Max = n
	}
	return l
}

// vllmNames is where vLLM publishes a concept, newest name first
// (engines.Metrics: the one table of engine metric names).
func vllmNames[C ~string](c C) []string { return names(model.VLLM, c) }

func mapVLLMModel(s *model.Sample, v view) {
	setGauge(s, model.Running, v, vllmNames(model.Running)...)
	// The by-reason split (the table's second name) sums to the total: it
	// is read when the total is absent or has no finite value.
	for _, n := range vllmNames(model.Waiting) {
		if setGauge(s, model.Waiting, v, n) != "" {
			break
		}
	}
	if x, ok := v.sumWhere(engines.VLLMWaitingByReason, "reason", "deferred"); ok {
		s.Gauges[model.Deferred] = x
	}
	kvNames := vllmNames(model.KVUsage)
	kvName := v.first(kvNames...)
	s.Engines = vllmEngines(v, kvName)
	if kvName != "" {
		if full, ok := model.Fullest(s.Engines); ok {
			// A fraction is not summed nor averaged over engines: each has
			// its own pool, and the fullest one preempts first.
			s.Gauges[model.KVUsage] = full.KVUsage.V
			readFrom(s, string(model.KVUsage), kvName+`{engine="`+full.ID+`"}`)
			s.Notes = append(s.Notes, fmt.Sprintf("KV-cache usage is the fullest of %d data-parallel engines (engine %s); each engine's is listed apart", len(s.Engines), full.ID))
		} else if x, k := v.mean(kvName); k > 0 {
			s.Gauges[model.KVUsage] = x
			readFrom(s, string(model.KVUsage), kvName)
		}
		if kvName != kvNames[0] {
			s.Notes = append(s.Notes, "KV-cache usage from "+kvName+" (name used before v0.11)")
		}
	}
	if len(s.Engines) > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("running, waiting, rates and latencies summed over %d data-parallel engines", len(s.Engines)))
	}

	setCounter(s, model.PromptTokens, v, vllmNames(model.PromptTokens)...)
	setCounter(s, model.GenTokens, v, vllmNames(model.GenTokens)...)
	setCounter(s, model.Preemptions, v, vllmNames(model.Preemptions)...)
	if n := setCounter(s, model.PrefixQueries, v, vllmNames(model.PrefixQueries)...); n != "" {
		// Hits are read under the name of the same generation as queries.
		hitNames, hits := vllmNames(model.PrefixHits), ""
		for i, q := range vllmNames(model.PrefixQueries) {
			if q == n && i < len(hitNames) {
				hits = hitNames[i]
			}
		}
		if hits != hitNames[0] {
			s.Notes = append(s.Notes, "prefix cache from "+engines.MetricNames(model.VLLM, string(model.PrefixHits))[1]+" and its queries (old names; early V1 builds counted blocks, not tokens)")
		}
		if setCounter(s, model.PrefixHits, v, hits) == "" {
			delete(s.Counters, model.PrefixQueries) // a ratio needs both
		}
	} else {
		setGauge(s, model.PrefixHitGauge, v, vllmNames(model.PrefixHitGauge)...) // V0
	}
	if setCounter(s, model.SpecDraftTokens, v, vllmNames(model.SpecDraftTokens)...) != "" {
		setCounter(s, model.SpecAcceptTokens, v, vllmNames(model.SpecAcceptTokens)...)
	}
	setSpecByPos(s, v, vllmNames(model.SpecDrafts), vllmNames(model.SpecAcceptByPos))
	finish := v.first(vllmNames(model.FinishReasons)...)
	if reasons := v.byLabel(finish, "finished_reason"); finish != "" && len(reasons) > 0 {
		readFrom(s, model.FinishReasons, finish)
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
		if x, ok := reasons["error"]; ok {
			s.Counters[model.RequestErrors] = x
		}
	}

	setLatency(s, model.TTFT, v, vllmNames(model.TTFT)...)
	if n := setLatency(s, model.ITL, v, vllmNames(model.ITL)...); n != "" && n != vllmNames(model.ITL)[0] {
		s.Notes = append(s.Notes, "ITL from "+n+" (old name: it observed every inter-token gap)")
	}
	setLatency(s, model.TPOT, v, vllmNames(model.TPOT)...)
	setLatency(s, model.E2E, v, vllmNames(model.E2E)...)
	setLatency(s, model.Queue, v, vllmNames(model.Queue)...)
	setLatency(s, model.Prefill, v, vllmNames(model.Prefill)...)
	setLatency(s, model.Decode, v, vllmNames(model.Decode)...)
	setLatency(s, model.PromptLen, v, vllmNames(model.PromptLen)...)
	setLatency(s, model.OutputLen, v, vllmNames(model.OutputLen)...)
	setLatency(s, model.StepTokens, v, vllmNames(model.StepTokens)...)
	setLatency(s, model.KVTransfer, v, vllmNames(model.KVTransfer)...)
	setCounter(s, model.KVTransferFailures, v, vllmNames(model.KVTransferFailures)...)
	setHistSum(s, model.KVTransferBytes, v, 1, vllmNames(model.KVTransferBytes)...)
	setCounter(s, model.KVExpired, v, vllmNames(model.KVExpired)...)
}

// vllmCacheConfig reads vllm:cache_config_info: its labels (block size,
// cache dtype, gpu_memory_utilization, num_gpu_blocks…) from the first
// engine, and each engine's KV pool in tokens (by its engine label), from
// kv_cache_size_tokens or else num_gpu_blocks × block_size. The family has
// no model_name label: it describes the endpoint.
func vllmCacheConfig(v view) (map[string]string, map[string]float64) {
	series := v.series(engines.VLLMCacheConfig)
	if len(series) == 0 {
		return nil, nil
	}
	info := map[string]string{}
	first := series[0]
	engineNo := func(m *dto.Metric) int {
		n, err := strconv.Atoi(label(m, engines.VLLM.DPLabel))
		if err != nil {
			return math.MaxInt
		}
		return n
	}
	for _, m := range series {
		if engineNo(m) < engineNo(first) {
			first = m
		}
	}
	for _, l := range first.GetLabel() {
		if n := l.GetName(); n != engines.VLLM.DPLabel && n != engines.VLLM.ModelLabel {
			info[n] = l.GetValue()
		}
	}
	pools := map[string]float64{}
	for _, m := range series {
		if t, err := strconv.ParseFloat(label(m, "kv_cache_size_tokens"), 64); err == nil && finite(t) && t > 0 {
			pools[label(m, "engine")] += t
			continue
		}
		blocks, err1 := strconv.ParseFloat(label(m, "num_gpu_blocks"), 64)
		size, err2 := strconv.ParseFloat(label(m, "block_size"), 64)
		if err1 == nil && err2 == nil && finite(blocks*size) && blocks > 0 && size > 0 {
			pools[label(m, "engine")] += blocks * size
		}
	}
	if len(series) > 1 {
		info["engines"] = strconv.Itoa(len(series))
	}
	return info, pools
}

// poolOf is the KV pool kv_cache_usage_ratio is a share of: the one pool,
// or with data-parallel engines (each with its own pool) the fullest
// engine's, whose usage the endpoint shows, else the largest. Summing the
// pools beside one engine's ratio would claim tokens no engine has.
func poolOf(pools map[string]float64, engines []model.EngineShare) float64 {
	if len(pools) == 1 {
		for _, c := range pools {
			return c
		}
	}
	if full, ok := model.Fullest(engines); ok && pools[full.ID] > 0 {
		return pools[full.ID]
	}
	var most float64
	for _, c := range pools {
		most = max(most, c)
	}
	return most
}

// vllmEngines reads each data-parallel engine's running, waiting and KV
// usage (the engine label), ordered by engine number; nil for one engine.
func vllmEngines(v view, kvName string) []model.EngineShare {
	seen := map[string]bool{}
	for _, n := range []string{v.first(vllmNames(model.Running)...), v.first(vllmNames(model.Waiting)[:1]...), kvName} {
		if n == "" {
			continue
		}
		for _, id := range v.values(n, engines.VLLM.DPLabel) {
			if id != "" {
				seen[id] = true
			}
		}
	}
	if len(seen) < 2 {
		return nil
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, ea := strconv.Atoi(ids[i])
		b, eb := strconv.Atoi(ids[j])
		if ea == nil && eb == nil {
			return a < b
		}
		return ids[i] < ids[j]
	})
	opt := func(name, id string) model.Opt {
		if name == "" {
			return model.None
		}
		if x, ok := v.sumWhere(name, engines.VLLM.DPLabel, id); ok {
			return model.Some(x)
		}
		return model.None
	}
	out := make([]model.EngineShare, 0, len(ids))
	for _, id := range ids {
		out = append(out, model.EngineShare{ID: id,
			Running: opt(v.first(vllmNames(model.Running)...), id), Waiting: opt(v.first(vllmNames(model.Waiting)[:1]...), id), KVUsage: opt(kvName, id)})
	}
	return out
}
