package behaviour

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/llmtop/llmtop/model"
)

// family is a chat format: the markers its template renders around turns.
type family struct {
	name    string
	markers []string
	// names are substrings of a model id that point to it.
	names []string
}

// families are the common chat formats (from the models' own
// tokenizer_config.json chat templates). Order matters: the first match of
// a model id wins (qwen before the generic chatml).
var families = []family{
	{"llama3", []string{"<|start_header_id|>", "<|eot_id|>"}, []string{"llama-3", "llama3", "llama-4"}},
	{"chatml", []string{"<|im_start|>", "<|im_end|>"}, []string{"qwen", "chatml", "hermes", "yi-", "smollm"}},
	{"mistral", []string{"[INST]", "[/INST]"}, []string{"mistral", "mixtral", "llama-2", "llama2"}},
	{"gemma", []string{"<start_of_turn>", "<end_of_turn>"}, []string{"gemma"}},
	{"phi3", []string{"<|user|>", "<|end|>", "<|assistant|>"}, []string{"phi-3", "phi3", "phi-4"}},
	{"deepseek", []string{"<｜User｜>", "<｜Assistant｜>"}, []string{"deepseek"}},
	{"gpt-oss", []string{"<|start|>", "<|message|>"}, []string{"gpt-oss"}},
}

// familyOf finds the chat format from a template's source or rendering
// first (what the server actually uses), then from the model id.
func familyOf(modelID, template string) (family, bool) {
	for _, f := range families {
		if template != "" && strings.Contains(template, f.markers[0]) {
			return f, true
		}
	}
	id := strings.ToLower(modelID)
	for _, f := range families {
		for _, n := range f.names {
			if strings.Contains(id, n) {
				return f, true
			}
		}
	}
	return family{}, false
}

// anyMarker reports whether s holds any chat marker at all: a rendering
// with none is the bare message text, whatever the model.
func anyMarker(s string) bool {
	for _, f := range families {
		for _, m := range f.markers {
			if strings.Contains(s, m) {
				return true
			}
		}
	}
	for _, m := range []string{"<s>", "<|", "<start_of", "### Instruction", "USER:", "<bos>"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// judgeTemplate fills the family and whether the rendering has its
// markers: all of the expected family's when it is known from the model's
// name, any chat marker when it is not.
func judgeTemplate(t *model.Template, modelID, source string) {
	f, ok := familyOf(modelID, source)
	if !ok && !t.IsSource {
		f, ok = familyOf("", t.Rendered)
	}
	if ok {
		t.Family, t.Expected = f.name, f.markers
		t.Special = true
		for _, m := range f.markers {
			if !strings.Contains(t.Rendered, m) {
				t.Special = false
			}
		}
		return
	}
	t.Special = anyMarker(t.Rendered)
}

// diverge returns the first byte where a and b differ (on a rune
// boundary), or -1 when they are equal.
func diverge(a, b string) int {
	if a == b {
		return -1
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	for i > 0 && !utf8.RuneStart(a[min(i, len(a)-1)]) {
		i--
	}
	return i
}

// around is s from a little before i, bounded.
func around(s string, i int) string {
	from := max(0, i-24)
	for from > 0 && from < len(s) && !utf8.RuneStart(s[from]) {
		from--
	}
	out := s[from:]
	if len(out) > 200 {
		out = out[:200] + "…"
	}
	if from > 0 {
		out = "…" + out
	}
	return out
}

// sample is a text the tokenizer is asked about, with its estimate.
type sample struct {
	name, text string
}

// samples: plain English (~4 characters per token in every modern
// tokenizer), typographic punctuation and CJK (~1 token per character:
// byte-level vocabularies without these characters need 2-3).
var samples = []sample{
	{"plain English", "The quick brown fox jumps over the lazy dog while the committee reviews the annual budget report."},
	{"typographic", "“Smart quotes” — an em dash, ‘single quotes’… and café"},
	{"CJK", "今天天气很好，我们去公园散步吧。東京の桜は美しい。"},
}

// estimate is the expected token count: ASCII at 4 characters per token,
// every other character one token.
func estimate(s string) float64 {
	var ascii, other float64
	for _, r := range s {
		if r < 128 {
			ascii++
		} else {
			other++
		}
	}
	return max(1, ascii/4+other)
}

// repetition computes the unique-token ratio of units and its most repeated
// n-gram (n = 3, or 1 for answers shorter than 12 units).
func repetition(units []string, unit string) model.Repetition {
	r := model.Repetition{Unit: unit, Total: len(units)}
	if len(units) == 0 {
		r.NotChecked = "the answer was empty"
		return r
	}
	seen := map[string]bool{}
	for _, u := range units {
		seen[u] = true
	}
	r.UniqueRatio = float64(len(seen)) / float64(len(units))
	n := 3
	if len(units) < 12 {
		n = 1
	}
	counts := map[string]int{}
	for i := 0; i+n <= len(units); i++ {
		counts[strings.Join(units[i:i+n], "\x00")]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > 0 && counts[keys[0]] > 1 {
		r.NGram, r.NGramCount = strings.ReplaceAll(keys[0], "\x00", " "), counts[keys[0]]
	}
	return r
}

// words splits an answer into lower-cased words (for engines without a
// tokenize route).
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func idStrings(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprint(id)
	}
	return out
}
