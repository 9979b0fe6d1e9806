// Package probe finds out what answers at a URL: which serving engine, its
// version, its served models and their context length, and its health as
// that engine defines it. It also discovers engines on local default ports.
//
// Detection reads each engine's own identity routes (vLLM's /v1/models
// owned_by "vllm", TGI's /info, llama.cpp's /props, SGLang's /model_info,
// Ollama's /api/version…) and never takes /api/tags alone as proof of Ollama:
// SGLang serves it too.
package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// ErrUnrecognised is returned when something answers HTTP but no known
// engine's fingerprint matches.
var ErrUnrecognised = errors.New("answers HTTP, but not as vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM, Triton or Ollama (pass --engine to force one)")

// UnavailableError is an answer that matched no engine while a route
// llmtop identifies engines by answered 503 Service Unavailable: an
// engine that is not ready (loading, restarting, dead) or a router or
// proxy with no healthy worker behind it. It is ErrUnrecognised too
// (errors.Is), but says the 503: no engine could say what it is yet.
type UnavailableError struct{ *HTTPError }

func (e *UnavailableError) Unwrap() error { return ErrUnrecognised }

// Identify finds out which engine serves baseURL (unless forced), its
// version and models, and its health. It returns an error when nothing
// answers (the transport error, for the caller to classify) or when the
// answer matches no engine (ErrUnrecognised, with Health set).
func Identify(ctx context.Context, client *http.Client, baseURL string, forced model.Engine) (model.Identity, error) {
	base := strings.TrimRight(baseURL, "/")
	p := &prober{ctx: ctx, c: client, base: base}
	eng := forced
	if eng == model.Unknown {
		var err error
		eng, err = p.detect()
		if err != nil {
			h := model.HealthDown
			if needsAuth(err) || unusable(err) {
				h = model.HealthUnknown
			}
			return model.Identity{Engine: model.Unknown, Health: h}, err
		}
	}
	id := model.Identity{Engine: eng}
	p.describe(&id)
	id.Health, id.HealthDetail = Health(ctx, client, base, eng)
	if eng == model.Unknown {
		if p.unavailable != nil {
			return id, &UnavailableError{p.unavailable}
		}
		return id, ErrUnrecognised
	}
	if forced != model.Unknown && !p.anyAnswer && id.Health == model.HealthDown {
		return id, p.transportErr
	}
	return id, nil
}

// prober carries one identification's requests and remembers what it has
// already fetched, so detection and description do not ask twice.
type prober struct {
	ctx  context.Context
	c    *http.Client
	base string

	models       *modelList
	modelsErr    error
	anyAnswer    bool
	transportErr error
	unavailable  *HTTPError // the first route that answered 503
}

func (p *prober) url(path string) string { return p.base + path }

// json fetches path into v and records whether the server answered at all.
func (p *prober) json(path string, v any) error {
	err := getJSON(p.ctx, p.c, p.url(path), v)
	p.note(err)
	return err
}

func (p *prober) text(path string) (string, error) {
	s, err := getText(p.ctx, p.c, p.url(path))
	p.note(err)
	return s, err
}

func (p *prober) note(err error) {
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusServiceUnavailable && p.unavailable == nil {
		p.unavailable = he
	}
	if answered(err) {
		p.anyAnswer = true
	} else if p.transportErr == nil {
		p.transportErr = err
	}
}

// modelList is the OpenAI /v1/models answer with the engine-specific fields
// that fingerprint it.
type modelList struct {
	Data []struct {
		ID          string `json:"id"`
		OwnedBy     string `json:"owned_by"`
		MaxModelLen int    `json:"max_model_len"`
		Meta        struct {
			NCtxTrain int `json:"n_ctx_train"`
		} `json:"meta"`
	} `json:"data"`
}

func (p *prober) modelList() (*modelList, error) {
	if p.models == nil && p.modelsErr == nil {
		var ml modelList
		if err := p.json("/v1/models", &ml); err != nil {
			p.modelsErr = err
		} else {
			p.models = &ml
		}
	}
	return p.models, p.modelsErr
}

// detect runs the fingerprints cheapest and most common first.
func (p *prober) detect() (model.Engine, error) {
	ml, err := p.modelList()
	if err != nil && !answered(err) {
		return model.Unknown, err // nothing listens there
	}
	// vLLM's --api-key guards /v1 only: the other fingerprints and the
	// metrics may still say which engine this is.
	authErr := err
	if !needsAuth(err) {
		authErr = nil
	}
	if ml != nil && len(ml.Data) > 0 {
		if e := engines.ByOwner(ml.Data[0].OwnedBy); e != model.Unknown {
			return e, nil
		}
	}
	for _, fp := range fingerprints {
		if fp.match(p) {
			return fp.engine, nil
		}
	}
	if sniffed := p.sniffMetrics(); sniffed != model.Unknown {
		return sniffed, nil
	}
	if authErr != nil {
		return model.Unknown, authErr
	}
	if !p.anyAnswer {
		if p.transportErr != nil {
			return model.Unknown, p.transportErr
		}
		return model.Unknown, fmt.Errorf("%s: no answer", p.base)
	}
	return model.Unknown, nil
}

