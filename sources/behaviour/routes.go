package behaviour

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The shapes of the engines' own routes, each spoken here once; which
// engine has which is its file's Probe (engines/):
//   - vLLM: POST /tokenize (TokenizeChatRequest with messages, or a prompt)
//     answers {count, max_model_len, tokens}; POST /detokenize {tokens}
//     answers {prompt} (vllm/entrypoints/openai/api_server.py,
//     serving_tokenization.py).
//   - TGI: POST /chat_tokenize {messages} answers {tokenize_response,
//     templated_text}; POST /tokenize {inputs} answers [{id, text, start,
//     stop}] (router/src/server.rs).
//   - llama.cpp: POST /apply-template {messages} answers {prompt}; POST
//     /tokenize {content} answers {tokens}; GET /props has chat_template,
//     default_generation_settings (tools/server/server.cpp).
//   - Ollama: POST /api/show {model} answers {template, parameters,
//     details, model_info} (api/types.go).

var chatMessages = []map[string]string{{"role": "user", "content": "Write one short sentence about the sea."}}

// renderer fills the template check through the engine's own route; it
// returns the template's source when the engine shows it (hashed as the
// template's fingerprint).
func (p *prober) template(ctx context.Context) (source string) {
	t := &p.res.Template
	switch p.routes().Template {
	case model.VLLM:
		t.Route = "/tokenize (messages) + /detokenize"
		var tok struct {
			Tokens []int `json:"tokens"`
			Max    int   `json:"max_model_len"`
		}
		err := p.k.call(ctx, "template", "POST", "/tokenize", map[string]any{"model": p.modelID, "messages": chatMessages, "add_generation_prompt": true}, &tok)
		if err != nil {
			t.NotChecked = notChecked(p.eng, "/tokenize", err)
			return ""
		}
		t.TokenIDs = tok.Tokens
		var de struct {
			Prompt string `json:"prompt"`
		}
		if err := p.k.call(ctx, "template", "POST", "/detokenize", map[string]any{"model": p.modelID, "tokens": tok.Tokens}, &de); err != nil {
			t.NotChecked = notChecked(p.eng, "/detokenize", err)
			return ""
		}
		t.Rendered = de.Prompt
	case model.TGI:
		t.Route = "/chat_tokenize"
		var ct struct {
			Tokens []struct {
				ID int `json:"id"`
			} `json:"tokenize_response"`
			Text string `json:"templated_text"`
		}
		if err := p.k.call(ctx, "template", "POST", "/chat_tokenize", map[string]any{"model": "tgi", "messages": chatMessages}, &ct); err != nil {
			t.NotChecked = notChecked(p.eng, "/chat_tokenize", err)
			return ""
		}
		t.Rendered = ct.Text
		for _, x := range ct.Tokens {
			t.TokenIDs = append(t.TokenIDs, x.ID)
		}
	case model.LlamaCpp:
		t.Route = "/apply-template + /tokenize"
		var at struct {
			Prompt string `json:"prompt"`
		}
		if err := p.k.call(ctx, "template", "POST", "/apply-template", map[string]any{"messages": chatMessages}, &at); err != nil {
			t.NotChecked = notChecked(p.eng, "/apply-template", err)
			return p.props.ChatTemplate
		}
		t.Rendered = at.Prompt
		t.TokenIDs, _ = p.tokenize(ctx, "template", at.Prompt)
		return p.props.ChatTemplate
	case model.Ollama:
		t.Route = "/api/show template"
		t.Lacks = []string{"a rendering route (Ollama renders its Go template internally)", "a tokenize route"}
		if p.show.Template == "" {
			t.NotChecked = "Ollama's /api/show gave no template for " + p.modelID
			return ""
		}
		t.Rendered, t.IsSource = p.show.Template, true
		return p.show.Template
	default:
		t.NotChecked = "not checked: " + engineName(p.eng) + " has no route that renders its chat template"
		return ""
	}
	return ""
}

// tokenize counts text's tokens through the engine's route (no special
// tokens added); ok false where the engine has none.
func (p *prober) tokenize(ctx context.Context, check, text string) ([]int, error) {
	switch p.routes().Tokenize {
	case model.VLLM:
		var r struct {
			Tokens []int `json:"tokens"`
		}
		err := p.k.call(ctx, check, "POST", "/tokenize", map[string]any{"model": p.modelID, "prompt": text, "add_special_tokens": false}, &r)
		return r.Tokens, err
	case model.TGI:
		var r []struct {
			ID int `json:"id"`
		}
		err := p.k.call(ctx, check, "POST", "/tokenize", map[string]any{"inputs": text}, &r)
		ids := make([]int, len(r))
		for i, x := range r {
			ids[i] = x.ID
		}
		return ids, err
	case model.LlamaCpp:
		var r struct {
			Tokens []int `json:"tokens"`
		}
		err := p.k.call(ctx, check, "POST", "/tokenize", map[string]any{"content": text, "add_special": false}, &r)
		return r.Tokens, err
	}
	return nil, fmt.Errorf("%w: %s has no tokenize route", errMissing, engineName(p.eng))
}

