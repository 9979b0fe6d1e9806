package probe

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// healthRoute is where each engine says whether it serves.
var healthRoute = map[model.Engine]string{
	model.VLLM:     "/health",
	model.SGLang:   "/health",
	model.TGI:      "/health",
	model.LlamaCpp: "/health",
	model.TRTLLM:   "/health",
	model.Triton:   "/v2/health/ready",
	model.Ollama:   "/",
	model.Unknown:  "/health",
}

// Health asks the engine's health route and reads the answer with that
// engine's semantics: llama.cpp and SGLang answer 503 while loading or
// starting, vLLM 503 only when its engine died, Triton's readiness fails
// while models load. A route that does not exist (a metrics-only port)
// is unknown, not unhealthy.
func Health(ctx context.Context, client *http.Client, base string, eng model.Engine) (model.Health, string) {
	route, ok := healthRoute[eng]
	if !ok {
		route = "/health"
	}
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
	switch eng {
	case model.LlamaCpp:
		if he.Status == http.StatusServiceUnavailable {
			return model.HealthLoading, "loading model"
		}
	case model.SGLang:
		if he.Status == http.StatusServiceUnavailable {
			return model.HealthLoading, "starting or shutting down (503)"
		}
	case model.Triton:
		return model.HealthLoading, "not ready: models loading or failed to load"
	case model.VLLM:
		if he.Status == http.StatusServiceUnavailable {
			return model.HealthUnhealthy, "engine dead (503): see the server log"
		}
	case model.TRTLLM:
		if he.Status == http.StatusServiceUnavailable && strings.Contains(body, "load") {
			return model.HealthLoading, "loading (503)"
		}
	default:
		if he.Status == http.StatusServiceUnavailable && strings.Contains(body, "loading") {
			return model.HealthLoading, "loading (503)"
		}
	}
	return model.HealthUnhealthy, oneLine(he.Error(), 160)
}
