//go:build engines

package engines

import (
	"context"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// TestDiscoverBothEngines probes the engines' ports plus a closed one, as `llmtop` does without a
// URL on the default ports: each engine is found and named, the closed port is left out.
func TestDiscoverBothEngines(t *testing.T) {
	l, o := llama(t), ollama(t)
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	found := probe.Discover(ctx, "127.0.0.1", []int{l.Port, closed, o.Port}, 2*time.Second)
	got := map[string]model.Engine{}
	for _, f := range found {
		got[f.URL] = f.Identity.Engine
	}
	if len(found) != 2 || got[l.URL] != model.LlamaCpp || got[o.URL] != model.Ollama {
		t.Errorf("discovered %v; want %s → llamacpp and %s → ollama, nothing on port %d", got, l.URL, o.URL, closed)
	}
}
