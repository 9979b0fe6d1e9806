//go:build engines

package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// probeJSON is `llmtop probe --json`'s document.
type probeJSON struct {
	Status     string              `json:"status"`
	ExitCode   int                 `json:"exit_code"`
	Error      string              `json:"error"`
	NotChecked []string            `json:"not_checked"`
	Findings   []diagnosis.Finding `json:"findings"`
	Behaviour  *model.Behaviour    `json:"behaviour"`
}

func runProbe(t *testing.T, url string, args ...string) probeJSON {
	t.Helper()
	start := time.Now()
	out, stderr, code := runLLMTop(t, 60*time.Second, append([]string{"probe", "--json", "--timeout", "20s", url}, args...)...)
	took := time.Since(start)
	var doc probeJSON
	if err := json.Unmarshal(out, &doc); err != nil || doc.Behaviour == nil {
		t.Fatalf("probe --json: exit %d, %v; stderr %s; stdout %.800s", code, err, stderr, out)
	}
	if code != doc.ExitCode {
		t.Errorf("exit status %d, the document says %d", code, doc.ExitCode)
	}
	if dump := os.Getenv("LLMTOP_PROBE_DUMP"); dump != "" {
		_ = os.WriteFile(filepath.Join(dump, fmt.Sprintf("probe-%d.json", time.Now().UnixNano())), out, 0o644)
	}
	t.Logf("probe took %v (its own count %.1f s)", took, doc.Behaviour.TookS)
	return doc
}

func TestProbeLlamaServerDump(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := startPrivateLlama(t, bin, writeModel(t, llamaShape), port, "probe", "-np", "1", "-c", "4096")
	defer p.stop()
	doc := runProbe(t, fmt.Sprintf("http://127.0.0.1:%d", port))
	b, _ := json.MarshalIndent(doc, "", "  ")
	t.Logf("%s", b)
}

func TestProbeOllamaDump(t *testing.T) {
	s := ollama(t)
	doc := runProbe(t, s.URL, "--model", ollamaModel)
	b, _ := json.MarshalIndent(doc, "", "  ")
	t.Logf("%s", b)
	_ = gguf.Tiny
}
