package engine

import (
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

const ollamaNote = "Ollama exposes no request metrics (running, waiting, rates, latencies): " +
	"only per-request timings in its generate/chat answers"

// collectOllama reads Ollama's /api/ps (loaded models: VRAM, expiry,
// allocated context) and /api/tags (the local catalogue). It refreshes the
// identity's model list each poll, since Ollama loads and unloads models on
// demand, and gives one sample per loaded model carrying those facts in
// Info; no concept is set because Ollama exposes none.
func collectOllama(c *collector) ([]model.Sample, error) {
	c.lastPath = "/api/ps"
	models, err := probe.OllamaModels(c.ctx, c.s.client, c.s.cfg.URL)
	if err != nil {
		return nil, err
	}
	c.id.Models = models
	return ollamaSamples(models, c.meta()), nil
}

const (
	ollamaCPUNote     = "running on CPU (no VRAM): size_vram 0"
	ollamaOffloadNote = "not all in VRAM (CPU offload slows it): size_vram / size = "
)

func ollamaSamples(models []model.ModelInfo, m meta) []model.Sample {
	var out []model.Sample
	for _, mi := range models {
		if mi.Extra[model.ExtraLoaded] != "true" {
			continue
		}
		s := m.sample(mi.ID)
		for k, v := range mi.Extra {
			if k != model.ExtraLoaded {
				s.Info[k] = v
			}
		}
		if mi.Extra["size_vram"] == "0" {
			s.Notes = append(s.Notes, ollamaCPUNote) // a CPU-only host: nothing is offloaded, there is no VRAM
		} else if r, ok := mi.Extra["vram_ratio"]; ok && r != "1.000" {
			s.Notes = append(s.Notes, ollamaOffloadNote+r)
		}
		s.Notes = append(s.Notes, ollamaNote)
		out = append(out, s)
	}
	return out
}
