package behaviour

import (
	"context"
	"fmt"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// GoldenPrompts are the fixed prompts whose greedy answers `probe
// --reference` and `probe --golden` compare: short, with one expected
// answer each, so a different answer means a different model, template,
// tokenizer or kernel, not chance.
var GoldenPrompts = []string{
	"Write one short sentence about the sea.",
	"What is the capital of France? Answer with one word.",
	"List the first five prime numbers, separated by commas.",
}

// answerTokens caps each answer: enough to see where two answers part.
const answerTokens = 48

// Answers asks cfg's endpoint each prompt greedily (temperature 0, the
// probe's seed), one at a time, and tokenizes each answer with the
// engine's own tokenizer where it has a route for it. err only when the
// endpoint could not be identified; a prompt without an answer says why.
func Answers(ctx context.Context, cfg Config, prompts []string) (model.AnswerSet, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 8 * time.Second
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 25 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Budget)
	defer cancel()
	p := &prober{cfg: cfg, k: newConn(cfg.URL, cfg.APIKey, cfg.Timeout)}
	set := model.AnswerSet{Endpoint: model.RedactURL(cfg.URL), Time: time.Now()}
	ictx, icancel := context.WithTimeout(ctx, cfg.Timeout)
	id, err := probe.Identify(ictx, p.k.c, p.k.base, cfg.Engine)
	icancel()
	if id.Engine == model.Unknown {
		if err == nil {
			err = fmt.Errorf("no engine recognised")
		}
		return set, fmt.Errorf("cannot identify the engine at %s: %v", model.RedactURL(cfg.URL), p.k.scrub(err.Error()))
	}
	p.eng, p.modelID = id.Engine, cfg.Model
	if p.modelID == "" && len(id.Models) > 0 {
		p.modelID = id.Models[0].ID
	}
	if p.modelID == "" {
		return set, fmt.Errorf("%s %w", model.RedactURL(cfg.URL), ErrNoModel)
	}
	set.Engine = id.Engine
	set.Identity = model.Fingerprint{Model: p.modelID, EngineVersion: id.Version}
	for _, pr := range prompts {
		a := model.Answer{Prompt: pr}
		g, err := p.chat(ctx, "answers", []map[string]string{{"role": "user", "content": pr}}, answerTokens)
		if err != nil {
			a.NotChecked = "not checked: /v1/chat/completions failed: " + p.k.scrub(err.Error())
		} else {
			a.Text, a.Finish = g.text, g.finish
			if ids, err := p.tokenize(ctx, "answers", g.text); err == nil {
				a.TokenIDs = ids
			}
		}
		set.Answers = append(set.Answers, a)
	}
	return model.CleanAnswers(set), nil
}