// tokenizeRoute names the route tokenize uses, "" where there is none.
func tokenizeRoute(eng model.Engine) string {
	if routes(eng).Tokenize != model.Unknown {
		return "/tokenize"
	}
	return ""
}

// routes are the engine's own routes the probe reads (engines/: its
// file's Probe), none for an unknown engine.
func routes(eng model.Engine) engines.Probe {
	if s := engines.Of(eng); s != nil {
		return s.Probe
	}
	return engines.Probe{}
}

func (p *prober) routes() engines.Probe { return routes(p.eng) }

// llamaProps is the part of llama-server's GET /props the probe reads.
type llamaProps struct {
	ChatTemplate string          `json:"chat_template"`
	ModelPath    string          `json:"model_path"`
	BOS          string          `json:"bos_token"`
	EOS          string          `json:"eos_token"`
	Gen          json.RawMessage `json:"default_generation_settings"`
	Slots        int             `json:"total_slots"`
	Build        string          `json:"build_info"`
}

// ollamaShow is the part of Ollama's POST /api/show the probe reads.
type ollamaShow struct {
	Template   string `json:"template"`
	Parameters string `json:"parameters"`
	Details    struct {
		Family       string `json:"family"`
		Quantization string `json:"quantization_level"`
	} `json:"details"`
	ModelInfo map[string]any `json:"model_info"`
}

// contextLength is the GGUF's trained context ("llama.context_length").
func (s ollamaShow) contextLength() int {
	for k, v := range s.ModelInfo {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && f > 0 {
			return int(f)
		}
	}
	return 0
}

// defaults fills the generation defaults and stop tokens the server
// applies on its own.
func (p *prober) defaults() {
	s := &p.res.Stop
	switch p.routes().Defaults {
	case model.LlamaCpp:
		if p.props.Gen == nil {
			s.DefaultsFrom = "not known: llama-server's /props did not answer"
			return
		}
		var g struct {
			Params map[string]any `json:"params"`
		}
		var flat map[string]any
		_ = json.Unmarshal(p.props.Gen, &g)
		_ = json.Unmarshal(p.props.Gen, &flat)
		src := g.Params // newer builds nest them under params
		if src == nil {
			src = flat
		}
		s.Defaults = map[string]string{}
		for _, k := range []string{"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n", "presence_penalty", "frequency_penalty", "n_predict", "seed", "ignore_eos"} {
			if v, ok := src[k]; ok {
				s.Defaults[k] = scalar(v)
			}
		}
		if st, ok := src["stop"].([]any); ok {
			for _, x := range st {
				s.StopTokens = append(s.StopTokens, scalar(x))
			}
		}
		if p.props.EOS != "" {
			s.StopTokens = append(s.StopTokens, p.props.EOS+" (EOS)")
		}
		s.DefaultsFrom = "/props default_generation_settings"
	case model.Ollama:
		if p.show.Parameters == "" && p.show.Template == "" {
			s.DefaultsFrom = "not known: Ollama's /api/show did not answer"
			return
		}
		s.Defaults = map[string]string{}
		for _, line := range strings.Split(p.show.Parameters, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			v := strings.Trim(strings.Join(f[1:], " "), `"`)
			if f[0] == "stop" {
				s.StopTokens = append(s.StopTokens, v)
				continue
			}
			s.Defaults[f[0]] = v
		}
		s.DefaultsFrom = "/api/show parameters (the Modelfile's PARAMETER lines; Ollama's built-in defaults apply to the rest)"
	default:
		s.DefaultsFrom = "not served over HTTP by " + engineName(p.eng)
		if n := p.routes().DefaultsNote; n != "" {
			s.DefaultsFrom = n
		}
	}
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10) // a seed of 4294967295, not 4.294967295e+09
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// notChecked says why a check could not run on this engine's route.
func notChecked(eng model.Engine, route string, err error) string {
	if missing(err) {
		return "not checked: " + engineName(eng) + " has no " + route + " (" + err.Error() + ")"
	}
	return "not checked: " + route + " failed: " + err.Error()
}

func engineName(e model.Engine) string { return engines.Name(e) }
