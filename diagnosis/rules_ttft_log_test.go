package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 20: llama.cpp publishes no latency histogram. With its log's
// per-request timings in the store (prefill 0.3 s + decode 0.9 s in a
// slot) and its gauges saying 2 running and 4 waiting, the store estimates
// a 2.4 s queue (Little's law) and a 2.7 s TTFT, and the TTFT rule judges
// the split as it does vLLM's: queueing, with evidence naming where each
// number came from.
func TestTTFTSplitFromLlamaCppLog(t *testing.T) {
	s := model.NewStore(model.DefaultStoreConfig)
	k := model.Key{Endpoint: url, Model: "m"}
	start := t0.Add(-time.Minute)
	for sec := 0; sec <= 60; sec++ {
		sm := model.NewSample(url, "m", start.Add(time.Duration(sec)*time.Second), model.FromScrape)
		sm.Gauges[model.Running], sm.Gauges[model.Waiting] = 2, 4
		s.Add(sm)
	}
	for i := 0; i < 40; i++ {
		at := start.Add(time.Duration(i+1) * 1400 * time.Millisecond)
		sm := model.NewSample(url, "", at, model.FromLog)
		sm.Observations = []model.Observation{{Time: at, Values: map[model.Latency]float64{model.Prefill: 0.3, model.Decode: 0.9, model.E2E: 1.2}}}
		s.Add(sm)
	}
	id := model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "m"}}}
	e := EndpointFromStoreBuf(s, k, id, model.Scrape{Endpoint: url, Time: t0}, t0, time.Minute, &SeriesBuf{})
	rep := Evaluate(Input{Time: t0, Endpoints: []Endpoint{e}}, DefaultConfig())
	f := byID(rep, "ttft_queueing")
	if f == nil {
		t.Fatalf("no ttft_queueing; report %+v", rep)
	}
	var sources []string
	for _, ev := range f.Evidence {
		sources = append(sources, ev.Source)
	}
	all := strings.Join(sources, " | ")
	if !hasEvidence(f, "queue time 2.4") || !strings.Contains(all, "Little's law") || !strings.Contains(all, "engine log") {
		t.Errorf("evidence %+v: want the 2.4 s queue, sourced to Little's law and the engine log", f.Evidence)
	}
}
