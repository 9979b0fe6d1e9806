package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// statsState turns one log's stats lines into log-derived samples. Engines
// print per-interval numbers; the model wants gauges and cumulative
// counters, so counts per interval (preemptions, spec-decode tokens,
// SGLang retractions, llama.cpp tokens per request) are summed here into
// counters that start at zero when llmtop starts following — the Store
// turns them into rates like any scraped counter. One state per log; it is
// not safe for concurrent use.
type statsState struct {
	endpoint, model string

	vllm   vllmState
	sglang sglangState
	llama  llamaState
	ollama ollamaState
}

func newStatsState(endpoint, modelName string) *statsState {
	return &statsState{
		endpoint: endpoint, model: modelName,
		vllm:  vllmState{engines: map[int]*vllmEngine{}, inRound: map[int]bool{}},
		llama: llamaState{tasks: map[string]*llamaTask{}},
	}
}

// feed takes a catalogue match on a line logged at t and returns the
// samples it completes (usually none or one).
func (s *statsState) feed(mt Match, line string, t time.Time) []model.Sample {
	out := s.parse(mt, line, t)
	for i := range out {
		// A stats line is outside text like a scrape: "-2547 tokens/s"
		// is rejected with a note, never shown.
		model.RejectImplausible(&out[i])
		if len(mt.Pattern.Engines) == 1 {
			out[i].Engine = mt.Pattern.Engines[0] // "Engine 000: Avg prompt throughput" is vLLM's alone
		}
	}
	return out
}

func (s *statsState) parse(mt Match, line string, t time.Time) []model.Sample {
	switch mt.Pattern.ID {
	case "vllm_stats", "vllm_stats_v0":
		return s.vllm.stats(s, mt, line, t)
	case "vllm_spec_decode":
		s.vllm.spec(mt, line)
	case "vllm_v0_preemption":
		s.vllm.v0Preempt = some(parseNum(mt.Fields["total"]))
	case "vllm_kv_capacity":
		s.vllm.kvCapacity = some(parseNum(mt.Fields["kv_tokens"]))
	case "sglang_prefill", "sglang_decode":
		return s.sglang.batch(s, mt.Pattern.ID == "sglang_prefill", line, t)
	case "sglang_kv_retract":
		s.sglang.retracted += parseNum(mt.Fields["retracted"])
	case "llamacpp_timing":
		return s.llama.timing(s, mt, t)
	case "llamacpp_timing_json":
		return s.llama.timingJSON(s, mt, line, t)
	case "ollama_request":
		return s.ollama.request(s, mt, t)
	case "tgi_request":
		return tgiRequest(s, line, t)
	case "llamacpp_slots":
		s.llama.slots = some(parseNum(mt.Fields["n_slots"]))
	}
	return nil
}

func (s *statsState) sample(t time.Time, notes ...string) model.Sample {
	sm := model.NewSample(s.endpoint, s.model, t, model.FromLog)
	sm.Notes = append(sm.Notes, notes...)
	return sm
}

// parts splits "Key: value unit, Key: value unit, …" starting at the first
// key into a map of key → leading number of the value. Values that are not
// numbers ("n/a") are left out: absent, not zero.
func parts(s string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range strings.Split(s, ", ") {
		k, v, ok := strings.Cut(p, ": ")
		if !ok {
			continue
		}
		if f, ok := leadingNum(v); ok {
			out[strings.TrimSpace(k)] = f
		}
	}
	return out
}

// leadingNum reads the number at the start of v ("87.5%", "12 reqs",
// "470,080 tokens").
func leadingNum(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.' || v[end] == ',' || end == 0 && v[end] == '-') {
		end++
	}
	num := strings.TrimRight(strings.ReplaceAll(v[:end], ",", ""), ".")
	f, err := strconv.ParseFloat(num, 64)
	return f, err == nil
}

func parseNum(s string) float64 {
	f, _ := leadingNum(s)
	return f
}

// opt is a value that may be unknown, local to this package's state.
type opt struct {
	v  float64
	ok bool
}

func some(v float64) opt { return opt{v, true} }

func (o opt) setGauge(sm *model.Sample, g model.Gauge) {
	if o.ok {
		sm.Gauges[g] = o.v
	}
}

func (o opt) setCounter(sm *model.Sample, c model.Counter) {
	if o.ok {
		sm.Counters[c] = o.v
	}
}
