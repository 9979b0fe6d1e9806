package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Layout thresholds: three columns from 200 cells, two from 110, otherwise
// one pane at a time under a tab bar; below minW×minH a plain message.
const (
	threeColW = 200
	twoColW   = 110
	gridMinH  = 30
	minW      = 60
	minH      = 15
)

// mode is the current layout.
type mode int

const (
	modeTooSmall mode = iota
	modeTabs
	modeTwo
	modeThree
)

func (m *Model) mode() mode {
	switch {
	case m.width < minW || m.height < minH:
		return modeTooSmall
	case m.width >= threeColW && m.height >= gridMinH:
		return modeThree
	case m.width >= twoColW && m.height >= gridMinH:
		return modeTwo
	default:
		return modeTabs
	}
}

func (m *Model) paneIndex(id string) int {
	for i, p := range m.panes {
		if p.id == id {
			return i
		}
	}
	return -1
}

// focusable lists the panes tab cycles through in the current layout.
func (m *Model) focusable() []int {
	if cols := m.columns(); cols != nil && m.zoom == "" {
		var out []int
		for _, c := range cols {
			out = append(out, c...)
		}
		return out
	}
	out := make([]int, 0, len(m.panes))
	for i := range m.panes {
		if m.shown(i) {
			out = append(out, i)
		}
	}
	return out
}

// shown reports whether pane i has a tab (and a place in the grid): the
// Host pane only while the shown endpoint has a host reading, or when it
// was zoomed (its key still opens it, to say why it is empty).
func (m *Model) shown(i int) bool {
	return m.panes[i].id != "host" || hostOf(m.d) != nil || m.zoom == "host" || m.focus == i
}

func (m *Model) moveFocus(dir int) {
	f := m.focusable()
	if len(f) == 0 {
		return
	}
	pos := 0
	for i, x := range f {
		if x == m.focus {
			pos = i
		}
	}
	pos = ((pos+dir)%len(f) + len(f)) % len(f)
	m.focus = f[pos]
	if m.zoom != "" {
		m.zoom = m.panes[m.focus].id
	}
}

// View renders the whole screen.
//
// While data is being gathered into one frame (see frameDelay) it returns
// the previous frame.
func (m *Model) View() tea.View {
	if !m.hold || m.lastFrame == "" {
		// Bubble Tea asks for a View after every message; most (the frame
		// timer after the clock already drew the data, a log poll that
		// found nothing new) change nothing the screen is drawn from.
		if k := m.frameKey(); k != m.lastKey || m.lastFrame == "" {
			m.lastFrame, m.lastKey = m.Render(), k
		}
	}
	if m.opts.Screen != nil { // llmtop draws it, not Bubble Tea (see Screen)
		m.opts.Screen.Show(m.lastFrame)
		return tea.NewView("")
	}
	v := tea.NewView(m.lastFrame)
	v.AltScreen = true
	if !m.opts.NoMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "llmtop"
	return v
}

// screenKey is everything a frame is drawn from: the data's version, what
// the user did (gen), the clock, the size and the flashed status.
type screenKey struct {
	version, gen  uint64
	now           time.Time
	width, height int
	status        string
}

func (m *Model) frameKey() screenKey {
	return screenKey{m.d.Version, m.gen, m.d.Now, m.width, m.height, m.status}
}

