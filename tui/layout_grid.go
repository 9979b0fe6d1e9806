package tui

import "strings"

// The grid: which panes go in which column, how wide each column is, and
// how a column shares its height among its panes.

// Column tables by pane ID; panes registered with other IDs join the
// shortest column.
var (
	threeCols = [][]string{{"latency", "throughput"}, {"scheduler", "gpu"}, {"diagnosis", "events"}}
	twoCols   = [][]string{{"latency", "throughput", "scheduler"}, {"gpu", "diagnosis", "events"}}
)

// fills are the panes whose charts use any height they are given: a
// column's spare rows go to them, not to a list with nothing more to show.
var fills = map[string]bool{"latency": true, "throughput": true, "scheduler": true, logPaneID: true}

// gridOnlyInZoom are panes too detailed for the grid (reached by zoom or
// tab) while one endpoint is watched; with more, the Endpoints pane joins
// the grid to choose among them.
var gridOnlyInZoom = map[string]bool{"endpoints": true}

// The Host pane joins the grid only while the shown endpoint has a host
// reading (an engine on this machine): elsewhere it would say only that.

// columns returns the grid's panes (indexes into m.panes) per column.
func (m *Model) columns() [][]int {
	var table [][]string
	switch m.mode() {
	case modeThree:
		table = threeCols
	case modeTwo:
		table = twoCols
	default:
		return nil
	}
	if m.ordered {
		return m.orderedColumns(len(table))
	}
	cols := make([][]int, len(table))
	placed := map[int]bool{}
	for c, ids := range table {
		for _, id := range ids {
			if i := m.paneIndex(id); i >= 0 {
				cols[c] = append(cols[c], i)
				placed[i] = true
			}
		}
	}
	for i, p := range m.panes {
		if placed[i] || gridOnlyInZoom[p.id] && (p.id != "endpoints" || len(m.d.Endpoints()) < 2) ||
			p.id == "host" && hostOf(m.d) == nil {
			// (the Host pane: see Model.shown)
			continue
		}
		short := 0
		for c := range cols {
			if len(cols[c]) < len(cols[short]) {
				short = c
			}
		}
		cols[short] = append(cols[short], i)
	}
	return cols
}

// orderedColumns fills n columns with the panes in the config's order,
// top to bottom, then left to right, as evenly as they go.
func (m *Model) orderedColumns(n int) [][]int {
	var grid []int
	for i, p := range m.panes {
		if !gridOnlyInZoom[p.id] || p.id == "endpoints" && len(m.d.Endpoints()) > 1 {
			grid = append(grid, i)
		}
	}
	cols := make([][]int, n)
	per := (len(grid) + n - 1) / max(1, n)
	for k, i := range grid {
		c := min(n-1, k/max(1, per))
		cols[c] = append(cols[c], i)
	}
	return cols
}

// grid lays the columns side by side; each column shares its height among
// its panes by their wishes, the last pane taking what is left.
func (m *Model) grid(w, h, top int) []string {
	cols := m.columns()
	n := len(cols)
	parts := make([][]string, n)
	x := 0
	ws := m.columnWidths(cols, w)
	for c, col := range cols {
		cw := ws[c]
		if c == n-1 {
			cw = w - x
		}
		parts[c] = m.column(col, x, top, cw, h)
		x += cw
	}
	return m.gridRows(parts, h)
}

// columnWidths shares w among the columns: evenly, but the column holding
// open findings gets two fifths of three columns (half of two), so their
// actions read whole.
func (m *Model) columnWidths(cols [][]int, w int) []int {
	n := len(cols)
	ws := make([]int, n)
	wide := -1
	if _, ok := topFinding(m.d); ok && n > 1 {
		for c, col := range cols {
			for _, pi := range col {
				if m.panes[pi].id == "diagnosis" {
					wide = c
				}
			}
		}
	}
	share := w / n
	if wide >= 0 && n == 3 {
		share = w * 3 / 10
	}
	for c := range ws {
		ws[c] = share
	}
	if wide >= 0 {
		ws[wide] = w - share*(n-1)
	}
	return ws
}

func (m *Model) column(col []int, x, y, w, h int) []string {
	if len(col) == 0 {
		return padLines(nil, w, h)
	}
	hs := make([]int, len(col))
	total := 0
	for i, pi := range col {
		hs[i] = max(3, m.paneHeight(pi, w-2)+2)
		total += hs[i]
	}
	for total > h { // shrink the tallest until it fits
		t := 0
		for i := range hs {
			if hs[i] > hs[t] {
				t = i
			}
		}
		if hs[t] <= 3 {
			break
		}
		hs[t]--
		total--
	}
	if extra := h - total; extra > 0 {
		// What is left goes to the panes that fill any height (charts),
		// evenly; a column without one gives it to its last pane.
		var grow []int
		for i, pi := range col {
			if fills[m.panes[pi].id] {
				grow = append(grow, i)
			}
		}
		if len(grow) == 0 {
			grow = []int{len(hs) - 1}
		}
		for _, i := range grow {
			hs[i] += extra / len(grow)
		}
		hs[grow[len(grow)-1]] += extra % len(grow)
	}
	var lines []string
	for i, pi := range col {
		if hs[i] <= 0 {
			continue
		}
		m.hit(pi, x, y+len(lines), w, min(hs[i], h-len(lines)))
		lines = append(lines, m.paneBox(pi, w, hs[i], pi == m.focus && m.zoom == "")...)
	}
	// the boxes are exactly w wide already: only the count needs fixing
	blank := strings.Repeat(" ", max(0, w))
	for len(lines) < h {
		lines = append(lines, blank)
	}
	return lines[:h]
}
