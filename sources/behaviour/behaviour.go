// Package behaviour is the behaviour probe: a handful of small, sequential
// requests to one endpoint that describe how its model answers
// (determinism at temperature 0, the chat template as the server renders
// it, tokenization, stop tokens and length, repetition, and the identity of
// what answered). It never loads the server: one request at a time, short
// max_tokens, bounded by a per-request timeout and an overall budget. The
// result is a model.Behaviour, cleaned for a terminal; the judgment is
// diagnosis.ProbeFindings'.
package behaviour

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// Config is one probe.
type Config struct {
	URL    string
	Model  string       // "" = the first model the endpoint lists
	APIKey string       // sent as "Authorization: Bearer …"; never kept
	Engine model.Engine // forced; Unknown = identify it
	// Timeout bounds one request (default 8 s), Budget the whole probe
	// (default 25 s): a hung endpoint gives a partial result.
	Timeout, Budget time.Duration
	// Progress, when set, hears each step's name as it starts.
	Progress func(step string)
}

// Lengths: short answers for the determinism and template checks; a
// generous but bounded cap for the stop check.
const (
	shortTokens = 24
	stopTokens  = 256
	seed        = 1234
)

// stopQuestion has a one-word answer: a model that stops answers it in a
// few tokens; one that never meets its stop token runs to the cap.
var stopQuestion = []map[string]string{{"role": "user", "content": "What is the capital of France? Answer with one word."}}

type prober struct {
	cfg     Config
	k       *conn
	eng     model.Engine
	modelID string
	res     model.Behaviour
	props   llamaProps
	show    ollamaShow
}

// Run probes cfg.URL and returns what it saw; err only when nothing could
// be probed at all (nothing answers, no model). A check that could not run
// says why in its NotChecked.
func Run(ctx context.Context, cfg Config) (model.Behaviour, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 8 * time.Second
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 25 * time.Second
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Budget)
	defer cancel()
	p := &prober{cfg: cfg, k: newConn(cfg.URL, cfg.APIKey, cfg.Timeout)}
	p.res = model.Behaviour{Endpoint: cfg.URL, Time: start}
	err := p.run(ctx)
	p.res.TookS = time.Since(start).Seconds()
	p.res.Raw = p.k.raw
	return model.CleanBehaviour(withoutKey(p.res, cfg.APIKey)), err
}

// withoutKey replaces the key wherever the server echoed it into the
// result (an answer, an error body), whatever the field.
func withoutKey(b model.Behaviour, key string) model.Behaviour {
	if key == "" {
		return b
	}
	doc, err := json.Marshal(b)
	esc, _ := json.Marshal(key)
	if err != nil || len(esc) < 3 {
		return b
	}
	doc = bytes.ReplaceAll(doc, esc[1:len(esc)-1], []byte(model.Redacted))
	var out model.Behaviour
	if json.Unmarshal(doc, &out) != nil {
		return b
	}
	return out
}

func (p *prober) step(name string) {
	if p.cfg.Progress != nil {
		p.cfg.Progress(name)
	}
}

// ErrNoModel: the engine answers, but lists no model to probe.
var ErrNoModel = errors.New("lists no model")

// unrecognised is an answer no engine's fingerprint matched: the server is
// there. It is probe.ErrUnrecognised (errors.Is), with the scrubbed text.
type unrecognised struct{ msg string }

func (u unrecognised) Error() string { return u.msg }
func (u unrecognised) Unwrap() error { return probe.ErrUnrecognised }

func (p *prober) run(ctx context.Context) error {
	p.step("identify")
	ictx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	id, err := probe.Identify(ictx, p.k.c, p.k.base, p.cfg.Engine)
	cancel()
	if err != nil && (id.Engine == model.Unknown || (id.Health == model.HealthDown && len(id.Models) == 0)) {
		if p.cfg.Engine != model.Unknown {
			return fmt.Errorf("%s does not answer: %v", model.RedactURL(p.cfg.URL), p.k.scrub(err.Error()))
		}
		if errors.Is(err, probe.ErrUnrecognised) {
			// it answers: not "unreachable"
			return fmt.Errorf("cannot identify the engine at %s: %w", model.RedactURL(p.cfg.URL), unrecognised{p.k.scrub(err.Error())})
		}
		return fmt.Errorf("cannot identify the engine at %s: %v", model.RedactURL(p.cfg.URL), p.k.scrub(err.Error()))
	}
	p.eng = id.Engine
	p.res.Engine = id.Engine
	p.modelID = p.cfg.Model
	f := &p.res.Identity
	f.EngineVersion = id.Version
	for _, m := range id.Models {
		if p.modelID == "" || m.ID == p.modelID {
			if p.modelID == "" {
				p.modelID = m.ID
			}
			f.MaxContext = m.MaxContext
			break
		}
	}
	if p.modelID == "" {
		return fmt.Errorf("%s answers but %w: pass --model", engineName(p.eng), ErrNoModel)
	}
	f.Model = p.modelID
	p.identity(ctx)

	steps := []struct {
		name string
		fn   func(context.Context)
	}{
		{"template", p.checkTemplate},
		{"determinism", p.checkDeterminism},
		{"tokenization", p.checkTokens},
		{"stop", p.checkStop},
	}
	for _, s := range steps {
		why := ""
		switch {
		case ctx.Err() != nil:
			why = fmt.Sprintf("the probe's %s budget ran out (the endpoint answers slowly or not at all)", p.cfg.Budget)
		case p.k.timeouts >= 2:
			why = fmt.Sprintf("two requests in a row got no answer within %s (the endpoint hangs)", p.cfg.Timeout)
		}
		if why != "" {
			p.res.Partial = "stopped before the " + s.name + " check: " + why
			p.skipRest()
			break
		}
		p.step(s.name)
		s.fn(ctx)
		if ctx.Err() != nil && p.res.Partial == "" {
			// the budget ran out inside this check (the last one
			// included): what it did not finish is not a pass
			p.res.Partial = fmt.Sprintf("stopped during the %s check: the probe's %s budget ran out (the endpoint answers slowly, or its streams never end)", s.name, p.cfg.Budget)
			p.cutShort(s.name)
			break
		}
	}
	f.GenConfigHash = model.GenConfigDigest(p.res.Stop.Defaults, p.res.Stop.StopTokens)
	return nil
}

