package probe

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// describe fills version and models the way each engine publishes them.
// Missing routes leave fields empty; they never fail the identification.
func (p *prober) describe(id *model.Identity) {
	switch id.Engine {
	case model.VLLM, model.TRTLLM:
		var v struct {
			Version   string `json:"version"`
			Simulated bool   `json:"simulated"` // llmtop's own simulator says so
		}
		_ = p.json("/version", &v)
		id.Version, id.Simulated = v.Version, v.Simulated
	case model.SGLang:
		var v struct {
			Version string `json:"version"`
		}
		if p.json("/server_info", &v) != nil || v.Version == "" {
			_ = p.json("/get_server_info", &v)
		}
		id.Version = v.Version
	case model.TGI:
		var v struct {
			ModelID        string `json:"model_id"`
			MaxTotalTokens int    `json:"max_total_tokens"`
			Version        string `json:"version"`
		}
		if p.json("/info", &v) == nil {
			id.Version = v.Version
			if v.ModelID != "" {
				id.Models = []model.ModelInfo{{ID: v.ModelID, MaxContext: v.MaxTotalTokens}}
			}
		}
	case model.LlamaCpp:
		p.describeLlamaCpp(id)
	case model.Triton:
		id.Version = p.versionAt("/v2")
	case model.Ollama:
		id.Version = p.versionAt("/api/version")
		id.Models, _ = OllamaModels(p.ctx, p.c, p.base)
	}
	if len(id.Models) == 0 {
		id.Models = p.openAIModels()
	}
}

func (p *prober) versionAt(path string) string {
	var v struct {
		Version string `json:"version"`
	}
	_ = p.json(path, &v)
	return v.Version
}

// openAIModels lists /v1/models with the context length vLLM publishes
// (max_model_len) or llama.cpp's training context.
func (p *prober) openAIModels() []model.ModelInfo {
	ml, err := p.modelList()
	if err != nil || ml == nil {
		return nil
	}
	out := make([]model.ModelInfo, 0, len(ml.Data))
	for _, d := range ml.Data {
		if d.ID == "" {
			continue
		}
		out = append(out, model.ModelInfo{ID: d.ID, MaxContext: d.MaxModelLen})
	}
	return out
}

func (p *prober) describeLlamaCpp(id *model.Identity) {
	var v struct {
		BuildInfo  string `json:"build_info"`
		ModelAlias string `json:"model_alias"`
		ModelPath  string `json:"model_path"`
		NCtx       int    `json:"n_ctx"`
		Settings   struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		TotalSlots int `json:"total_slots"`
	}
	if p.json("/props", &v) != nil {
		return
	}
	id.Version = v.BuildInfo
	name := v.ModelAlias
	if name == "" {
		if ms := p.openAIModels(); len(ms) > 0 {
			name = ms[0].ID
		}
	}
	if name == "" && v.ModelPath != "" {
		name = v.ModelPath[strings.LastIndexAny(v.ModelPath, `/\`)+1:]
	}
	if name == "" {
		return
	}
	ctx := v.Settings.NCtx // per slot: what one request can use
	if ctx == 0 {
		ctx = v.NCtx
	}
	mi := model.ModelInfo{ID: name, MaxContext: ctx}
	if v.TotalSlots > 0 {
		mi.Extra = map[string]string{"slots": strconv.Itoa(v.TotalSlots)}
	}
	id.Models = []model.ModelInfo{mi}
}

// ollamaModel is one /api/ps or /api/tags entry.
type ollamaModel struct {
	Name      string `json:"name"`
	Model     string `json:"model"`
	Size      int64  `json:"size"`
	SizeVRAM  *int64 `json:"size_vram"`
	ExpiresAt string `json:"expires_at"`
	Context   int    `json:"context_length"`
	Details   struct {
		Family        string `json:"family"`
		ParameterSize string `json:"parameter_size"`
		Quantization  string `json:"quantization_level"`
		ContextLength int    `json:"context_length"`
	} `json:"details"`
}

// OllamaModels lists Ollama's loaded models (/api/ps) first, with their
// VRAM, expiry and allocated context, then the other local models
// (/api/tags) marked loaded=false. The error is /api/ps's: without it
// nothing is known about what is loaded.
func OllamaModels(ctx context.Context, client *http.Client, base string) ([]model.ModelInfo, error) {
	var ps, tags ollamaList
	if err := getJSON(ctx, client, base+"/api/ps", &ps); err != nil {
		return nil, err
	}
	_ = getJSON(ctx, client, base+"/api/tags", &tags) // optional: the catalogue
	return ollamaModels(ps, tags), nil
}

// ollamaList is /api/ps's and /api/tags's answer.
type ollamaList struct {
	Models []ollamaModel `json:"models"`
}

// ParseOllama decodes the bodies of /api/ps and /api/tags (tags may be
// empty) as OllamaModels does; the fuzz target reads through it.
func ParseOllama(psBody, tagsBody []byte) ([]model.ModelInfo, error) {
	var ps, tags ollamaList
	if err := json.Unmarshal(psBody, &ps); err != nil {
		return nil, err
	}
	_ = json.Unmarshal(tagsBody, &tags)
	return ollamaModels(ps, tags), nil
}

func ollamaModels(ps, tags ollamaList) []model.ModelInfo {
	var out []model.ModelInfo
	loaded := map[string]bool{}
	for _, m := range ps.Models {
		mi := ollamaInfo(m)
		mi.Extra[model.ExtraLoaded] = "true"
		out = append(out, mi)
		loaded[mi.ID] = true
	}
	var rest []model.ModelInfo
	for _, m := range tags.Models {
		mi := ollamaInfo(m)
		if loaded[mi.ID] {
			continue
		}
		mi.Extra[model.ExtraLoaded] = "false"
		rest = append(rest, mi)
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].ID < rest[j].ID })
	return append(out, rest...)
}

func ollamaInfo(m ollamaModel) model.ModelInfo {
	id := m.Name
	if id == "" {
		id = m.Model
	}
	// A negative size or context is no model's: unknown, never shown.
	mi := model.ModelInfo{ID: id, MaxContext: max(m.Context, 0), Extra: map[string]string{}}
	if mi.MaxContext == 0 {
		mi.MaxContext = max(m.Details.ContextLength, 0)
	}
	put := func(k, v string) {
		if v != "" {
			mi.Extra[k] = v
		}
	}
	if m.Size > 0 {
		put("size", strconv.FormatInt(m.Size, 10))
	}
	if m.SizeVRAM != nil && *m.SizeVRAM >= 0 {
		put("size_vram", strconv.FormatInt(*m.SizeVRAM, 10))
		if m.Size > 0 {
			// Below 1 the model is partly offloaded to the CPU.
			put("vram_ratio", strconv.FormatFloat(float64(*m.SizeVRAM)/float64(m.Size), 'f', 3, 64))
		}
	}
	put("expires_at", m.ExpiresAt)
	if m.Context > 0 {
		put("context_length", strconv.Itoa(m.Context))
	}
	put("family", m.Details.Family)
	put("parameter_size", m.Details.ParameterSize)
	put("quantization", m.Details.Quantization)
	return mi
}
