package behaviour

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// A server that answers with terminal escapes in every string (the model
// name, the rendered template, the answers, the defaults) and with JSON of
// the wrong shape: the result holds none of the escapes and says what it
// could not read.
func TestProbeHostileServer(t *testing.T) {
	const esc = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
		switch r.URL.Path {
		case "/v1/models":
			write(map[string]any{"object": "list", "data": []any{map[string]any{"id": "m" + esc, "owned_by": "llamacpp", "meta": map[string]any{"n_ctx_train": 4096}}}})
		case "/props":
			write(map[string]any{"chat_template": "{{ x }}" + esc, "eos_token": "</s>" + esc, "model_path": "/m" + esc + ".gguf",
				"default_generation_settings": map[string]any{"params": map[string]any{"temperature" + esc: 0.8, "stop": []any{"###" + esc}}}})
		case "/apply-template":
			write(map[string]any{"prompt": "<|im_start|>user" + esc})
		case "/tokenize":
			_, _ = w.Write([]byte(`{"tokens": "not a list"}`))
		case "/v1/chat/completions", "/v1/completions":
			write(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "answer" + esc}, "text": "answer" + esc, "finish_reason": "stop" + esc}}})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	b, err := Run(context.Background(), Config{URL: srv.URL, Engine: model.LlamaCpp})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(b)
	var all strings.Builder
	all.WriteString(b.Identity.Model + b.Identity.Revision + b.Template.Rendered + b.Determinism.A + b.Stop.Finish + b.Stop.Answer + strings.Join(b.Stop.StopTokens, ""))
	for k, v := range b.Stop.Defaults {
		all.WriteString(k + v)
	}
	for _, x := range b.Raw {
		all.WriteString(x.Request + x.Response + x.Error)
	}
	// The raw bodies keep the server's JSON as text: its "\u001b" is six
	// printable characters there, not an escape; a real ESC byte anywhere
	// would be one (json.Marshal writes it as an unescaped \u001b).
	if model.Unsafe(all.String()) || realEsc.MatchString(string(doc)) {
		t.Errorf("escapes reached the result: %q", all.String())
	}
	if !strings.Contains(b.Tokens.NotChecked, "not the JSON expected") {
		t.Errorf("tokenization %+v: want the shape error said", b.Tokens)
	}
	if b.Identity.Model == "" || !strings.HasPrefix(b.Template.Rendered, "<|im_start|>user") {
		t.Errorf("identity %+v, template %q", b.Identity, b.Template.Rendered)
	}
}

var realEsc = regexp.MustCompile(`(^|[^\\])\\u001b`)