// Render is the screen as a string (the View's content; goldens use it).
func (m *Model) Render() string {
	if m.quitting {
		return ""
	}
	w, h := m.width, m.height
	m.d.Zoom = m.zoom
	m.d.frame, m.d.rendering = m.d.frame+1, true
	defer func() { m.d.rendering = false }()
	if m.mode() == modeTooSmall {
		return tooSmall(w, h)
	}
	var b strings.Builder
	b.Grow(max(w*h*2, len(m.lastFrame)+w)) // a coloured frame is longer: the last one's size
	head := renderHeader(m.d, w)
	head = append(head, topLine(m.d, w)...)
	footer := m.footer(w)
	body := h - len(head) - 1
	for _, l := range head {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	top := len(head)
	m.hits = m.hits[:0]
	var lines []string
	switch {
	case m.overlay >= 0:
		o := m.overlays[m.overlay]
		lines = box(m.d.Styles, o.o.Title(), o.o.View(m.d, w-2, body-2), w, body, true)
	case m.zoom != "":
		i := m.paneIndex(m.zoom)
		m.hit(i, 0, top, w, body)
		lines = m.paneBox(i, w, body, true)
	case m.mode() == modeTabs:
		lines = append(lines, m.tabs(w, top))
		m.hit(m.focus, 0, top+1, w, body-1)
		lines = append(lines, m.paneBox(m.focus, w, body-1, false)...)
	default:
		lines = m.grid(w, body, top)
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(footer)
	return b.String()
}

func tooSmall(w, h int) string {
	msg := fmt.Sprintf("terminal too small: %d×%d — llmtop needs at least %d×%d (q quits)", w, h, minW, minH)
	if w <= 0 || h <= 0 {
		return ""
	}
	return strings.Join(padLines(strings.Split(ansi.Wrap(msg, w, " "), "\n"), w, h), "\n")
}

// tabs is the compact layout's tab bar; the shown pane is bracketed (and
// highlighted), so it reads without colour too.
func (m *Model) tabs(w, y int) string {
	s := m.d.Styles
	// A pane holding a warning carries "!" (in its level's colour), so
	// the mark reads without colour too.
	// Read once per frame: the trimming below sizes labels many times.
	levels, bangs := make([]Level, len(m.panes)), make([]string, len(m.panes))
	for i := range m.panes {
		if a, ok := m.panes[i].p.(Alerter); ok && m.shown(i) {
			if lvl, word := a.Alert(m.d); word != "" {
				levels[i], bangs[i] = lvl, "!"
			}
		}
	}
	// room[i] is how many cells pane i's title may take: all of it when
	// the bar fits, else the longest titles lose a cell at a time (never
	// the shown pane's, never below 4) until it does, so at 80 columns
	// one title reads "Through…" instead of every one reading "Thr…".
	room := make([]int, len(m.panes))
	label := func(i int) string {
		t := clip(m.panes[i].p.Title(), room[i])
		if i == m.focus {
			return fmt.Sprintf("[%s %s%s]", m.zoomKey(i), t, bangs[i])
		}
		return fmt.Sprintf(" %s %s%s", m.zoomKey(i), t, bangs[i])
	}
	width := 0
	for i := range m.panes {
		if m.shown(i) {
			room[i] = ansi.StringWidth(m.panes[i].p.Title())
			width += ansi.StringWidth(label(i))
		}
	}
	for width > w {
		longest := -1
		for i := range m.panes {
			if m.shown(i) && i != m.focus && room[i] > 4 && (longest < 0 || room[i] > room[longest]) {
				longest = i
			}
		}
		if longest < 0 {
			break // every title as short as it goes: fit clips the bar
		}
		before := ansi.StringWidth(label(longest))
		room[longest]--
		width -= before - ansi.StringWidth(label(longest))
	}
	var b strings.Builder
	x := 0
	for i := range m.panes {
		if !m.shown(i) {
			continue
		}
		l := label(i)
		m.hit(i, x, y, ansi.StringWidth(l), 1)
		x += ansi.StringWidth(l)
		lvl, bang := levels[i], bangs[i]
		switch {
		case bang != "":
			st := s.Level(lvl).Bold(true)
			if i == m.focus {
				st = st.Reverse(true)
			}
			b.WriteString(st.Render(l))
		case i == m.focus:
			b.WriteString(s.Highlight.Bold(true).Render(l))
		default:
			b.WriteString(s.Faint.Render(l))
		}
	}
	return fit(b.String(), w)
}

func (m *Model) footer(w int) string {
	s := m.d.Styles
	if m.status != "" && m.d.Now.Before(m.statusUntil) {
		return fit(s.Accent.Render(m.status), w)
	}
	if m.overlay >= 0 {
		k := m.d.Keys
		own := k.currentAll(m.overlays[m.overlay].o.Keys())
		var keys []key.Binding
		if m.opts.Replay != nil {
			// they drive the replay from every screen: named before the
			// screen's own, which `?` lists whole where the line is cut
			keys = slices.Concat([]key.Binding{k.Back}, k.ReplayKeys(), own, []key.Binding{k.Quit})
		} else {
			keys = append(own, k.Back, k.Quit)
		}
		return fit(m.help.ShortHelpView(keys), w)
	}
	if m.opts.Replay != nil {
		k := m.d.Keys
		return fit(m.help.ShortHelpView(append([]key.Binding{k.Help, k.Quit}, k.ReplayKeys()...)), w)
	}
	// The keys, their help and its styles change only with what the user
	// did (a theme from the terminal, a config) and the width: the line is
	// kept between data frames (it was 2 % of the monitor's CPU).
	if m.keysLine == "" || m.keysWidth != w || m.keysGen != m.gen {
		m.keysLine, m.keysWidth, m.keysGen = fit(m.help.ShortHelpView(m.d.Keys.ShortHelp()), w), w, m.gen
	}
	return m.keysLine
}

// box draws a rounded (focused: thick) border with the title in the top
// edge around content, exactly w×h.
func box(s *Styles, title, content string, w, h int, focused bool) []string {
	if h < 2 || w < 4 {
		return padLines(nil, w, h)
	}
	ed := boxEdges(s, focused)
	out := make([]string, 0, h)
	out = append(out, ed.top(s, title, w))
	inner := strings.Split(content, "\n")
	for i := 0; i < h-2; i++ {
		l := ""
		if i < len(inner) {
			l = inner[i]
		}
		out = append(out, ed.side+fit(l, w-2)+ed.side)
	}
	return append(out, ed.bottom(w))
}

// boxEdge is a box's border: its corners, edges and painted side.
type boxEdge struct {
	tl, tr, bl, br, hz, side string
	paint                    func(string) string
}

func boxEdges(s *Styles, focused bool) boxEdge {
	e := boxEdge{tl: "╭", tr: "╮", bl: "╰", br: "╯", hz: "─"}
	vt, bs := "│", s.Border
	if focused {
		e = boxEdge{tl: "┏", tr: "┓", bl: "┗", br: "┛", hz: "━"}
		vt, bs = "┃", s.FocusBorder
	}
	e.paint = func(str string) string { return bs.Render(str) }
	if s.NoColor {
		e.paint = func(str string) string { return str }
	}
	e.side = e.paint(vt)
	return e
}

// top is the top edge with the title in it, w cells.
func (e boxEdge) top(s *Styles, title string, w int) string {
	title = clip(title, w-6)
	return e.paint(e.tl+e.hz) + " " + s.Title.Render(title) + " " + e.paint(strings.Repeat(e.hz, max(0, w-5-ansi.StringWidth(title)))+e.tr)
}

// bottom is the bottom edge, w cells.
func (e boxEdge) bottom(w int) string {
	return e.paint(e.bl + strings.Repeat(e.hz, w-2) + e.br)
}

// fit pads or truncates a styled line to exactly w cells.
func fit(l string, w int) string {
	n := width(l)
	switch {
	case n == w:
		return l
	case n < w:
		return l + strings.Repeat(" ", w-n)
	default:
		return ansi.Truncate(l, w, "…")
	}
}

// width is a line's width in cells, as ansi.StringWidth counts it. The
// lines llmtop draws are ASCII, SGR colour sequences and a few symbols
// (box edges, blocks, arrows, dots): those are counted here without the
// grapheme walk, which was a fifth of a frame; anything else (a wide or
// combining character, another escape sequence) takes the walk.
func width(s string) int {
	if n := fastWidth(s); n >= 0 {
		return n
	}
	return ansi.StringWidth(s)
}

// fastWidth is width without the walk, or -1 where it is needed.
func fastWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
			i++
		case c == 0x1b:
			// CSI: ESC [ parameters (0x30–0x3f) intermediates (0x20–0x2f) final (0x40–0x7e)
			j := i + 1
			if j >= len(s) || s[j] != '[' {
				return -1
			}
			j++
			for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
				j++
			}
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
				j++
			}
			if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return -1
			}
			i = j + 1
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrowSymbol(r) {
				return -1
			}
			n++
			i += size
		default:
			return -1
		}
	}
	return n
}

// narrowSymbol: the symbols llmtop draws, one cell each under every width
// model, none of them combining (TestWidthMatchesStringWidth checks each).
func narrowSymbol(r rune) bool {
	switch {
	case r >= 0x2500 && r <= 0x259f: // box drawing, block elements (sparklines, bars)
		return true
	case r >= 0x2190 && r <= 0x21ff: // arrows
		return true
	}
	switch r {
	case '·', '…', '–', '—', '•', '−', '≤', '≥', '≈', '×', 'µ', '°', '‘', '’', '“', '”', '▲', '▼', '►', '◄', '●', '○', '✓', '✗':
		return true
	}
	return false
}

// padLines makes exactly h lines of w cells.
func padLines(lines []string, w, h int) []string {
	out := make([]string, h)
	blank := strings.Repeat(" ", max(0, w))
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], w)
		} else {
			out[i] = blank
		}
	}
	return out
}
