package tui

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The TTFT split's two shares add up to 100 % as written: 12.5/87.5 read
// "13% … 88%" (the first-minute review); a small share keeps its decimal.
func TestTTFTSplitSharesAddUp(t *testing.T) {
	for _, c := range []struct {
		share float64
		a, b  string
	}{{0.125, "13%", "87%"}, {0.875, "87%", "13%"}, {0.043, "4.3%", "95.7%"}, {0.5, "50%", "50%"}, {0.505, "50%", "50%"},
		{0.0951, "9.5%", "90.5%"}, {0.0999, "10%", "90%"}, {0.9999, "100%", "0%"}, {0, "0%", "100%"}, {1, "100%", "0%"}, {0.04, "4%", "96%"}} {
		a, b := splitShares(c.share)
		pa, _ := strconv.ParseFloat(strings.TrimSuffix(a, "%"), 64)
		pb, _ := strconv.ParseFloat(strings.TrimSuffix(b, "%"), 64)
		if a != c.a || b != c.b || math.Abs(pa+pb-100) > 1e-9 {
			t.Errorf("share %v: %s + %s, want %s + %s", c.share, a, b, c.a, c.b)
		}
	}
}

// The E2E line fits its width: its bar takes what the words leave, and is
// left out below 4 cells (it was clipped to "…" at 120 columns).
func TestE2ESplitFitsItsWidth(t *testing.T) {
	st := model.State{Latency: map[model.Latency]model.Dist{
		model.Queue:   {Exposed: true, Mean: model.Some(1.234)},
		model.Prefill: {Exposed: true, Mean: model.Some(0.120)},
		model.Decode:  {Exposed: true, Mean: model.Some(2.345)},
	}}
	s := NewStyles(true, true)
	for _, w := range []int{30, 45, 58, 60, 80, 200} {
		var e2e string
		for _, l := range splitLines(s, st, w) {
			if strings.HasPrefix(l, "E2E") {
				e2e = l
			}
		}
		if e2e == "" {
			t.Fatalf("w=%d: no E2E line", w)
		}
		n := len([]rune(e2e))
		bar := strings.ContainsAny(e2e, "▓▒░")
		switch {
		case n > w && bar:
			t.Errorf("w=%d: %d runes with a bar: %q", w, n, e2e)
		case w >= 80 && !bar:
			t.Errorf("w=%d: no bar: %q", w, e2e)
		}
	}
}

// The E2E line's bar had three shades and no legend: with the bar drawn,
// each phase is led by its shade.
func TestE2EBarHasALegend(t *testing.T) {
	st := model.State{Latency: map[model.Latency]model.Dist{
		model.Queue:   {Exposed: true, Mean: model.Some(0.0025)},
		model.Prefill: {Exposed: true, Mean: model.Some(0.055)},
		model.Decode:  {Exposed: true, Mean: model.Some(2.25)},
	}}
	for _, w := range []int{58, 78, 200} {
		var e2e string
		for _, l := range splitLines(NewStyles(true, true), st, w) {
			if strings.HasPrefix(l, "E2E") {
				e2e = l
			}
		}
		if !strings.ContainsAny(e2e, "░") {
			t.Fatalf("w=%d: no bar: %q", w, e2e)
		}
		if !strings.Contains(e2e, "▓queue 2.5ms ▒prefill 55ms ░decode 2.25s") {
			t.Errorf("w=%d: the bar's shades are not keyed to its phases: %q", w, e2e)
		}
	}
}
