package logs

import (
	"bufio"
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// feedFile runs a captured log (testdata/loglat, see SOURCE.md) through the
// matcher and a stats state, one line per 10 ms, and returns every
// observation the samples carry.
func feedFile(t *testing.T, path string) ([]model.Sample, []model.Observation) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st := newStatsState("http://e", "")
	at := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	var samples []model.Sample
	var obs []model.Observation
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan(); i++ {
		line := model.SanitizeLine(sc.Bytes())
		mt, ok := DefaultMatcher.Match(line)
		if !ok {
			continue
		}
		for _, sm := range st.feed(mt, line, at.Add(time.Duration(i)*10*time.Millisecond)) {
			samples = append(samples, sm)
			obs = append(obs, sm.Observations...)
		}
	}
	return samples, obs
}

// The real llama-server log of 6 requests over 2 slots: one observation per
// task, each holding the numbers its own print_timing lines print (read
// here with a regular expression of the test's own, not the catalogue's).
func TestLlamaCppObservationsFromRealLog(t *testing.T) {
	const path = "testdata/loglat/llama-server-2slots-6streams.log"
	_, obs := feedFile(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`task (\d+) \| +(prompt eval|eval|total) time = +([\d.]+) ms / +(\d+) tokens`)
	type want struct{ prompt, eval, total, evalTok float64 }
	tasks := map[string]*want{}
	var order []string
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		w := tasks[m[1]]
		if w == nil {
			w = &want{}
			tasks[m[1]] = w
		}
		ms, _ := strconv.ParseFloat(m[3], 64)
		switch m[2] {
		case "prompt eval":
			w.prompt = ms
		case "eval":
			w.eval, _ = strconv.ParseFloat(m[4], 64)
			w.evalTok, w.eval = w.eval, ms
		default:
			w.total = ms
			order = append(order, m[1])
		}
	}
	if len(order) != 6 || len(obs) != len(order) {
		t.Fatalf("%d observations for %d finished tasks in the log (want 6)", len(obs), len(order))
	}
	eq := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for i, id := range order {
		w, o := tasks[id], obs[i].Values
		if !eq(o[model.Prefill], w.prompt/1000) || !eq(o[model.Decode], w.eval/1000) || math.Abs(w.prompt+w.eval-w.total) > 0.02 {
			t.Errorf("task %s: observation %v, log says prompt %v eval %v total %v ms", id, o, w.prompt, w.eval, w.total)
		}
		// TPOT excludes the first token: eval time over evalTok−1 gaps.
		if !eq(o[model.TPOT], w.eval/1000/(w.evalTok-1)) {
			t.Errorf("task %s: TPOT %v, want %v ms / %v gaps", id, o[model.TPOT], w.eval, w.evalTok-1)
		}
		// total time = prompt eval + eval: no wait for a slot, so no E2E
		if _, ok := o[model.E2E]; ok || obs[i].Notes[model.Prefill] == "" {
			t.Errorf("task %s: %v %v; llama-server's times leave out the slot wait: no E2E, and prefill says so", id, o, obs[i].Notes)
		}
	}
}

func TestTGIObservationsFromRealLines(t *testing.T) {
	_, obs := feedFile(t, "testdata/loglat/tgi-success.log")
	want := []struct{ queue, total, tpot float64 }{
		{127.337e-6, 0.611286748, 0.043600359},
		{94.981e-6, 4.065504959, 0.038982485},
		{188.125e-6, 0.986532642, 0.049283162},
	}
	if len(obs) != len(want) {
		t.Fatalf("%d observations, want %d", len(obs), len(want))
	}
	for i, w := range want {
		v := obs[i].Values
		if math.Abs(v[model.Queue]-w.queue) > 1e-12 || math.Abs(v[model.E2E]-w.total) > 1e-12 || math.Abs(v[model.TPOT]-w.tpot) > 1e-12 {
			t.Errorf("line %d: %v, want queue %v total %v tpot %v", i+1, v, w.queue, w.total, w.tpot)
		}
	}
}

