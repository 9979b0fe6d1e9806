package tui

import "fmt"

// A pane's drawn box and its height wish are kept until what they depend
// on changes (see Keyed): a clock tick or a log line then costs the header
// only.

// boxKey is what a drawn pane depends on: the data, anything the user did
// since (gen), its size and focus, and the clock in 5-second steps (the few
// clock-dependent words in panes, like a STALE badge, may lag that much;
// the header is always drawn fresh).
type boxKey struct {
	version, gen uint64
	w, h         int
	focused      bool
	clock        int64
}

// paneBox is pane i drawn in its box, reused while nothing it depends on
// changed: a clock tick then costs the header only.
func (m *Model) paneBox(i, w, h int, focused bool) []string {
	if i < 0 || i >= len(m.panes) {
		return padLines(nil, w, h)
	}
	p := &m.panes[i]
	k := m.drawKey(p, w, h, focused)
	if p.cached != nil && p.key == k {
		return p.cached
	}
	title := fmt.Sprintf("%s %s", m.zoomKey(i), p.p.Title())
	if a, ok := p.p.(Alerter); ok {
		if _, word := a.Alert(m.d); word != "" {
			title += " · " + word
		}
	}
	p.cached, p.key = box(m.d.Styles, title, p.p.View(m.d, w-2, h-2), w, h, focused), k
	return p.cached
}

// drawKey is what pane p drawn at w×h depends on now.
func (m *Model) drawKey(p *paneEntry, w, h int, focused bool) boxKey {
	clock := m.d.Clock().Unix() / 5
	if m.d.Fresh().Stale {
		clock = m.d.Clock().Unix() // "as of 05:38:33 (20s ago)" counts seconds
	}
	v := m.d.Version
	if kp, ok := p.p.(Keyed); ok {
		v = kp.DrawKey(m.d)
	}
	return boxKey{v, m.gen, w, h, focused, clock}
}

// paneHeight is pane i's wish at width w, asked again only when what it
// is drawn from changed (a wish may cost a whole draw).
func (m *Model) paneHeight(i, w int) int {
	p := &m.panes[i]
	k := m.drawKey(p, w, -1, false)
	if p.hkey != k || !p.hok {
		p.height, p.hkey, p.hok = p.p.Height(m.d, w), k, true
	}
	return p.height
}
