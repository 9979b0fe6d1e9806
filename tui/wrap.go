package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// wordWrap breaks plain text into lines of at most w cells at spaces only
// (a flag like --gpu-memory-utilization stays whole, where x/ansi would
// break it at its hyphens); a word wider than a line is cut into pieces.
// The spacing inside a line is the text's own (an engine log's aligned
// columns stay aligned); the spaces where a line breaks and at the end go,
// those at the start of the text stay when its first word fits after them. Other white
// space (a line break, a tab) counts as one space. Text from outside must
// be cleaned first (model.SanitizeLine, model.Clean): this measures cells,
// it does not strip escape sequences.
func wordWrap(text string, w int) []string {
	w = max(1, w)
	var out []string
	var cur strings.Builder
	cw := 0 // cells in cur
	flush := func() {
		out = append(out, cur.String())
		cur.Reset()
		cw = 0
	}
	gap := 0 // spaces before the next word
	for rest := text; rest != ""; {
		i := strings.IndexFunc(rest, unicode.IsSpace)
		if i == 0 {
			_, n := utf8.DecodeRuneInString(rest)
			gap++
			rest = rest[n:]
			continue
		}
		word := rest
		if i > 0 {
			word, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		ww := ansi.StringWidth(word)
		if cw == 0 && len(out) > 0 {
			gap = 0 // a continuation line starts with its word
		}
		if cw+gap+ww > w {
			if cw > 0 {
				flush()
			}
			gap = 0 // a break eats the spaces; so does indentation that does not fit
		}
		for ww > w { // a word wider than a line: cut it
			head := ansi.Truncate(word, w, "")
			if head == "" { // one character wider than the line (w 1, a CJK one)
				g, _ := ansi.FirstGraphemeCluster(word, ansi.GraphemeWidth)
				head = "…"
				word = word[len(g):]
			} else {
				word = word[len(head):]
			}
			out = append(out, head)
			ww = ansi.StringWidth(word)
		}
		if ww == 0 {
			continue
		}
		cur.WriteString(strings.Repeat(" ", gap))
		cur.WriteString(word)
		cw += gap + ww
		gap = 0
	}
	if cw > 0 || len(out) == 0 {
		flush()
	}
	return out
}
