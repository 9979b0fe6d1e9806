package core

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// A URL that answers with a web page was "state serving · run 1" in
// llmtop snapshot while its error said no engine answers: serving is
// claimed only of an engine llmtop recognised.
func TestAnHTTPAnswerFromNoEngineIsNotServing(t *testing.T) {
	m := newMonitor()
	for s := 0.0; s < 3; s++ {
		m.Apply(model.Scrape{Endpoint: url, Time: at(s), Err: "answers HTTP, but not as vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM, Triton or Ollama (pass --engine to force one)",
			ErrKind: model.ErrMalformed})
	}
	if ep := m.Endpoint(url); ep.Life == model.LifeServing {
		t.Errorf("life %s for a page that is no engine", ep.Life)
	}
	// An engine it knows whose /metrics fails still serves.
	m = newMonitor()
	m.Apply(model.Scrape{Endpoint: url, Time: at(0), Identity: model.Identity{Engine: model.VLLM}, Err: "metrics endpoint returned 404", ErrKind: model.ErrNotFound})
	if ep := m.Endpoint(url); ep.Life != model.LifeServing {
		t.Errorf("life %s for vLLM whose metrics fail", ep.Life)
	}
}
