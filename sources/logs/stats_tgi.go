package logs

import (
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// tgiRequest turns TGI's per-request span fields into one observation:
// queue_time (validated → batched), total_time (arrival → response) and
// time_per_token. TGI's metrics give these as histograms, which win; the
// log's exact percentiles stand in where /metrics is not read, and cross-
// check them where it is. Validation and inference time have no concept
// of their own (inference covers prefill and decode together).
func tgiRequest(s *statsState, line string, t time.Time) []model.Sample {
	vals := map[model.Latency]float64{}
	for _, f := range tgiFields {
		if d, ok := tgiDuration(line, f.key); ok {
			vals[f.l] = d.Seconds()
		}
	}
	if len(vals) == 0 {
		return nil
	}
	sm := s.sample(t, "from TGI's per-request Success lines: each request's queue, total and per-token time")
	sm.Observations = []model.Observation{{Time: t, Values: vals, Notes: tgiObsNotes}}
	return []model.Sample{sm}
}

var tgiFields = []struct {
	key string
	l   model.Latency
}{{"queue_time", model.Queue}, {"total_time", model.E2E}, {"time_per_token", model.TPOT}}

// tgiObsNotes: TGI's time_per_token divides inference time (prefill
// included) by every generated token.
var tgiObsNotes = map[model.Latency]string{
	model.TPOT: "TGI's time_per_token: inference time (prefill included) ÷ generated tokens",
}

// tgiDuration finds key="…" (text) or "key":"…" (JSON) in line and parses
// the Rust Duration it holds ("1.5s", "120ms", "94.981µs", "70ns").
func tgiDuration(line, key string) (time.Duration, bool) {
	var rest string
	for _, pre := range []string{key + `="`, `"` + key + `":"`} {
		i := strings.Index(line, pre)
		// a text field is preceded by a space or '{', never by more name
		if i >= 0 && (pre[0] == '"' || i == 0 || line[i-1] == ' ' || line[i-1] == '{') {
			rest = line[i+len(pre):]
			break
		}
	}
	end := strings.IndexByte(rest, '"')
	if end <= 0 {
		return 0, false
	}
	d, err := time.ParseDuration(rest[:end])
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