func needsAuth(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden)
}

// fingerprint recognises one engine from its identity routes.
type fingerprint struct {
	engine model.Engine
	match  func(p *prober) bool
}

var fingerprints = []fingerprint{
	{model.LlamaCpp, func(p *prober) bool {
		var v struct {
			BuildInfo string         `json:"build_info"`
			Settings  map[string]any `json:"default_generation_settings"`
		}
		return p.json("/props", &v) == nil && (v.BuildInfo != "" || v.Settings != nil)
	}},
	{model.TGI, func(p *prober) bool {
		var v struct {
			Router         string `json:"router"`
			ModelID        string `json:"model_id"`
			MaxTotalTokens int    `json:"max_total_tokens"`
		}
		return p.json("/info", &v) == nil &&
			(v.Router == "text-generation-router" || (v.ModelID != "" && v.MaxTotalTokens > 0))
	}},
	{model.SGLang, func(p *prober) bool {
		var v struct {
			ModelPath string `json:"model_path"`
		}
		if p.json("/model_info", &v) == nil && v.ModelPath != "" {
			return true
		}
		s, err := p.text("/")
		return err == nil && strings.HasPrefix(s, "SGLang")
	}},
	{model.Ollama, func(p *prober) bool {
		// /api/version plus the root banner or a valid /api/ps: SGLang
		// (already ruled out above) can answer "Ollama is running" and
		// /api/tags, but has no /api/version.
		var v struct {
			Version string `json:"version"`
		}
		if p.json("/api/version", &v) != nil || v.Version == "" {
			return false
		}
		if s, err := p.text("/"); err == nil && s == "Ollama is running" {
			return true
		}
		var ps struct {
			Models []any `json:"models"`
		}
		return p.json("/api/ps", &ps) == nil
	}},
	{model.TRTLLM, func(p *prober) bool {
		// trtllm-serve: /version like vLLM, but /metrics is a JSON list
		// of iteration stats, and Prometheus lives at /prometheus/metrics.
		var v struct {
			Version string `json:"version"`
		}
		if p.json("/version", &v) != nil || v.Version == "" {
			return false
		}
		var iter []map[string]any
		if p.json("/metrics", &iter) == nil {
			return true
		}
		body, _, err := Get(p.ctx, p.c, p.url("/prometheus/metrics"), "text/plain", maxProbeBody)
		p.note(err)
		return err == nil && strings.Contains(string(body), engines.TRTLLM.Prefix())
	}},
	{model.Triton, func(p *prober) bool {
		var v struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		return p.json("/v2", &v) == nil && strings.Contains(strings.ToLower(v.Name), "triton")
	}},
}

// sniffMetrics reads /metrics, then the other routes wrapping layers serve
// an engine's metrics on (NIM's /v1/metrics, SGLang's gateway's
// /engine_metrics), and names the engine their families give away.
func (p *prober) sniffMetrics() model.Engine {
	for _, path := range sniffPaths() {
		body, _, err := Get(p.ctx, p.c, p.url(path), "text/plain;version=0.0.4", 64<<20)
		p.note(err)
		if err != nil {
			continue
		}
		if e := SniffMetrics(body); e != model.Unknown {
			return e
		}
	}
	return model.Unknown
}

// sniffPaths is /metrics and each wrapping layer's own metrics route.
func sniffPaths() []string {
	out := []string{"/metrics"}
	for _, e := range engines.All() {
		if e.Like != model.Unknown && e.MetricsPath != "" && !slices.Contains(out, e.MetricsPath) {
			out = append(out, e.MetricsPath)
		}
	}
	return out
}

// SniffMetrics names the engine whose metric prefix appears first in a
// Prometheus text body.
func SniffMetrics(body []byte) model.Engine {
	s := string(body)
	best, at := model.Unknown, len(s)
	for _, e := range engines.All() {
		for _, p := range e.Prefixes {
			if i := strings.Index(s, "\n"+p); i >= 0 && i < at {
				best, at = e.ID, i
			} else if strings.HasPrefix(s, p) {
				return e.ID
			}
		}
	}
	return best
}
