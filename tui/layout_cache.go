package tui

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// A pane's drawn box and its height wish are kept until what they depend
// on changes (see Keyed): a clock tick or a log line then costs the header
// only. What is drawn again is put together from what did not change: a
// box line whose content is the last draw's is the last draw's line, a
// chart whose points are the last draw's is the last draw's chart, and a
// screen row whose columns are the last frame's is the last frame's row.
// Each of these compares what it is drawn from, never a version, so none
// can show an old number; dropCaches forgets them all (the tests draw
// every frame again from scratch and compare).

// boxKey is what a drawn pane depends on besides the clock: the data,
// anything the user did since (gen), its size and focus. What it read of
// the clock is kept beside it (clockUse): the box is drawn again when that
// reads differently, to the second of an age ("20s ago") and the moment of
// a STALE mark, never later.
type boxKey struct {
	version, gen uint64
	w, h         int
	focused      bool
}

// paneBox is pane i drawn in its box, reused while nothing it depends on
// changed: a clock tick then costs the header only.
func (m *Model) paneBox(i, w, h int, focused bool) []string {
	if i < 0 || i >= len(m.panes) {
		return padLines(nil, w, h)
	}
	p := &m.panes[i]
	k := m.drawKey(p, w, h, focused)
	if p.cached != nil && p.key == k && p.clock.holds(m.d.clock()) {
		return p.cached
	}
	m.d.beginDraw()
	title := fmt.Sprintf("%s %s", m.zoomKey(i), p.p.Title())
	if a, ok := p.p.(Alerter); ok {
		if _, word := a.Alert(m.d); word != "" {
			title += " · " + word
		}
	}
	view := p.p.View(m.d, w-2, h-2)
	p.clock = m.d.endDraw()
	p.cached, p.key = p.box.draw(m.d.Styles, title, view, w, h, focused), k
	return p.cached
}

// drawKey is what pane p drawn at w×h depends on now, but the clock.
func (m *Model) drawKey(p *paneEntry, w, h int, focused bool) boxKey {
	v := m.d.Version
	if kp, ok := p.p.(Keyed); ok {
		v = kp.DrawKey(m.d)
	}
	return boxKey{v, m.gen, w, h, focused}
}

// paneHeight is pane i's wish at width w, asked again only when what it
// is drawn from changed (a wish may cost a whole draw).
func (m *Model) paneHeight(i, w int) int {
	p := &m.panes[i]
	k := m.drawKey(p, w, -1, false)
	if p.hkey != k || !p.hok || !p.hclock.holds(m.d.clock()) {
		m.d.beginDraw()
		p.height = p.p.Height(m.d, w)
		p.hkey, p.hok, p.hclock = k, true, m.d.endDraw()
	}
	return p.height
}

// boxMemo is a pane's last box: the lines it was drawn from and the lines
// drawn, with what every line depends on besides its content.
type boxMemo struct {
	styles  *Styles
	w       int
	focused bool
	edge    boxEdge // boxEdges(styles, focused)
	title   string
	inner   []string // the content's lines, as drawn in out[1:]
	out     []string // the box: top edge, a line per content line, bottom edge
}

// draw is box(s, title, content, w, h, focused), each line taken from the
// last draw where it and what it depends on are the same.
func (b *boxMemo) draw(s *Styles, title, content string, w, h int, focused bool) []string {
	if h < 2 || w < 4 {
		*b = boxMemo{}
		return box(s, title, content, w, h, focused)
	}
	same := b.styles == s && b.w == w && b.focused == focused && len(b.out) >= 2
	ed := b.edge
	if b.styles != s || b.focused != focused || ed.paint == nil {
		ed = boxEdges(s, focused)
	}
	if !same {
		b.inner, b.out = b.inner[:0], nil
	}
	out := make([]string, h)
	if same && b.title == title {
		out[0] = b.out[0]
	} else {
		out[0] = ed.top(s, title, w)
	}
	if same && len(b.out) == h {
		out[h-1] = b.out[h-1]
	} else {
		out[h-1] = ed.bottom(w)
	}
	inner := b.inner[:0:0] // a new array: b.inner is compared below
	rest := content
	for i := 0; i < h-2; i++ {
		l := ""
		if rest != "" {
			l, rest, _ = strings.Cut(rest, "\n")
		}
		inner = append(inner, l)
		if same && i < len(b.inner) && i+1 < len(b.out)-1 && b.inner[i] == l {
			out[i+1] = b.out[i+1]
			continue
		}
		out[i+1] = ed.side + fit(l, w-2) + ed.side
	}
	*b = boxMemo{styles: s, w: w, focused: focused, edge: ed, title: title, inner: inner, out: out}
	return out
}

// plotMemo is a chart's last plot and what it was drawn from.
type plotMemo struct {
	vals  []float64
	w, h  int
	count bool
	lines []string
}

// plotAt is plot for the chart named name, the last plot where the points
// resample to the same values at the same size: a chart of a flat queue,
// or of an engine without traffic, is drawn once.
func (d *Data) plotAt(name string, pts []model.Point, w, h int, format func(float64) string, count bool) []string {
	if h < 3 || w < 16 {
		return plot(pts, w, h, format, count) // a sparkline: as cheap as comparing
	}
	vals := resample(pts, w-plotLabelW-2)
	pm := d.plots[name]
	if pm != nil && pm.w == w && pm.h == h && pm.count == count && sameFloats(pm.vals, vals) {
		return pm.lines
	}
	if pm == nil {
		if d.plots == nil {
			d.plots = map[string]*plotMemo{}
		}
		pm = &plotMemo{}
		d.plots[name] = pm
	}
	*pm = plotMemo{vals: vals, w: w, h: h, count: count, lines: plotValues(vals, w, h, format, count)}
	return pm.lines
}

// sameFloats compares bit for bit (NaN, a gap, equals NaN).
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// gridRows puts the columns' lines side by side, reusing the last
// frame's row where every column's line is the last frame's.
func (m *Model) gridRows(cols [][]string, h int) []string {
	out := make([]string, h)
	same := len(m.rowParts) == h && len(m.rows) == h
	for i := range out {
		var parts []string
		if same {
			parts = m.rowParts[i]
		}
		hit := same && len(parts) == len(cols)
		for c := range cols {
			if hit && parts[c] != cols[c][i] {
				hit = false
			}
		}
		if hit {
			out[i] = m.rows[i]
			continue
		}
		n := 0
		for c := range cols {
			n += len(cols[c][i])
		}
		var b strings.Builder
		b.Grow(n)
		for c := range cols {
			b.WriteString(cols[c][i])
		}
		out[i] = b.String()
	}
	if !same {
		m.rowParts = make([][]string, h)
	}
	for i := range out {
		p := m.rowParts[i][:0]
		for c := range cols {
			p = append(p, cols[c][i])
		}
		m.rowParts[i] = p
	}
	m.rows = out
	return out
}

// dropCaches forgets every drawn piece kept between frames, so that the
// next Render draws the screen from scratch (the tests compare the two).
func (m *Model) dropCaches() {
	for i := range m.panes {
		p := &m.panes[i]
		p.cached, p.hok, p.box = nil, false, boxMemo{}
		if c, ok := p.p.(interface{ dropCaches() }); ok {
			c.dropCaches() // a pane's own (the KV gauge's bar)
		}
	}
	m.rows, m.rowParts = nil, nil
	m.keysLine, m.lastFrame = "", ""
	m.d.plots, m.d.clear, m.d.notChecked = nil, clearParts{}, notCheckedLines{}
}
