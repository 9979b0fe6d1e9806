package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// wordWrap breaks plain text into lines of at most w cells at spaces only
// (a flag like --gpu-memory-utilization stays whole, where x/ansi would
// break it at its hyphens); a word wider than a line is cut into pieces.
func wordWrap(text string, w int) []string {
	w = max(1, w)
	var out []string
	var cur strings.Builder
	cw := 0
	flush := func() {
		out = append(out, cur.String())
		cur.Reset()
		cw = 0
	}
	for _, word := range strings.Fields(text) {
		ww := ansi.StringWidth(word)
		if cw > 0 && cw+1+ww > w {
			flush()
		}
		for ww > w { // a word wider than a line: cut it
			if cw > 0 {
				flush()
			}
			head := ansi.Truncate(word, w, "")
			out = append(out, head)
			word = strings.TrimPrefix(word, head)
			ww = ansi.StringWidth(word)
		}
		if ww == 0 {
			continue
		}
		if cw > 0 {
			cur.WriteByte(' ')
			cw++
		}
		cur.WriteString(word)
		cw += ww
	}
	if cw > 0 || len(out) == 0 {
		flush()
	}
	return out
}
