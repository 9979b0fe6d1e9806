package logs

import (
	"strconv"
	"unicode/utf8"
)

// Cut shortens s for display to at most max bytes on a rune boundary and
// says how much was left out. Matching always uses the whole line.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " … [" + strconv.Itoa(len(s)-n) + " more bytes]"
}
