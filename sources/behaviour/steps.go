package behaviour

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// The probe's generation requests and the checks built on them.

// gen is one generation's answer.
type gen struct {
	text, finish string
	tokens       model.Opt
}

// chat sends messages to /v1/chat/completions at temperature 0 (with a
// seed: every engine here takes one).
func (p *prober) chat(ctx context.Context, check string, msgs []map[string]string, maxTok int) (gen, error) {
	var r struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			Finish string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	body := map[string]any{"model": p.modelID, "messages": msgs, "max_tokens": maxTok, "temperature": 0, "seed": seed, "stream": false}
	if err := p.k.call(ctx, check, http.MethodPost, "/v1/chat/completions", body, &r); err != nil {
		return gen{}, err
	}
	if len(r.Choices) == 0 {
		return gen{}, fmt.Errorf("/v1/chat/completions answered without choices")
	}
	g := gen{text: r.Choices[0].Message.Content, finish: r.Choices[0].Finish}
	if r.Usage != nil {
		g.tokens = model.Some(float64(r.Usage.Completion))
	}
	return g, nil
}

// complete sends a raw prompt to /v1/completions at temperature 0; vLLM is
// told not to add special tokens again (the rendering has them).
func (p *prober) complete(ctx context.Context, prompt string, maxTok int) (gen, error) {
	var r struct {
		Choices []struct {
			Text   string `json:"text"`
			Finish string `json:"finish_reason"`
		} `json:"choices"`
	}
	body := map[string]any{"model": p.modelID, "prompt": prompt, "max_tokens": maxTok, "temperature": 0, "seed": seed, "stream": false}
	if p.routes().RawPrompt {
		body["add_special_tokens"] = false
	}
	if err := p.k.call(ctx, "template", http.MethodPost, "/v1/completions", body, &r); err != nil {
		return gen{}, err
	}
	if len(r.Choices) == 0 {
		return gen{}, fmt.Errorf("/v1/completions answered without choices")
	}
	return gen{text: r.Choices[0].Text, finish: r.Choices[0].Finish}, nil
}

func (p *prober) checkDeterminism(ctx context.Context) {
	d := &p.res.Determinism
	d.Seed = true
	a, err := p.chat(ctx, "determinism", chatMessages, shortTokens)
	if err == nil {
		var b gen
		if b, err = p.chat(ctx, "determinism", chatMessages, shortTokens); err == nil {
			p.compare(ctx, a, b)
		}
	}
	if err != nil {
		d.NotChecked = "not checked: /v1/chat/completions failed: " + err.Error()
	}
	p.compareRoutes(ctx, a, err == nil)
}

func (p *prober) compare(ctx context.Context, a, b gen) {
	d := &p.res.Determinism
	i := diverge(a.text, b.text)
	d.Identical = i < 0
	d.A, d.B = around(a.text, max(i, 0)), around(b.text, max(i, 0))
	if d.Identical {
		return
	}
	d.DivergeChar = i
	if i == 0 {
		d.DivergeToken = model.Some(0)
	} else if ids, err := p.tokenize(ctx, "determinism", a.text[:i]); err == nil {
		d.DivergeToken = model.Some(float64(len(ids)))
	}
}

// compareRoutes sends the rendered prompt raw to /v1/completions: with the
// template applied as the chat route applies it, a greedy answer is the
// same on both routes.
func (p *prober) compareRoutes(ctx context.Context, chat gen, ok bool) {
	t := &p.res.Template
	switch {
	case !ok:
		t.CompareNotChecked = "not checked: the chat route did not answer"
		return
	case t.IsSource || t.Rendered == "":
		t.CompareNotChecked = "not checked: " + engineName(p.eng) + " does not show the prompt it renders"
		return
	case !p.res.Determinism.Identical:
		t.CompareNotChecked = "not checked: the chat route itself is not deterministic at temperature 0"
		return
	}
	c, err := p.complete(ctx, t.Rendered, shortTokens)
	if err != nil {
		t.CompareNotChecked = notChecked(p.eng, "/v1/completions", err)
		return
	}
	t.Compared, t.SameAnswer = true, c.text == chat.text
	i := max(diverge(chat.text, c.text), 0)
	t.ChatAnswer, t.CompletionAnswer = around(chat.text, i), around(c.text, i)
}

func (p *prober) checkTokens(ctx context.Context) {
	tk := &p.res.Tokens
	tk.Route = tokenizeRoute(p.eng)
	if tk.Route == "" {
		tk.NotChecked = "not checked: " + engineName(p.eng) + " has no tokenize route"
		return
	}
	var all []string
	for _, s := range samples {
		ids, err := p.tokenize(ctx, "tokenization", s.text)
		if err != nil {
			tk.NotChecked = notChecked(p.eng, tk.Route, err)
			tk.Samples = nil
			return
		}
		est := estimate(s.text)
		tk.Samples = append(tk.Samples, model.TokenSample{Name: s.name, Text: s.text, Runes: len([]rune(s.text)),
			Tokens: len(ids), Expected: est, Ratio: float64(len(ids)) / est})
		all = append(all, idStrings(ids)...)
	}
	p.res.Identity.TokenizerHash = model.Digest(strings.Join(all, ","))
}

func (p *prober) checkStop(ctx context.Context) {
	s := &p.res.Stop
	s.MaxTokens = stopTokens
	g, err := p.chat(ctx, "stop", stopQuestion, stopTokens)
	if err != nil {
		s.NotChecked = "not checked: /v1/chat/completions failed: " + err.Error()
		p.res.Repetition.NotChecked = "not checked: no answer to measure"
		return
	}
	s.Finish, s.Tokens, s.Answer = g.finish, g.tokens, bound(g.text)
	// The ratio over the engine's tokens where it can count them; the
	// repeated n-gram in words, which a reader can read.
	w := repetition(words(g.text), "words")
	p.res.Repetition = w
	if ids, err := p.tokenize(ctx, "repetition", g.text); err == nil && len(ids) > 0 {
		p.res.Repetition = repetition(idStrings(ids), "tokens")
		p.res.Repetition.NGram, p.res.Repetition.NGramCount = w.NGram, w.NGramCount
	}
}
