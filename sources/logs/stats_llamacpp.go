package logs

import (
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// llamaState follows llama-server's print_timing lines, printed once per
// request when its slot is released. They describe one request, not the
// server, so they become cumulative counters (tokens, requests) and
// mean-only latency histograms (sum + count) rather than throughput gauges:
// the Store then gives the server's real token rate over its window.
type llamaState struct {
	tasks map[string]*llamaTask
	slots opt // n_slots from the start-up line: the concurrency cap

	promptTokens, genTokens, requests float64
	prefill, decode, tpot, e2e        model.Histogram
}

type llamaTask struct {
	promptMS, promptTok, evalMS, evalTok float64
	havePrompt, haveEval                 bool
}

const llamaApprox = "mean only, from llama-server's per-request timing lines"

// llamaObsNotes say what llama-server's timings leave out.
var llamaObsNotes = map[model.Latency]string{
	model.Prefill: "llama-server's prompt eval time, without the wait for a slot",
}

func (st *llamaState) timing(s *statsState, mt Match, t time.Time) []model.Sample {
	key := mt.Fields["slot"] + "/" + mt.Fields["task"]
	return st.step(s, key, mt.Fields["what"], parseNum(mt.Fields["ms"]), parseNum(mt.Fields["tokens"]), t)
}

// timingJSON reads the JSON print_timings lines of llama.cpp's server
// before its October 2024 log rework (and of Ollama's embedded server of
// that time, and of ik_llama.cpp still): the slot and task are fields whose
// names and order changed (slot_id/task_id, later id_slot/id_task).
func (st *llamaState) timingJSON(s *statsState, mt Match, line string, t time.Time) []model.Sample {
	slot, okS := jsonField(line, "id_slot", "slot_id")
	task, okT := jsonField(line, "id_task", "task_id")
	if !okS || !okT {
		return nil
	}
	what := mt.Fields["what"]
	if what == "generation eval" {
		what = "eval"
	}
	return st.step(s, slot+"/"+task, what, parseNum(mt.Fields["ms"]), parseNum(mt.Fields["tokens"]), t)
}

// jsonField is the number of the first of keys present in a one-line JSON
// object, as text ("…,\"id_slot\":0,…" → "0").
func jsonField(line string, keys ...string) (string, bool) {
	for _, k := range keys {
		i := strings.Index(line, `"`+k+`":`)
		if i < 0 {
			continue
		}
		v := line[i+len(k)+3:]
		end := 0
		for end < len(v) && v[end] >= '0' && v[end] <= '9' {
			end++
		}
		if end > 0 {
			return v[:end], true
		}
	}
	return "", false
}

// step takes one of a task's three timing lines (what: prompt eval, eval,
// total); the total completes the request.
func (st *llamaState) step(s *statsState, key, what string, ms, tok float64, t time.Time) []model.Sample {
	tk := st.tasks[key]
	if tk == nil {
		if len(st.tasks) > 1024 { // lines of tasks whose total never came
			st.tasks = map[string]*llamaTask{}
		}
		tk = &llamaTask{}
		st.tasks[key] = tk
	}
	switch what {
	case "prompt eval":
		tk.promptMS, tk.promptTok, tk.havePrompt = ms, tok, true
		return nil
	case "eval":
		tk.evalMS, tk.evalTok, tk.haveEval = ms, tok, true
		return nil
	}
	delete(st.tasks, key)
	if !tk.havePrompt || !tk.haveEval { // following began mid-request
		return nil
	}
	st.requests++
	st.promptTokens += tk.promptTok
	st.genTokens += tk.evalTok
	observe(&st.prefill, tk.promptMS/1000)
	observe(&st.decode, tk.evalMS/1000)
	observe(&st.e2e, ms/1000)
	if tk.evalTok > 0 {
		observe(&st.tpot, tk.evalMS/1000/tk.evalTok)
	}
	sm := s.sample(t, "from llama-server's print_timing lines: counted when each request finishes, since llmtop started following")
	sm.Counters[model.Requests] = st.requests
	sm.Counters[model.PromptTokens] = st.promptTokens
	sm.Counters[model.GenTokens] = st.genTokens
	sm.Latencies[model.Prefill] = st.prefill
	sm.Latencies[model.Decode] = st.decode
	sm.Latencies[model.E2E] = st.e2e
	if st.tpot.Count > 0 {
		sm.Latencies[model.TPOT] = st.tpot
	}
	// The request itself, for exact windowed percentiles (the sums above
	// give only means).
	// Its total time is prompt eval + eval: not E2E, which has the wait
	// for a slot too (the store adds an estimate of it, state_log.go).
	ob := model.Observation{Time: t, Notes: llamaObsNotes, Values: map[model.Latency]float64{
		model.Prefill: tk.promptMS / 1000, model.Decode: tk.evalMS / 1000,
	}}
	if tk.evalTok > 1 {
		// TPOT excludes the first token, as the benchmark's does: the
		// prompt pass samples the first of evalTok tokens, and eval time
		// runs from it to the last: evalTok−1 gaps.
		ob.Values[model.TPOT] = tk.evalMS / 1000 / (tk.evalTok - 1)
	}
	sm.Observations = []model.Observation{ob}
	st.slots.setGauge(&sm, model.MaxRunning)
	return []model.Sample{sm}
}

func observe(h *model.Histogram, seconds float64) {
	h.Sum += seconds
	h.Count++
	h.Approx = llamaApprox
}
