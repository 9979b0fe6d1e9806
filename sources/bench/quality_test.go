package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/sources/bench/report"
)

func newScratch() *textScratch { return scratchPool.New().(*textScratch) }

func toks(s string) []uint64 { return tokenHashes(make([]uint64, 0, maxTokens), []byte(s)) }

// someWords is n random words of the synthetic prompts' vocabulary, a
// different draw for each off.
func someWords(off, n int) string { return promptText(7, off, n, 0) }

func TestAppendTextUnescapes(t *testing.T) {
	cases := []struct{ in, want string }{
		{`plain text`, "plain text"},
		{`a\nb\tc\rd`, "a\nb\tc\rd"},
		{`say \"hi\" \\ \/`, `say "hi" \ /`},
		{`caf\u00e9 \u4f60\u597d`, "café 你好"},
		{`\ud83d\ude00!`, "😀!"},
		{`\ud83d alone`, "\uFFFD alone"},
		{`bad \u12 escape`, "bad \uFFFD12 escape"},
		{`ends with \`, `ends with \`},
	}
	for _, c := range cases {
		got := appendText(make([]byte, 0, 64), []byte(c.in))
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendTextNeverGrows(t *testing.T) {
	buf := make([]byte, 0, 8)
	buf = appendText(buf, []byte("abcdef"))
	buf = appendText(buf, []byte("ghijkl"))
	if string(buf) != "abcdefgh" || cap(buf) != 8 {
		t.Fatalf("got %q cap %d", buf, cap(buf))
	}
	// A rune that does not fit is left out whole.
	buf = appendText(make([]byte, 0, 8), []byte(`abcdef\u4f60`))
	if string(buf) != "abcdef" {
		t.Fatalf("got %q", buf)
	}
	if got := appendText(nil, []byte("x")); len(got) != 0 {
		t.Fatalf("nil buffer kept %q", got)
	}
}

func TestTokenHashes(t *testing.T) {
	a, b := toks("The  MODEL,\nis"), toks("the model , is")
	if len(a) != 4 || len(b) != 4 {
		t.Fatalf("tokens %d %d, want 4 (words and the comma)", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("token %d differs: case and white space must not matter", i)
		}
	}
	if x := toks("a !"); x[0] == x[1] || toks("a")[0] == toks("!")[0] {
		t.Error("a one-letter word and a punctuation byte must differ")
	}
	if n := len(toks("你好")); n != 2 {
		t.Errorf("non-ASCII characters are one token each, got %d", n)
	}
	if got := tokenHashes(make([]uint64, 0, 3), []byte("a b c d e")); len(got) != 3 || cap(got) != 3 {
		t.Errorf("bounded by capacity: %d", len(got))
	}
}

func TestEchoes(t *testing.T) {
	prompt := someWords(0, 64)
	pw := strings.Fields(prompt)
	cases := []struct {
		name, prompt, answer string
		want                 bool
	}{
		{"the whole prompt back", prompt, prompt, true},
		{"16 words from the middle, other case and spacing", prompt,
			"Sure. " + strings.ToUpper(strings.Join(pw[20:36], "\n")) + " is what you said.", true},
		{"15 words is not an echo", prompt, "Sure. " + strings.Join(pw[20:35], " ") + " ok", false},
		{"16 words out of order", prompt, strings.Join(append(append([]string{}, pw[28:36]...), pw[20:28]...), " "), false},
		{"a 5-word prompt echoed whole", "alpha beta gamma delta epsilon", "you wrote: alpha beta gamma delta epsilon.", true},
		{"a 5-word prompt, 4 of its words", "alpha beta gamma delta epsilon", "alpha beta gamma delta", false},
		{"a 3-word prompt is not judged", "alpha beta gamma", "alpha beta gamma", false},
		{"an ordinary answer", prompt, "These look like random English words; there is no question in them to answer.", false},
		{"no answer", prompt, "", false},
	}
	sc := newScratch()
	for _, c := range cases {
		if got := echoes(toks(c.prompt), toks(c.answer), sc); got != c.want {
			t.Errorf("%s: echoes = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLoops(t *testing.T) {
	rep := func(unit string, n int) string { return strings.TrimSpace(strings.Repeat(unit+" ", n)) }
	sentence := "I am sorry but I cannot help."                                       // 8 tokens
	prose := "The quick brown fox jumps over the lazy dog near the river bank today." // 15 tokens
	cases := []struct {
		name, text string
		want       bool
	}{
		{"one word 20 times", rep("the", 20), true},
		{"one word 19 times", rep("the", 19), false},
		{"a pair 10 times", rep("yes no", 10), true},
		{"a pair 9 times", rep("yes no", 9), false},
		{"a sentence 4 times at the end", prose + " " + rep(sentence, 4), true},
		{"a sentence 3 times", prose + " " + rep(sentence, 3), false},
		{"exclamation marks (NaN output)", strings.Repeat("!", 200), true},
		{"a table rule in the middle of an answer", prose + " " + prose + " |" + rep("---|", 6) + " " + prose + " " + prose, false},
		{"a unit of 33 tokens is past the longest period", rep(someWords(0, 33), 4), false},
		{"a unit of 32 tokens 4 times", rep(someWords(0, 32), 4), true},
		{"ordinary prose", prose + " " + someWords(3, 80), false},
		{"empty", "", false},
	}
	for _, c := range cases {
		if got := loops(toks(c.text)); got != c.want {
			t.Errorf("%s: loops = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPromptOf(t *testing.T) {
	c := Config{InputLen: 40, OutputLen: 8, Seed: 3}
	want := promptText(3, 5, 40, 0)
	for _, api := range APIs {
		c.API = api
		if got := string(promptOf(c.body("org/m-\"content\":\"x", 5, true))); got != want {
			t.Errorf("%s: prompt %q, want %q", api, got, want)
		}
	}
	c.API, c.InputLen = Chat, 2000
	if got := promptOf(c.body("m", 1, false)); len(got) != textPrefix {
		t.Errorf("long prompt: %d bytes read, want the first %d", len(got), textPrefix)
	}
	if promptOf([]byte(`{"model":"m"}`)) != nil {
		t.Error("no prompt in the body")
	}
}

func TestJudge(t *testing.T) {
	body := (&Config{InputLen: 32, OutputLen: 8}).body("m", 0, false)
	prompt := string(promptOf(body))
	cases := []struct {
		name, text                string
		reasoning, ok             bool
		blank, echoed, repetitive bool
	}{
		{name: "good answer", text: "These are random words.", ok: true},
		{name: "white space only", text: " \n\n ", ok: true, blank: true},
		{name: "reasoning only is not blank", text: "", reasoning: true, ok: true},
		{name: "echo", text: prompt, ok: true, echoed: true},
		{name: "loop", text: strings.Repeat("ok ", 30), ok: true, repetitive: true},
		{name: "an echo repeated counts once, as an echo", text: strings.Repeat(prompt+" ", 4), ok: true, echoed: true},
		{name: "failed requests are not judged", text: strings.Repeat("ok ", 30), ok: false},
	}
	for _, c := range cases {
		rec := report.Record{OK: c.ok}
		judge(&rec, []byte(c.text), body, c.reasoning, newScratch())
		if rec.Blank != c.blank || rec.Echoed != c.echoed || rec.Repetitive != c.repetitive {
			t.Errorf("%s: blank %v echoed %v repetitive %v", c.name, rec.Blank, rec.Echoed, rec.Repetitive)
		}
	}
}

// Judging a full 2 KB answer against a 2 KB prompt: the per-request cost.
func BenchmarkJudge(b *testing.B) {
	body := (&Config{InputLen: 400, OutputLen: 8}).body("m", 0, false)
	text := []byte(someWords(5, 600))[:textPrefix]
	sc := newScratch()
	b.ReportAllocs()
	for b.Loop() {
		rec := report.Record{OK: true}
		judge(&rec, text, body, false, sc)
	}
}

// End to end over every protocol: the fake engine's answers are judged and
// counted in the result, under their JSON names.
func TestRunCountsBadAnswers(t *testing.T) {
	cases := []struct {
		mode                      string
		tokens                    int
		blank, echoed, repetitive int
	}{
		{mode: "", tokens: 8},
		{mode: "", tokens: 24, repetitive: 12}, // " tok" 24 times
		{mode: "echo", tokens: 24, echoed: 12},
		{mode: "blank", tokens: 8, blank: 12},
	}
	for _, api := range APIs {
		for _, c := range cases {
			t.Run(string(api)+"/"+c.mode+"/"+fmt.Sprint(c.tokens), func(t *testing.T) {
				s := newFake(t, &fakeEngine{mode: c.mode, tokens: c.tokens})
				cfg := quick(s.URL)
				cfg.API, cfg.InputLen = api, 20
				res := run(t, cfg)
				if res.Completed != 12 {
					t.Fatalf("completed %d: %v", res.Completed, res.ErrorsByKind)
				}
				if res.BlankResponses != c.blank || res.EchoedResponses != c.echoed || res.RepetitiveResponses != c.repetitive {
					t.Errorf("blank/echoed/repetitive = %d/%d/%d, want %d/%d/%d", res.BlankResponses, res.EchoedResponses, res.RepetitiveResponses, c.blank, c.echoed, c.repetitive)
				}
				js, _ := json.Marshal(res)
				for _, k := range []string{`"blank_responses":`, `"echoed_responses":`, `"repetitive_responses":`} {
					if !strings.Contains(string(js), k) {
						t.Errorf("JSON lacks %s", k)
					}
				}
			})
		}
	}
}
