package probe

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Health asks the engine's health route and reads the answer with that
// engine's semantics: llama.cpp and SGLang answer 503 while loading or
// starting, vLLM 503 only when its engine died, Triton's readiness fails
// while models load. A route that does not exist (a metrics-only port)
// is unknown, not unhealthy.
func Health(ctx context.Context, client *http.Client, base string, eng model.Engine) (model.Health, string) {
	h := engines.HealthOf(eng)
	route := h.Route
	url := strings.TrimRight(base, "/") + route
	_, _, err := Get(ctx, client, url, "", maxProbeBody)
	if err == nil {
		return model.HealthUp, ""
	}
	var he *HTTPError
	if !errors.As(err, &he) {
		if answered(err) {
			return model.HealthUp, ""
		}
		if unusable(err) {
			return model.HealthUnknown, oneLine(err.Error(), 160)
		}
		return model.HealthDown, oneLine(err.Error(), 160)
	}
	body := strings.ToLower(he.Body)
	switch {
	case he.Status == http.StatusNotFound || he.Status == http.StatusMethodNotAllowed:
		return model.HealthUnknown, route + " not served here (metrics-only port?)"
	case he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden:
		return model.HealthUnknown, route + " needs credentials (--api-key)"
	}
	if (h.Status == 0 || he.Status == h.Status) && strings.Contains(body, h.BodyHas) {
		return h.Means, h.Why
	}
	return model.HealthUnhealthy, oneLine(he.Error(), 160)
}
