//go:build engines

package engines

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// TestLlamaServerAPIKey runs llama-server with --api-key: it answers /health to anyone but /props,
// /metrics and /slots only with the key. Without it llmtop must say so and how to fix it; with it,
// everything works; the key never appears in llmtop's output.
func TestLlamaServerAPIKey(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	const key = "llmtop-test-key-3f9a"
	p := startPrivateLlama(t, bin, modelPath, port, "apikey", "--api-key", key, "-np", "1", "-c", "2048")
	defer p.stop()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)

	for _, withKey := range []bool{false, true} {
		args := []string{"snapshot", "--json", "--no-gpu", "--interval", "500ms", url}
		if withKey {
			args = append(args, "--api-key", key)
		}
		out, stderr, code := runLLMTop(t, 30*time.Second, args...)
		if strings.Contains(string(out)+stderr, key) {
			t.Errorf("the API key appears in llmtop's output")
		}
		var doc model.SnapshotJSON
		if err := json.Unmarshal(out, &doc); err != nil || len(doc.Endpoints) != 1 {
			t.Fatalf("snapshot (key %v): exit %d, %v: %s %s", withKey, code, err, out, stderr)
		}
		ep := doc.Endpoints[0]
		if !withKey {
			if ep.Metrics != nil || !strings.Contains(ep.Error, "401") || !strings.Contains(ep.Hint, "--api-key") {
				t.Errorf("without the key: error %q hint %q metrics %v; want the 401 and a hint naming --api-key", ep.Error, ep.Hint, ep.Metrics)
			}
			continue
		}
		if code != 0 || ep.Engine != model.LlamaCpp || ep.Error != "" || ep.Metrics == nil || !ep.Metrics.Running.OK {
			t.Errorf("with the key: exit %d, engine %q error %q metrics %v", code, ep.Engine, ep.Error, ep.Metrics)
		}
	}
}
