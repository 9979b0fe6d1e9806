//go:build engines

package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The behaviour probe against the real engines. Their tiny random models answer garbage, and the
// probe must describe it truthfully: at temperature 0 with one slot the same request answers the
// same, answers run to max_tokens (nothing makes the random model emit its EOS), the template and
// tokenizer routes are the engine's own, and what the engine lacks is said.

// probeJSON is `llmtop probe --json`'s document.
type probeJSON struct {
	Status     string              `json:"status"`
	ExitCode   int                 `json:"exit_code"`
	Error      string              `json:"error"`
	NotChecked []string            `json:"not_checked"`
	Findings   []diagnosis.Finding `json:"findings"`
	Behaviour  *model.Behaviour    `json:"behaviour"`
}

const probeKey = "sk-llmtop-probe-test-0451"

// runProbe runs `llmtop probe --json` with an API key the engine does not need (it must never
// appear in the output). LLMTOP_PROBE_DUMP=DIR keeps the documents (the captures in
// diagnosis/testdata/probe came from there).
func runProbe(t *testing.T, url string, args ...string) (probeJSON, string) {
	t.Helper()
	start := time.Now()
	out, stderr, code := runLLMTop(t, 60*time.Second, append([]string{"probe", "--json", "--timeout", "20s", "--api-key", probeKey, url}, args...)...)
	var doc probeJSON
	if err := json.Unmarshal(out, &doc); err != nil || doc.Behaviour == nil {
		t.Fatalf("probe --json: exit %d, %v; stderr %s; stdout %.800s", code, err, stderr, out)
	}
	if code != doc.ExitCode {
		t.Errorf("exit status %d, the document says %d", code, doc.ExitCode)
	}
	if strings.Contains(string(out), probeKey) || strings.Contains(stderr, probeKey) {
		t.Errorf("the API key is in the output")
	}
	if took := time.Since(start); took > 30*time.Second || doc.Behaviour.TookS > 30 {
		t.Errorf("the probe took %v (its own count %.1f s): over 30 s", took, doc.Behaviour.TookS)
	}
	if dump := os.Getenv("LLMTOP_PROBE_DUMP"); dump != "" {
		_ = os.WriteFile(filepath.Join(dump, fmt.Sprintf("probe-%s-%d.json", doc.Behaviour.Engine, time.Now().Unix())), out, 0o644)
	}
	return doc, string(out)
}

func has(fs []diagnosis.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}

// checkCommon asserts what both engines' tiny models show.
func checkCommon(t *testing.T, doc probeJSON) {
	t.Helper()
	b := doc.Behaviour
	d := b.Determinism
	if d.NotChecked != "" || !d.Identical || d.A == "" || d.A != d.B || !d.Seed {
		t.Errorf("determinism at temperature 0 on one slot: %+v", d)
	}
	s := b.Stop
	if s.NotChecked != "" || s.Finish != "length" || !s.Tokens.OK || s.Tokens.V != float64(s.MaxTokens) || s.MaxTokens != 256 {
		t.Errorf("the random model's answer must run to max_tokens: %+v", s)
	}
	if !contains(s.StopTokens, "<|im_end|>") {
		t.Errorf("stop tokens %q: want the chatml turn end the engine stops on", s.StopTokens)
	}
	if !b.Template.Special || b.Template.Family != "chatml" {
		t.Errorf("template %+v: the tiny model's chatml template has its markers", b.Template)
	}
	if !has(doc.Findings, "probe_runs_to_length") || has(doc.Findings, "probe_nondeterministic") || has(doc.Findings, "probe_template") || has(doc.Findings, "probe_route_mismatch") {
		t.Errorf("findings %+v", doc.Findings)
	}
	if doc.ExitCode != 1 || doc.Status != "warn" {
		t.Errorf("status %q exit %d: runs-to-length is a warning", doc.Status, doc.ExitCode)
	}
	if b.Identity.TemplateHash == "" || b.Identity.GenConfigHash == "" || b.Identity.EngineVersion == "" {
		t.Errorf("identity %+v", b.Identity)
	}
	if len(b.Raw) < 5 {
		t.Errorf("%d raw exchanges", len(b.Raw))
	}
}

