package tui

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0.67, 0.8}, {2.6, 3}, {1.9, 2}, {0.0021, 0.0025}, {41, 50}, {100, 100}, {0.13, 0.15}, {0, 1}, {-3, 1},
	} {
		if got := niceStep(c.in); got != c.want {
			t.Errorf("niceStep(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}

// Axis labels are multiples of a nice step from 0 up to just over the
// largest value, and zero is "0", whatever the unit.
func TestChartAxisLabelsAreRound(t *testing.T) {
	for _, top := range []float64{0.0123, 1.95, 39, 76.3, 1500} {
		var pts []model.Point
		for i := range 60 {
			pts = append(pts, model.Point{T: t0.Add(time.Duration(i) * time.Second), V: top * float64(i+1) / 60, OK: true})
		}
		for _, h := range []int{5, 9, 12, 21} {
			var labs []float64
			for _, l := range chart(&Data{}, "t", pts, 60, h, func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }) {
				lab := strings.TrimSpace(strings.FieldsFunc(l, func(r rune) bool { return r == '┤' || r == '┼' })[0])
				v, err := strconv.ParseFloat(lab, 64)
				if err != nil {
					t.Fatalf("top %g h=%d: label %q", top, h, lab)
				}
				labs = append(labs, v)
			}
			step := labs[0] - labs[1]
			if labs[len(labs)-1] != 0 || math.Abs(niceStep(step)-step) > step*1e-6 || labs[0] < top || labs[0] > top*1.5+step {
				t.Errorf("top %g h=%d: labels %v", top, h, labs)
			}
			for i := 1; i < len(labs); i++ {
				if d := labs[i-1] - labs[i]; math.Abs(d-step) > step*1e-6 {
					t.Errorf("top %g h=%d: uneven labels %v", top, h, labs)
					break
				}
			}
		}
	}
	zero := chart(&Data{}, "t", []model.Point{{T: t0, V: 0.002, OK: true}, {T: t0.Add(time.Second), V: 0.003, OK: true}}, 40, 5,
		func(v float64) string { return fmtSec(model.Some(v)) })
	if last := zero[len(zero)-1]; !strings.HasPrefix(strings.TrimSpace(last), "0 ") {
		t.Errorf("the zero label is not 0: %q", last)
	}
}

// A count's axis steps by whole numbers: a queue of at most 3 drew labels
// 0.2, 0.4 … (the first-minute review); the chart is no taller than its
// steps up to the top need.
func TestCountChartStepsByWholeNumbers(t *testing.T) {
	for _, top := range []float64{1, 3, 7, 14, 95} {
		var pts []model.Point
		for i := range 30 {
			pts = append(pts, model.Point{T: t0.Add(time.Duration(i) * time.Second), V: math.Round(top * float64(i+1) / 30), OK: true})
		}
		lines := countChart(&Data{}, "t", pts, 60, 16)
		if len(lines) > 16 {
			t.Errorf("top %g: %d lines for 16", top, len(lines))
		}
		for _, l := range lines {
			lab := strings.TrimSpace(strings.FieldsFunc(l, func(r rune) bool { return r == '┤' || r == '┼' })[0])
			v, err := strconv.ParseFloat(lab, 64)
			if err != nil || v != math.Trunc(v) {
				t.Errorf("top %g: label %q is not a whole number", top, lab)
			}
		}
		if top <= 7 && len(lines) > int(top)+2 {
			t.Errorf("top %g: %d lines, more than its steps need", top, len(lines))
		}
	}
}
