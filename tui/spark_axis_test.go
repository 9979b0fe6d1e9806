package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{0.67, 1}, {2.6, 5}, {1.9, 2}, {0.0021, 0.0025}, {40, 50}, {100, 100}, {0, 1}, {-3, 1},
	} {
		if got := niceStep(c.in); got != c.want {
			t.Errorf("niceStep(%g) = %g, want %g", c.in, got, c.want)
		}
	}
}

// Axis labels are round numbers and zero is "0", whatever the unit.
func TestChartAxisLabelsAreRound(t *testing.T) {
	var pts []model.Point
	for i := range 60 {
		pts = append(pts, model.Point{T: t0.Add(time.Duration(i) * time.Second), V: 0.0123 + float64(i)*0.0007, OK: true})
	}
	round := regexp.MustCompile(`^(0|[1-9]\d*(\.(00|50|25|75|20|40|60|80))?(µs|ms|s)?|[1-9]\.\d\d?s)$`)
	for _, h := range []int{5, 9, 12, 21} {
		for _, l := range chart(pts, 60, h, func(v float64) string { return fmtSec(model.Some(v)) }) {
			lab := strings.TrimSpace(strings.SplitN(l, "┤", 2)[0])
			lab = strings.TrimSpace(strings.SplitN(lab, "┼", 2)[0])
			if lab == "" {
				continue
			}
			if strings.Contains(lab, "µs") && lab != "0" || !round.MatchString(lab) {
				t.Errorf("h=%d: axis label %q is not round", h, lab)
			}
		}
	}
}
