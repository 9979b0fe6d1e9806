package logs

import (
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// sglangState follows SGLang's "Prefill batch" and "Decode batch" lines.
// Each line type carries half the picture (input throughput on prefill,
// generation throughput on decode); a sample takes the other half from the
// other line type only while it is fresh, so a throughput is never carried
// on for longer than sglangFresh.
type sglangState struct {
	prefillAt, decodeAt time.Time
	promptTPS, genTPS   float64
	// Cumulative since following started: prompt tokens looked up in and
	// found in the radix cache, and retracted requests (SGLang's
	// preemption, from "KV cache pool is full. Retract requests.").
	queried, hit, retracted float64
}

const sglangFresh = 10 * time.Second

func (st *sglangState) batch(s *statsState, prefill bool, line string, t time.Time) []model.Sample {
	i := strings.Index(line, "batch")
	v := parts(line[i:])
	sm := s.sample(t, "from SGLang's Prefill/Decode batch log lines; prefix hits and retractions are summed since llmtop started following")
	if prefill {
		st.queried += v["#new-token"] + v["#cached-token"]
		st.hit += v["#cached-token"]
		if x, ok := v["input throughput (token/s)"]; ok {
			st.promptTPS, st.prefillAt = x, t
		}
	} else {
		if x, ok := v["gen throughput (token/s)"]; ok {
			st.genTPS, st.decodeAt = x, t
		}
		if x, ok := v["accept rate"]; ok {
			sm.Gauges[model.SpecAcceptGauge] = x
		}
	}
	if x, ok := v["#running-req"]; ok {
		sm.Gauges[model.Running] = x
	}
	if x, ok := v["#queue-req"]; ok {
		sm.Gauges[model.Waiting] = x
	}
	// Plain models print "token usage", hybrid SWA/SSM models "full token usage".
	for _, k := range []string{"token usage", "full token usage"} {
		if x, ok := v[k]; ok {
			sm.Gauges[model.KVUsage] = x
			break
		}
	}
	if !st.prefillAt.IsZero() && t.Sub(st.prefillAt) <= sglangFresh {
		sm.Gauges[model.PromptTPSGauge] = st.promptTPS
	}
	if !st.decodeAt.IsZero() && t.Sub(st.decodeAt) <= sglangFresh {
		sm.Gauges[model.GenTPSGauge] = st.genTPS
	}
	sm.Counters[model.PrefixQueries] = st.queried
	sm.Counters[model.PrefixHits] = st.hit
	sm.Counters[model.Preemptions] = st.retracted
	return []model.Sample{sm}
}
