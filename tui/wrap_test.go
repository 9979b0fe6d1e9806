package tui

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

func TestWordWrap(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want []string
	}{
		{"lower the fraction (vLLM --gpu-memory-utilization)", 30, []string{"lower the fraction (vLLM", "--gpu-memory-utilization)"}},
		{"abcdefghij xy", 4, []string{"abcd", "efgh", "ij", "xy"}},
		{"abcdefgh  xy", 4, []string{"abcd", "efgh", "xy"}}, // no indentation after a cut word
		{"", 10, []string{""}},
		{"   ", 10, []string{""}},
		{"  two   spaces ", 20, []string{"  two   spaces"}}, // the text's own spacing
		{"  two   spaces ", 7, []string{"  two", "spaces"}}, // none where it breaks
		{"      deep", 5, []string{"deep"}},                 // indentation that does not fit goes
		{"a\tb\nc", 10, []string{"a b c"}},
		{"日本語 テキスト", 6, []string{"日本語", "テキス", "ト"}},
		{"日本", 1, []string{"…", "…"}}, // a character wider than the line: never wider than w
		{"| id  1 |        eval time =", 12, []string{"| id  1 |", "eval time ="}},
	} {
		if got := wordWrap(c.in, c.w); !slices.Equal(got, c.want) {
			t.Errorf("wordWrap(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

// llama.cpp's timing lines align their columns with runs of spaces: each
// wrapped row is a piece of the line as it was, at most w cells, and
// nothing but the spaces at the breaks is lost.
func TestWordWrapKeepsLlamaColumns(t *testing.T) {
	f, err := os.Open("../sources/logs/testdata/loglat/llama-server-2slots-6streams.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := model.SanitizeLine(sc.Bytes())
		if !strings.Contains(line, "print_timing") {
			continue
		}
		n++
		for w := 2; w <= 160; w += 7 {
			checkWrap(t, line, w)
		}
		if got := wordWrap(line, 200); len(got) != 1 || got[0] != strings.TrimRight(line, " ") {
			t.Errorf("a line that fits changed: %q → %q", line, got)
		}
	}
	if n < 10 {
		t.Fatalf("only %d print_timing lines in the test data", n)
	}
	got := wordWrap("0.05.908.306 I slot print_timing: id  1 | task 0 |        eval time =      46.84 ms /    64 tokens", 60)
	if want := "0.05.908.306 I slot print_timing: id  1 | task 0 |"; got[0] != want || !strings.HasPrefix(got[1], "eval time =      46.84 ms /    64 tokens") {
		t.Errorf("the columns moved: %q", got)
	}
}

// Wide characters (CJK, emoji, flags, combining accents) count their
// cells: no row is wider than w.
func TestWordWrapWideCharacters(t *testing.T) {
	parts := []string{"日本語", "👩‍💻", "🇯🇵", "e\u0301", "abc", "  ", " ", "テキストテキスト", "x", "❤"}
	seed := uint32(1)
	for i := 0; i < 400; i++ {
		var b strings.Builder
		for j := 0; j < 12; j++ {
			seed = seed*1664525 + 1013904223
			b.WriteString(parts[seed>>24%uint32(len(parts))])
		}
		for w := 1; w <= 21; w++ {
			checkWrap(t, b.String(), w)
		}
	}
}

func checkWrap(t *testing.T, text string, w int) {
	t.Helper()
	rows := wordWrap(text, w)
	var kept strings.Builder
	for _, r := range rows {
		if n := ansi.StringWidth(r); n > w {
			t.Fatalf("wordWrap(%q, %d): row %q is %d cells", text, w, r, n)
		}
		if r != "…" && !strings.Contains(text, r) {
			t.Fatalf("wordWrap(%q, %d): row %q is not a piece of the text", text, w, r)
		}
		kept.WriteString(r)
	}
	if squeeze(kept.String()) != squeeze(text) && !slices.Contains(rows, "…") {
		t.Fatalf("wordWrap(%q, %d) lost text: %q", text, w, rows)
	}
}

func squeeze(s string) string { return strings.Join(strings.Fields(s), "") }

// The log pane keeps a log line's columns, and draws nothing a line from
// outside could steer the terminal with, even one that reached the
// screen without the log source's sanitiser (a recording's).
// (The lines reach the pane clean: the log source's and the recording
// reader's tests hold them to that.)
func TestLogPaneKeepsColumnsAndIsSafe(t *testing.T) {
	m := newTestModel()
	m.Update(model.LogLine{Time: t0, Text: "slot print_timing: id  1 | task 0 |        eval time =      46.84 ms"})
	m.Update(model.LogLine{Time: t0, Text: model.SanitizeLine([]byte("evil \x1b]0;pwned\x07title \x1b[2J\x1b[31mred\x1b[0m \x9b1mC1 bell\x07 done"))})
	out := (&logPane{}).View(m.d, 60, 6)
	if !strings.Contains(out, "|        eval time =") {
		t.Errorf("the log pane collapsed the columns:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if model.Unsafe(l) || ansi.StringWidth(l) > 60 {
			t.Errorf("the log pane draws %q", l)
		}
	}
	if !strings.Contains(out, "red") || !strings.Contains(out, "done") {
		t.Errorf("the cleaned line lost its text:\n%s", out)
	}
}