func TestTGIJSONAndBrokenFields(t *testing.T) {
	st := newStatsState("http://e", "")
	at := time.Date(2026, 1, 8, 10, 0, 0, 0, time.UTC)
	feed := func(line string) []model.Observation {
		mt, ok := DefaultMatcher.Match(line)
		if !ok {
			return nil
		}
		var out []model.Observation
		for _, sm := range st.feed(mt, line, at) {
			out = append(out, sm.Observations...)
		}
		return out
	}
	// --json-output (built from router/src/logging.rs; see SOURCE.md).
	obs := feed(`{"level":"INFO","message":"Success","span":{"inference_time":"1.2s","queue_time":"3.5ms","time_per_token":"12ms","total_time":"1.25s","name":"generate"}}`)
	if len(obs) != 1 || obs[0].Values[model.Queue] != 0.0035 || obs[0].Values[model.E2E] != 1.25 || obs[0].Values[model.TPOT] != 0.012 {
		t.Errorf("json line: %+v", obs)
	}
	// A value that is no duration is left out, not zero; a negative one too.
	obs = feed(`generate{total_time="1.5s" validation_time="1ms" queue_time="soon" inference_time="1s" time_per_token="-3ms" seed="None"}: text_generation_router::server: router/src/server.rs:402: Success`)
	if len(obs) != 1 || len(obs[0].Values) != 1 || obs[0].Values[model.E2E] != 1.5 {
		t.Errorf("broken fields: %+v", obs)
	}
	// A field whose name only ends like one (x_total_time) is not it.
	if obs := feed(`generate{x_total_time="9s" time_per_token="bad"}: Success`); len(obs) != 0 {
		t.Errorf("no field of TGI's: %+v", obs)
	}
}

func TestOllamaObservations(t *testing.T) {
	st := newStatsState("http://e", "")
	at := time.Date(2026, 8, 21, 10, 0, 0, 0, time.UTC)
	var obs []model.Observation
	for _, l := range []string{
		`[GIN] 2026/08/21 - 10:00:00 | 200 |  3.4975s |       127.0.0.1 | POST     "/api/chat"`,
		`[GIN] 2026/08/21 - 10:00:01 | 200 |      1.5s |       127.0.0.1 | GET      "/api/ps"`,
		`[GIN] 2026/08/21 - 10:00:02 | 500 |   120µs |       127.0.0.1 | POST     "/api/chat"`,
		`[GIN] 2026/08/21 - 10:00:03 | 200 |  250ms |       127.0.0.1 | POST     "/v1/chat/completions"`,
	} {
		mt, ok := DefaultMatcher.Match(l)
		if !ok {
			t.Fatalf("no match: %s", l)
		}
		for _, sm := range st.feed(mt, l, at) {
			obs = append(obs, sm.Observations...)
		}
	}
	// the monitor's poll and the failed request are no request's latency
	if len(obs) != 2 || obs[0].Values[model.E2E] != 3.4975 || obs[1].Values[model.E2E] != 0.25 {
		t.Errorf("observations %+v", obs)
	}
}

// The JSON print_timings lines (llama.cpp before October 2024, Ollama's
// embedded server then, ik_llama.cpp now): one request from a real log.
func TestLlamaCppJSONObservationsFromRealLog(t *testing.T) {
	samples, obs := feedFile(t, "testdata/loglat/ik_llama-json-print_timings.log")
	if len(obs) != 1 || len(samples) != 1 {
		t.Fatalf("%d observations in %d samples, want one request", len(obs), len(samples))
	}
	v := obs[0].Values
	if math.Abs(v[model.Prefill]-7.92804) > 1e-9 || math.Abs(v[model.Decode]-1.57514) > 1e-9 || math.Abs(v[model.TPOT]-1.57514/43) > 1e-12 {
		t.Errorf("%v: want prefill 7928.04 ms, decode 1575.14 ms, TPOT 1575.14/43 ms", v)
	}
	if sm := samples[0]; sm.Counters[model.PromptTokens] != 2386 || sm.Counters[model.GenTokens] != 44 || sm.Counters[model.Requests] != 1 {
		t.Errorf("counters %v", sm.Counters)
	}
}
