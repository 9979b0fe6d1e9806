package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Every symbol width() counts without the grapheme walk is one cell to
// ansi.StringWidth, which the rest of the layout (and lipgloss) uses.
func TestNarrowSymbolsAreOneCell(t *testing.T) {
	n := 0
	for r := rune(0x80); r < 0x30000; r++ {
		if !narrowSymbol(r) {
			continue
		}
		n++
		if w := ansi.StringWidth(string(r)); w != 1 {
			t.Errorf("%U %q: StringWidth %d, narrowSymbol says 1", r, r, w)
		}
	}
	if n < 200 {
		t.Fatalf("only %d narrow symbols", n)
	}
}

// width agrees with ansi.StringWidth on lines like the ones drawn and on
// the pieces that must send it down the slow path (wide, combining,
// joined and variation-selected characters, other escapes, controls).
func TestWidthMatchesStringWidth(t *testing.T) {
	pieces := []string{
		"a", "TTFT p99 ", "0.42 s", " ", "│", "╭─", "▁▂▃▅▇█", "→", "·", "…", "≤", "µs", "°C",
		"\x1b[38;5;203m", "\x1b[0m", "\x1b[1;4m", "\x1b[38:2::255:0:0m",
		"模型", "é", "e\u0301", "│\u0301", "→\ufe0f", "✓", "❤\ufe0f", "👍🏽", "👨\u200d👩", "\u200d",
		"\x1b]8;;http://x\x07link\x1b]8;;\x07", "\x1b", "\x1b[", "\x07", "\t", "\x7f", "\u0085",
		"\xff", "\xe2\x94",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := rng.IntN(8); j >= 0; j-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := width(s), ansi.StringWidth(s); got != want {
			t.Fatalf("width(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	}
}

// A frame's lines take the fast path: the point of width().
func TestFrameLinesTakeTheFastPath(t *testing.T) {
	m := fullModel(t, false) // 200×60, every pane full
	slow := 0
	lines := strings.Split(m.Render(), "\n")
	for _, l := range lines {
		if fastWidth(l) < 0 {
			slow++
		}
	}
	if slow > len(lines)/10 {
		t.Errorf("%d of %d lines of a frame need the grapheme walk", slow, len(lines))
	}
}
