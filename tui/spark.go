package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmtop/llmtop/model"
)

var blocks = []rune("▁▂▃▄▅▆▇█")

// resample fits points into n columns, averaging the points that share a
// column; a column with no data is NaN (a gap, never a zero).
func resample(pts []model.Point, n int) []float64 {
	if n <= 0 {
		return nil
	}
	out := make([]float64, 0, n)
	if len(pts) <= n {
		for _, p := range pts {
			out = append(out, pointValue(p))
		}
		return out
	}
	for c := 0; c < n; c++ {
		lo, hi := c*len(pts)/n, (c+1)*len(pts)/n
		sum, k := 0.0, 0
		for _, p := range pts[lo:hi] {
			if p.OK {
				sum += p.V
				k++
			}
		}
		if k == 0 {
			out = append(out, math.NaN())
		} else {
			out = append(out, sum/float64(k))
		}
	}
	return out
}

func pointValue(p model.Point) float64 {
	if !p.OK {
		return math.NaN()
	}
	return p.V
}

// restartCols marks the columns (as resample lays them out) that hold a
// restart: a new run of the engine starts there.
func restartCols(pts []model.Point, n int) []bool {
	if n <= 0 {
		return nil
	}
	cols := min(len(pts), n)
	out := make([]bool, cols)
	for i, p := range pts {
		if !p.Restart {
			continue
		}
		c := i
		if len(pts) > n {
			c = i * n / len(pts)
		}
		out[min(c, cols-1)] = true
	}
	return out
}

// restartMark is drawn in a sparkline's column where a new run starts.
const restartMark = '┊'

// sparkline draws one line of w cells, newest on the right, scaled from 0
// to the largest value (or to ceil when that is larger, so a flat healthy
// line does not look alarming). Gaps are blanks; a restart is a ┊.
func sparkline(pts []model.Point, w int, ceil float64) string {
	vals := resample(pts, w)
	marks := restartCols(pts, w)
	hi := ceil
	for _, v := range vals {
		if !math.IsNaN(v) && v > hi {
			hi = v
		}
	}
	var b strings.Builder
	b.Grow(w * 3)
	for i := len(vals); i < w; i++ {
		b.WriteByte(' ')
	}
	for i, v := range vals {
		switch {
		case i < len(marks) && marks[i]:
			b.WriteRune(restartMark)
		case math.IsNaN(v):
			b.WriteByte(' ')
		case hi <= 0:
			b.WriteRune(blocks[0])
		default:
			i := int(v / hi * float64(len(blocks)-1))
			b.WriteRune(blocks[max(0, min(len(blocks)-1, i))])
		}
	}
	return b.String()
}

// chart draws an asciigraph plot of h lines and w cells with a y axis
// labelled by format; with h < 3 it is a sparkline. name says which chart
// it is: the plot is kept while its points are the same (Data.plotAt).
func chart(d *Data, name string, pts []model.Point, w, h int, format func(float64) string) []string {
	return d.plotAt(name, pts, w, h, format, false)
}

// countChart is chart for a count (requests waiting): whole-number steps
// (a queue of 3 drew 0.2, 0.4 … 3), and no more rows than the steps up to
// the largest value need.
func countChart(d *Data, name string, pts []model.Point, w, h int) []string {
	return d.plotAt(name, pts, w, h, fmtCount, true)
}

func fmtCount(v float64) string { return fmtNum(model.Some(v)) }

// plotLabelW is the width of a chart's y-axis labels.
const plotLabelW = 7

func plot(pts []model.Point, w, h int, format func(float64) string, count bool) []string {
	if h < 3 || w < 16 {
		return []string{sparkline(pts, w, 0)}
	}
	return plotValues(resample(pts, w-plotLabelW-2), w, h, format, count)
}

// plotValues is plot of the points resampled to the chart's columns.
func plotValues(vals []float64, w, h int, format func(float64) string, count bool) []string {
	const labelW = plotLabelW
	ok := false
	for _, v := range vals {
		if !math.IsNaN(v) {
			ok = true
			break
		}
	}
	if !ok {
		return []string{missing + " (no data in the window yet)"}
	}
	if n := w - labelW - 2; len(vals) < n { // keep the newest point on the right
		vals = append(slices.Repeat([]float64{math.NaN()}, n-len(vals)), vals...)
	}
	hi := 0.0
	for _, v := range vals {
		if !math.IsNaN(v) {
			hi = max(hi, v)
		}
	}
	// The axis runs from 0 to a nice multiple of a nice step per row, so
	// every label is a round number (40, 38, 36 … not 39, 36.4, 33.8).
	rows := h - 1 // Height(h-1) draws h lines: h-1 steps between labels
	step := niceStep(hi / float64(max(1, rows)))
	if count && step < 1 {
		// fewer requests than rows: one per row, and no more rows than that
		step, rows = 1, min(rows, max(2, int(math.Ceil(hi))))
		h = rows + 1
	} else if count {
		step = math.Ceil(step) // 1.5 → 2, 2.5 → 3
	}
	lines := linePlot(vals, h-1, step*float64(rows), func(v float64) string {
		if math.Abs(v) < step/2 {
			return fmt.Sprintf("%*s", labelW-1, "0") // not "0µs"
		}
		return fmt.Sprintf("%*s", labelW-1, format(max(0, math.Round(v/step)*step)))
	})
	for i := range lines {
		lines[i] = fit(lines[i], w)
	}
	return lines
}

// niceStep is the smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6 and 8 times a
// power of ten that is at least x (x > 0; 1 otherwise): steps fine enough
// that the line fills two thirds of the chart or more.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	e := math.Floor(math.Log10(x))
	scale := func(m float64) float64 { // m×10^e, exact where it can be (0.15, not 0.15000000000000002)
		if e < 0 {
			return m / math.Pow(10, -e)
		}
		return m * math.Pow(10, e)
	}
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8} {
		if v := scale(m); v >= x*(1-1e-9) {
			return v
		}
	}
	return scale(10)
}