func contains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestProbeLlamaServer(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	modelPath := writeModel(t, llamaShape)
	p := startPrivateLlama(t, bin, modelPath, port, "probe", "-np", "1", "-c", "4096")
	defer p.stop()
	doc, _ := runProbe(t, fmt.Sprintf("http://127.0.0.1:%d", port))
	checkCommon(t, doc)
	b := doc.Behaviour
	tp := b.Template
	if tp.Route != "/apply-template + /tokenize" || !strings.HasPrefix(tp.Rendered, "<|im_start|>user") || len(tp.TokenIDs) == 0 || tp.IsSource {
		t.Errorf("llama-server renders through /apply-template: %+v", tp)
	}
	if !tp.Compared || !tp.SameAnswer {
		t.Errorf("the rendered prompt on /v1/completions must answer as chat did: %+v", tp)
	}
	if b.Tokens.Route != "/tokenize" || len(b.Tokens.Samples) != 3 {
		t.Fatalf("tokenization %+v", b.Tokens)
	}
	for _, s := range b.Tokens.Samples {
		// The generated vocabulary has 60 words, the Latin letters and byte fallback: English
		// splits, typography and CJK fall back to 3 bytes per character.
		if s.Tokens <= 0 || (s.Name == "CJK" && s.Tokens != 3*s.Runes+1) {
			t.Errorf("%s: %d tokens for %d characters", s.Name, s.Tokens, s.Runes)
		}
	}
	if !has(doc.Findings, "probe_tokenizer_cjk") {
		t.Errorf("byte fallback for CJK not reported: %+v", doc.Findings)
	}
	st := b.Stop
	if st.DefaultsFrom != "/props default_generation_settings" || st.Defaults["temperature"] == "" || st.Defaults["top_k"] != "40" || !contains(st.StopTokens, "(EOS)") {
		t.Errorf("llama-server's defaults from /props: %+v", st)
	}
	if b.Identity.Revision != modelPath || b.Identity.MaxContext != 4096 || b.Identity.TokenizerHash == "" {
		t.Errorf("identity %+v", b.Identity)
	}
	if len(doc.NotChecked) != 0 {
		t.Errorf("llama-server has every route the probe uses; not checked: %q", doc.NotChecked)
	}
}

func TestProbeOllama(t *testing.T) {
	s := ollama(t)
	doc, _ := runProbe(t, s.URL, "--model", ollamaModel)
	checkCommon(t, doc)
	b := doc.Behaviour
	tp := b.Template
	if tp.Route != "/api/show template" || !tp.IsSource || !strings.Contains(tp.Rendered, "{{") || len(tp.Lacks) != 2 {
		t.Errorf("Ollama shows its Go template and lacks a rendering route: %+v", tp)
	}
	if tp.Compared || !strings.Contains(tp.CompareNotChecked, "Ollama does not show the prompt it renders") {
		t.Errorf("compare: %+v", tp)
	}
	if !strings.Contains(b.Tokens.NotChecked, "Ollama has no tokenize route") || b.Identity.TokenizerHash != "" {
		t.Errorf("tokenization %+v, tokenizer hash %q", b.Tokens, b.Identity.TokenizerHash)
	}
	if b.Repetition.Unit != "words" {
		t.Errorf("repetition without a tokenizer counts words: %+v", b.Repetition)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(b.Identity.Revision) {
		t.Errorf("revision %q: want the model's digest from /api/tags", b.Identity.Revision)
	}
	if b.Stop.Defaults["num_thread"] != "1" {
		t.Errorf("defaults %+v: want the Modelfile's PARAMETER num_thread 1", b.Stop.Defaults)
	}
}
