package behaviour

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// TGI's routes in the shapes of its router (router/src/lib.rs:
// ChatTokenizeResponse {tokenize_response, templated_text}, TokenizeResponse
// = [SimpleToken {id, text, start, stop}], Info {model_id, model_sha, …}):
// the probe renders through /chat_tokenize, counts through /tokenize, and
// says TGI does not serve its generation defaults.
func TestProbeTGIRoutes(t *testing.T) {
	var chatTokenize map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
		toks := func(s string) []map[string]any {
			var out []map[string]any
			for i, f := range strings.Fields(s) {
				out = append(out, map[string]any{"id": 100 + i, "text": f, "start": 0, "stop": 0})
			}
			return out
		}
		switch r.URL.Path {
		case "/info":
			write(map[string]any{"model_id": "mistralai/Mistral-7B-Instruct-v0.3", "model_sha": "e0bc86c23ce5aae1db576c8cca6f06f1f73af2db",
				"max_total_tokens": 8192, "max_input_tokens": 8191, "version": "3.3.4"})
		case "/chat_tokenize":
			_ = json.NewDecoder(r.Body).Decode(&chatTokenize)
			text := "<s>[INST] Write one short sentence about the sea.[/INST]"
			write(map[string]any{"tokenize_response": toks(text), "templated_text": text})
		case "/tokenize":
			var in struct{ Inputs string }
			_ = json.NewDecoder(r.Body).Decode(&in)
			write(toks(in.Inputs))
		default:
			answerOpenAI(w, r)
		}
	}))
	defer srv.Close()
	b, err := Run(context.Background(), Config{URL: srv.URL, Engine: model.TGI, Model: "tgi"})
	if err != nil {
		t.Fatal(err)
	}
	tp := b.Template
	if tp.Route != "/chat_tokenize" || tp.Family != "mistral" || !tp.Special || len(tp.TokenIDs) != 8 || !tp.Compared || !tp.SameAnswer {
		t.Errorf("template %+v", tp)
	}
	if msgs, _ := chatTokenize["messages"].([]any); len(msgs) != 1 {
		t.Errorf("/chat_tokenize got %v", chatTokenize)
	}
	if b.Tokens.Route != "/tokenize" || len(b.Tokens.Samples) != 3 || b.Tokens.Samples[0].Tokens != 17 {
		t.Errorf("tokens %+v", b.Tokens)
	}
	if b.Identity.Revision != "e0bc86c23ce5aae1db576c8cca6f06f1f73af2db" || !strings.Contains(b.Stop.DefaultsFrom, "TGI applies the model's generation_config.json") {
		t.Errorf("identity %+v, defaults from %q", b.Identity, b.Stop.DefaultsFrom)
	}
	if b.Stop.Finish != "stop" || !b.Determinism.Identical {
		t.Errorf("stop %+v determinism %+v", b.Stop, b.Determinism)
	}
}

// Which routes an engine has is its file's Probe (engines/): SGLang's
// /tokenize speaks vLLM's shape, with no code of its own here, and its
// template stays "not checked" for want of a rendering route.
func TestProbeRoutesComeFromTheEngineFile(t *testing.T) {
	var tokenizeBody map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
		switch r.URL.Path {
		case "/tokenize":
			_ = json.NewDecoder(r.Body).Decode(&tokenizeBody)
			p, _ := tokenizeBody["prompt"].(string)
			ids := []int{}
			for i := range strings.Fields(p) {
				ids = append(ids, i+1)
			}
			write(map[string]any{"tokens": ids, "count": len(ids)})
		default:
			answerOpenAI(w, r)
		}
	}))
	defer srv.Close()
	b, err := Run(context.Background(), Config{URL: srv.URL, Engine: model.SGLang, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Tokens.Route != "/tokenize" || len(b.Tokens.Samples) == 0 || b.Tokens.Samples[0].Tokens == 0 || tokenizeBody["add_special_tokens"] != false {
		t.Errorf("tokens %+v (body %v)", b.Tokens, tokenizeBody)
	}
	if !strings.Contains(b.Template.NotChecked, "SGLang has no route that renders its chat template") {
		t.Errorf("template %+v", b.Template)
	}
	if tokenizeRoute(model.TRTLLM) != "" || tokenizeRoute(model.Ollama) != "" || tokenizeRoute(model.LlamaCpp) != "/tokenize" {
		t.Error("tokenize routes do not follow the engine files")
	}
}

// answerOpenAI answers the OpenAI routes the probe's generation checks use
// ("Paris.", finished by a stop) and 404 elsewhere.
func answerOpenAI(w http.ResponseWriter, r *http.Request) {
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	switch r.URL.Path {
	case "/v1/chat/completions":
		write(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "Paris."}, "finish_reason": "stop"}}, "usage": map[string]any{"completion_tokens": 3}})
	case "/v1/completions":
		write(map[string]any{"choices": []any{map[string]any{"text": "Paris.", "finish_reason": "stop"}}})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}
