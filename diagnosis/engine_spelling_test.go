package diagnosis

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// What llmtop knows about an engine lives in its file under engines/: the
// log-event advice and the finding type name no engine, neither by its
// name (vLLM, llama.cpp, …), nor by its registry entry (engines.VLLM,
// model.Ollama), nor by a log line's kind ("vllm_max_len_kv": which failure
// a line means is engines.LogLine.Finding). The rules' other files still
// do where an engine's own behaviour is judged; these two are held to it.
func TestEventAdviceSpellsNoEngine(t *testing.T) {
	var words []string
	for _, s := range engines.All() {
		words = append(words, regexp.QuoteMeta(s.Name))
		for _, a := range s.Aliases {
			words = append(words, regexp.QuoteMeta(a))
		}
	}
	names := regexp.MustCompile(`(` + strings.Join(words, "|") + `)`)
	code := regexp.MustCompile(`\b(engines|model)\.(VLLM|SGLang|TGI|LlamaCpp|TRTLLM|Triton|Ollama|RayServe|KServe|NIM)\b`)
	kinds := map[string]bool{}
	for _, l := range engines.LogLines() {
		kinds[l.ID] = true
	}
	literal := regexp.MustCompile(`"([a-z0-9_]+)"`)
	for _, f := range []string{"events_advice.go", "finding.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := names.FindString(line); m != "" {
				t.Errorf("%s:%d names %q: %s", f, i+1, m, strings.TrimSpace(line))
			}
			if m := code.FindString(line); m != "" {
				t.Errorf("%s:%d reads %s: %s", f, i+1, m, strings.TrimSpace(line))
			}
			for _, m := range literal.FindAllStringSubmatch(line, -1) {
				if kinds[m[1]] && engines.LogEngine(m[1]) != model.Unknown {
					t.Errorf("%s:%d spells the log line %q of one engine: %s", f, i+1, m[1], strings.TrimSpace(line))
				}
			}
		}
	}
}
