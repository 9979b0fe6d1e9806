package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Ollama with no model loaded answered, had no numbers, and the panes
// said "the endpoint answered but published no metrics for a model" under
// a header naming its model: it loads one on the next request.
func TestOllamaWithNoModelLoadedSaysSo(t *testing.T) {
	m := newTestModel()
	m.Update(model.Scrape{Endpoint: testURL, Time: t0, Identity: model.Identity{Engine: model.Ollama, Version: "0.17.4",
		Models: []model.ModelInfo{{ID: "small:latest"}}}})
	out := screen(t, m, 120, 40)
	if !strings.Contains(out, "Ollama has no model loaded") || strings.Contains(out, "published no metrics") {
		t.Errorf("idle Ollama:\n%s", out)
	}
}
