package logs

import (
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// ollamaState follows Ollama's gin access log. Ollama has no /metrics and
// no stats line, so one line per finished request is what there is: it
// becomes a finished-request counter, an error counter and a mean-only
// end-to-end latency, for the inference routes only (not /api/ps, /api/tags
// or the health checks a monitor sends). Those other lines still give a
// sample with the counts unchanged: the counters' baseline and a reading
// between bursts, so six requests logged in one burst are a rate over the
// time since the line before them, not six requests in 71 µs (70 000
// req/s), and a rate falls once the requests stop (llmtop's own /api/ps
// polls are logged every refresh).
type ollamaState struct {
	requests, errors float64
	e2e              model.Histogram
}

// ollamaObsNotes say what the access log's latency covers: the whole
// request as the server handled it (Ollama logs no per-request prompt or
// eval timing at its default level).
var ollamaObsNotes = map[model.Latency]string{
	model.E2E: "Ollama's access-log latency: the whole request as its server handled it, including a wait for the runner and any model load",
}

// ollamaInference are the routes that run the model.
var ollamaInference = []string{"/api/generate", "/api/chat", "/api/embed", "/api/embeddings", "/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"}

func (st *ollamaState) request(s *statsState, mt Match, t time.Time) []model.Sample {
	path := mt.Fields["path"]
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	inference := false
	for _, p := range ollamaInference {
		inference = inference || path == p
	}
	var obs []model.Observation
	switch {
	case !inference:
	case parseNum(mt.Fields["status"]) >= 400:
		st.requests++
		st.errors++
	default:
		st.requests++
		d, err := time.ParseDuration(mt.Fields["latency"])
		if err != nil || d < 0 {
			break // a negative latency is no request's: left out, not summed
		}
		st.e2e.Sum += d.Seconds()
		st.e2e.Count++
		st.e2e.Approx = "mean only, from Ollama's access log (successful requests; includes model load time)"
		obs = []model.Observation{{Time: t, Values: map[model.Latency]float64{model.E2E: d.Seconds()}, Notes: ollamaObsNotes}}
	}
	sm := s.sample(t, "from Ollama's access log: requests counted since llmtop started following; errors are HTTP status ≥ 400")
	sm.Observations = obs
	sm.Counters[model.Requests] = st.requests
	sm.Counters[model.RequestErrors] = st.errors
	if st.e2e.Count > 0 {
		sm.Latencies[model.E2E] = st.e2e
	}
	return []model.Sample{sm}
}
