package logs

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// vllmState follows vLLM's periodic stats line. With data parallelism each
// engine prints its own line ("Engine 000: …", "Engine 001: …"); they are
// summed into one sample per round so the endpoint's sample means the same
// as its /metrics would (running and waiting add up, KV usage is the mean
// of the engines' pools).
type vllmState struct {
	engines   map[int]*vllmEngine
	inRound   map[int]bool
	lastLine  time.Time
	preempt   float64 // cumulative from "Preemptions: N" (per interval)
	v1Seen    bool
	specAcc   opt
	specDraft opt
	specRate  opt
	v0Preempt opt
	// kvCapacity is "GPU KV cache size: N tokens" from start-up.
	kvCapacity opt
}

type vllmEngine struct {
	at       time.Time
	interval time.Duration
	v        map[string]float64
}

const vllmPreemptNote = "preemptions: summed from the stats lines' \"Preemptions: N\" since llmtop started following; vLLM before v0.11.2 never prints them, so 0 there means unknown"

func (st *vllmState) stats(s *statsState, mt Match, line string, t time.Time) []model.Sample {
	i := strings.Index(line, "Avg prompt throughput:")
	v := parts(line[i:])
	idx := -1
	if e, ok := mt.Fields["engine"]; ok {
		idx = int(parseNum(e))
	}
	if mt.Pattern.ID == "vllm_stats" {
		st.v1Seen = true
		st.preempt += v["Preemptions"]
	}
	var out []model.Sample
	if st.inRound[idx] { // a new round began before every engine spoke
		out = append(out, st.flush(s, st.lastLine))
	}
	e := st.engines[idx]
	if e == nil {
		e = &vllmEngine{}
		st.engines[idx] = e
	} else if d := t.Sub(e.at); d > 0 {
		e.interval = d
	}
	e.at, e.v = t, v
	st.inRound[idx], st.lastLine = true, t
	st.expire(t)
	if len(st.inRound) >= len(st.engines) {
		out = append(out, st.flush(s, t))
	}
	return out
}

// expire forgets engines that stopped printing (an idle vLLM engine logs
// its stats at DEBUG): after three of its own intervals, or 30 s when the
// interval is not known yet.
func (st *vllmState) expire(now time.Time) {
	for idx, e := range st.engines {
		limit := 3 * e.interval
		if limit < 30*time.Second {
			limit = 30 * time.Second
		}
		if now.Sub(e.at) > limit {
			delete(st.engines, idx)
			delete(st.inRound, idx)
		}
	}
}

func (st *vllmState) flush(s *statsState, t time.Time) model.Sample {
	sm := s.sample(t)
	idxs := make([]int, 0, len(st.engines))
	for idx := range st.engines {
		idxs = append(idxs, idx)
	}
	sort.Ints(idxs)
	sum := func(keys ...string) opt {
		var o opt
		for _, idx := range idxs {
			for _, k := range keys {
				if x, ok := st.engines[idx].v[k]; ok {
					o = some(o.v + x)
					break
				}
			}
		}
		return o
	}
	mean := func(key string, scale float64) opt {
		o := sum(key)
		n := 0
		for _, idx := range idxs {
			if _, ok := st.engines[idx].v[key]; ok {
				n++
			}
		}
		if !o.ok || n == 0 {
			return opt{}
		}
		return some(o.v / float64(n) * scale)
	}
	sum("Avg prompt throughput").setGauge(&sm, model.PromptTPSGauge)
	sum("Avg generation throughput").setGauge(&sm, model.GenTPSGauge)
	sum("Running").setGauge(&sm, model.Running)
	sum("Waiting", "Pending").setGauge(&sm, model.Waiting)
	sum("Deferred").setGauge(&sm, model.Deferred)
	mean("GPU KV cache usage", 0.01).setGauge(&sm, model.KVUsage)
	mean("Prefix cache hit rate", 0.01).setGauge(&sm, model.PrefixHitGauge)
	st.kvCapacity.setGauge(&sm, model.KVCapacityTokens)
	st.specRate.setGauge(&sm, model.SpecAcceptGauge)
	st.specAcc.setCounter(&sm, model.SpecAcceptTokens)
	st.specDraft.setCounter(&sm, model.SpecDraftTokens)
	switch {
	case st.v0Preempt.ok:
		st.v0Preempt.setCounter(&sm, model.Preemptions)
	case st.v1Seen:
		sm.Counters[model.Preemptions] = st.preempt
		sm.Notes = append(sm.Notes, vllmPreemptNote)
	}
	sm.Notes = append(sm.Notes, "from vLLM's periodic stats log line: throughputs are averages over its interval (VLLM_LOG_STATS_INTERVAL, default 10 s)")
	if len(idxs) > 1 {
		sm.Notes = append(sm.Notes, "summed over "+strconv.Itoa(len(idxs))+" data-parallel engines; KV usage and prefix hit rate are their mean")
	}
	for k := range st.inRound {
		delete(st.inRound, k)
	}
	return sm
}

// spec adds a SpecDecoding line's per-interval token counts.
func (st *vllmState) spec(mt Match, line string) {
	st.specAcc = some(st.specAcc.v + parseNum(mt.Fields["accepted"]))
	st.specDraft = some(st.specDraft.v + parseNum(mt.Fields["drafted"]))
	if i := strings.Index(line, "Avg Draft acceptance rate:"); i >= 0 {
		if f, ok := leadingNum(line[i+len("Avg Draft acceptance rate:"):]); ok {
			st.specRate = some(f / 100)
		}
	}
}
