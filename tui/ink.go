package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Ink is a theme style that colours a line of text without lipgloss's
// per-call work. Every pane paints dozens of short strings a frame with
// the theme's styles (colour, bold, reverse: no width, padding or
// borders), and lipgloss's Render was a fifth of a frame. An Ink renders
// its style once, around a marker, and then paints a single line as
// prefix + text + suffix; anything else (several lines, tabs, empty text)
// goes to lipgloss. TestInkMatchesLipgloss holds the two to the same
// bytes.
type Ink struct {
	lipgloss.Style
	pre, post string
	fast      bool
}

// plainInk paints nothing.
var plainInk = inked(lipgloss.NewStyle())

// inked prepares st for painting.
func inked(st lipgloss.Style) Ink {
	const marker = "\x00"
	r := st.Render(marker)
	i := strings.Index(r, marker)
	if i < 0 || strings.Count(r, marker) != 1 {
		return Ink{Style: st}
	}
	return Ink{Style: st, pre: r[:i], post: r[i+len(marker):], fast: true}
}

// Render paints strs (joined by spaces, as lipgloss does).
func (k Ink) Render(strs ...string) string {
	if !k.fast || len(strs) != 1 {
		return k.Style.Render(strs...)
	}
	s := strs[0]
	if s == "" || strings.ContainsAny(s, "\n\t\r") {
		return k.Style.Render(s)
	}
	return k.pre + s + k.post
}
