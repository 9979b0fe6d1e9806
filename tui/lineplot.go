package tui

import (
	"math"
	"strings"
	"unicode/utf8"
)

// linePlot draws what asciigraph.Plot(series, Height(height),
// LowerBound(0), UpperBound(upper), YAxisValueFormatter(label)) draws,
// as its lines: the same characters in the same cells, without its
// per-cell strings, colour bookkeeping and second call of the formatter
// per label (asciigraph was a quarter of a monitor frame's panes).
// TestLinePlotIsAsciigraphs holds the two to the same lines.
func linePlot(series []float64, height int, upper float64, label func(float64) string) []string {
	const offset = 3
	if len(series) == 0 {
		return nil
	}
	minimum, maximum := math.Inf(1), math.Inf(-1)
	for _, v := range series { // (a NaN compares false: a gap)
		if v < minimum {
			minimum = v
		}
		if v > maximum {
			maximum = v
		}
	}
	minimum = min(minimum, 0)
	if upper > maximum {
		maximum = upper
	}
	interval := math.Abs(maximum - minimum)
	if height <= 0 {
		height = plotHeightFor(interval)
	}
	ratio := 1.0
	if interval != 0 {
		ratio = float64(height) / interval
	}
	min2, max2 := plotRound(minimum*ratio), plotRound(maximum*ratio)
	intmin2, intmax2 := int(min2), int(max2)
	rows := intmax2 - intmin2
	if rows < 0 {
		rows = -rows
	}
	width := len(series) + offset

	// the cells, row by row, as codes into plotGlyphs; a label takes one
	// cell however wide it is (cellLabel: the row's label)
	cells := make([]byte, (rows+1)*width)
	at := func(row, col int) *byte { return &cells[row*width+col] }

	labels := make([]string, 0, rows+1)
	maxWidth := 0
	for y := intmin2; y < intmax2+1; y++ {
		var mag float64
		switch {
		case rows > 0 && interval > 0:
			mag = maximum - (float64(y-intmin2) * interval / float64(rows))
		case interval == 0:
			mag = minimum
		default:
			mag = float64(y)
		}
		l := label(mag)
		labels = append(labels, l)
		maxWidth = max(maxWidth, utf8.RuneCountInString(l))
	}
	for r, val := range labels {
		l := strings.Repeat(" ", maxWidth+1-utf8.RuneCountInString(val)) + val
		labels[r] = l
		if l != " " {
			*at(r, max(offset-utf8.RuneCountInString(l), 0)) = cellLabel
		}
		*at(r, offset-1) = cellAxis
	}

	y := func(v float64) int { return int(plotRound(v*ratio) - float64(intmin2)) }
	if !math.IsNaN(series[0]) {
		*at(rows-int(plotRound(series[0]*ratio)-min2), offset-1) = cellFirst
	}
	for x := 0; x < len(series)-1; x++ {
		d0, d1 := series[x], series[x+1]
		col := x + offset
		switch {
		case math.IsNaN(d0) && math.IsNaN(d1):
			continue
		case math.IsNaN(d1):
			*at(rows-y(d0), col) = cellEnd
			continue
		case math.IsNaN(d0):
			*at(rows-y(d1), col) = cellStart
			continue
		}
		y0, y1 := y(d0), y(d1)
		if y0 == y1 {
			*at(rows-y0, col) = cellFlat
			continue
		}
		if y0 > y1 {
			*at(rows-y1, col) = cellUpRight
			*at(rows-y0, col) = cellDownLeft
		} else {
			*at(rows-y1, col) = cellDownRight
			*at(rows-y0, col) = cellUpLeft
		}
		for v := min(y0, y1) + 1; v < max(y0, y1); v++ {
			*at(rows-v, col) = cellVertical
		}
	}

	out := make([]string, rows+1)
	var b strings.Builder
	for r := range out {
		row := cells[r*width : (r+1)*width]
		last := 0 // trailing blanks are cut (an empty row keeps its first cell)
		for i := width - 1; i >= 0; i-- {
			if row[i] != cellBlank {
				last = i
				break
			}
		}
		b.Reset()
		b.Grow(len(labels[r]) + 3*(last+1))
		for _, c := range row[:last+1] {
			if c == cellLabel {
				b.WriteString(labels[r])
			} else {
				b.WriteString(plotGlyphs[c])
			}
		}
		out[r] = b.String()
	}
	return out
}

// A plot's cells: what each draws (asciigraph's DefaultCharSet).
const (
	cellBlank byte = iota
	cellAxis
	cellFirst
	cellEnd
	cellStart
	cellFlat
	cellUpRight
	cellDownLeft
	cellDownRight
	cellUpLeft
	cellVertical
	cellLabel // the row's label
)

var plotGlyphs = [...]string{cellBlank: " ", cellAxis: "┤", cellFirst: "┼", cellEnd: "╴", cellStart: "╶", cellFlat: "─",
	cellUpRight: "╰", cellDownLeft: "╮", cellDownRight: "╭", cellUpLeft: "╯", cellVertical: "│"}

// plotRound rounds half away from zero, as asciigraph does.
func plotRound(v float64) float64 {
	if math.IsNaN(v) {
		return math.NaN()
	}
	sign := 1.0
	if v < 0 {
		sign, v = -1, -v
	}
	if _, frac := math.Modf(v); frac >= 0.5 {
		return math.Ceil(v) * sign
	}
	return math.Floor(v) * sign
}

// plotHeightFor is asciigraph's height for an interval when none is given.
func plotHeightFor(interval float64) int {
	if interval >= 1 {
		return int(interval)
	}
	scaled := interval / math.Pow(10, math.Floor(math.Log10(interval)))
	if scaled < 2 {
		return int(math.Ceil(scaled))
	}
	return int(math.Floor(scaled))
}