// cutShort marks the check the budget ran out in and those after it as
// not checked (the ones before it finished).
func (p *prober) cutShort(step string) {
	why := "not checked: " + p.res.Partial
	r := &p.res
	order := []string{"template", "determinism", "tokenization", "stop"}
	from := slices.Index(order, step)
	var fields []*string
	for _, s := range order[max(from, 0):] {
		switch s {
		case "template":
			if r.Template.Route == "" {
				fields = append(fields, &r.Template.NotChecked)
			}
			if !r.Template.Compared {
				fields = append(fields, &r.Template.CompareNotChecked)
			}
		case "determinism":
			fields = append(fields, &r.Determinism.NotChecked)
		case "tokenization":
			fields = append(fields, &r.Tokens.NotChecked)
		case "stop":
			fields = append(fields, &r.Stop.NotChecked, &r.Repetition.NotChecked)
		}
	}
	for _, f := range fields {
		if *f == "" {
			*f = why
		}
	}
}

// skipRest marks every check that never ran.
func (p *prober) skipRest() {
	why := "not checked: " + p.res.Partial
	r := &p.res
	for _, s := range []*string{&r.Determinism.NotChecked, &r.Tokens.NotChecked, &r.Stop.NotChecked, &r.Repetition.NotChecked} {
		if *s == "" {
			*s = why
		}
	}
	if r.Template.Route == "" && r.Template.NotChecked == "" {
		r.Template.NotChecked = why
	}
	if !r.Template.Compared && r.Template.CompareNotChecked == "" {
		r.Template.CompareNotChecked = why
	}
}

// identity reads what the engine says about the model beyond /v1/models:
// its file, digest or sha, and (for later checks) its template and
// defaults.
func (p *prober) identity(ctx context.Context) {
	f := &p.res.Identity
	switch p.routes().Identity {
	case model.LlamaCpp:
		if p.k.call(ctx, "identity", http.MethodGet, "/props", nil, &p.props) == nil {
			f.Revision = p.props.ModelPath
			if f.EngineVersion == "" {
				f.EngineVersion = p.props.Build
			}
		}
	case model.Ollama:
		_ = p.k.call(ctx, "identity", http.MethodPost, "/api/show", map[string]any{"model": p.modelID}, &p.show)
		if f.MaxContext == 0 {
			f.MaxContext = p.show.contextLength() // the model's trained context; num_ctx may set less
		}
		var tags struct {
			Models []struct {
				Name   string `json:"name"`
				Digest string `json:"digest"`
			} `json:"models"`
		}
		if p.k.call(ctx, "identity", http.MethodGet, "/api/tags", nil, &tags) == nil {
			for _, m := range tags.Models {
				if m.Name == p.modelID || strings.TrimSuffix(m.Name, ":latest") == p.modelID {
					f.Revision = m.Digest
				}
			}
		}
	case model.TGI:
		var info struct {
			SHA string `json:"model_sha"`
		}
		if p.k.call(ctx, "identity", http.MethodGet, "/info", nil, &info) == nil {
			f.Revision = info.SHA
		}
	}
	p.defaults()
}

func (p *prober) checkTemplate(ctx context.Context) {
	t := &p.res.Template
	source := p.template(ctx)
	if t.NotChecked == "" {
		judgeTemplate(t, p.modelID, source)
	}
	f := &p.res.Identity
	switch {
	case source != "":
		f.TemplateHash, f.TemplateFrom = model.Digest(source), "template source"
	case t.Rendered != "":
		f.TemplateHash, f.TemplateFrom = model.Digest(t.Rendered), "the probe's rendered prompt"
	}
	t.Rendered = bound(t.Rendered)
	if len(t.TokenIDs) > 512 {
		t.TokenIDs = t.TokenIDs[:512]
	}
}
