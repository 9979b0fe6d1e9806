package core

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Every face's metrics object (snapshot, the screen's s, the benchmark's
// server view) says an engine's numbers in its terms: llama.cpp's TPOT
// count is tokens and its own throughput gauges divide by busy time;
// vLLM's count is requests and its rates are the window's.
func TestMetricsOfSpeaksTheEnginesTerms(t *testing.T) {
	st := model.State{Source: model.FromScrape, Samples: 2, RateWindow: 2 * time.Second,
		PromptTPS: model.Some(120), EnginePromptTPS: model.Some(4548.47),
		Latency: map[model.Latency]model.Dist{model.TPOT: {Exposed: true, Count: 128, Mean: model.Some(0.0008), Window: 2 * time.Second}}}
	m := MetricsOf(st, model.LlamaCpp)
	if m.TPOTms.CountOf != "tokens" || m.EngineRatesOver != "busy_time" || m.EnginePromptTokensPerS.V != 4548.47 || m.PromptTokensPerS.V != 120 {
		t.Errorf("llama.cpp: tpot count_of %q, engine rates over %q, engine prompt %v, prompt %v", m.TPOTms.CountOf, m.EngineRatesOver, m.EnginePromptTokensPerS, m.PromptTokensPerS)
	}
	m = MetricsOf(st, model.VLLM)
	if m.TPOTms.CountOf != "" || m.EngineRatesOver != "" {
		t.Errorf("vLLM: tpot count_of %q, engine rates over %q: want requests and the wall clock", m.TPOTms.CountOf, m.EngineRatesOver)
	}
}
