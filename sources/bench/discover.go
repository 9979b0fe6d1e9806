package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// discoverModel asks the server which model it serves: the first of
// /v1/models (OpenAI APIs) or /api/tags (Ollama's native APIs).
func discoverModel(ctx context.Context, c *http.Client, cfg *Config) (string, error) {
	path := "/v1/models"
	if cfg.API.ndjson() {
		path = "/api/tags"
	}
	base := cfg.BaseURL() // in messages: without the query, which may hold a token
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.endpoint(path), nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("cannot list models at %s%s: %v; check the URL or pass --model", base, path, withoutURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", fmt.Errorf("reading %s%s: %v", base, path, withoutURL(err))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return "", fmt.Errorf("%s%s answered %d: pass --api-key or set OPENAI_API_KEY", base, path, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s%s answered %d: pass --model", base, path, resp.StatusCode)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", fmt.Errorf("%s%s is not a model list (%v): pass --model", base, path, err)
	}
	switch {
	case len(list.Data) > 0 && list.Data[0].ID != "":
		return list.Data[0].ID, nil
	case len(list.Models) > 0 && list.Models[0].Name != "":
		return list.Models[0].Name, nil
	case len(list.Models) > 0 && list.Models[0].Model != "":
		return list.Models[0].Model, nil
	}
	return "", fmt.Errorf("%s%s lists no model: load one, or pass --model", base, path)
}
