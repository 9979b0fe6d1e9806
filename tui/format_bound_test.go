package tui

import (
	"math"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Numbers an engine should never send are bounded for display: a KV ratio
// of 2.5 read "KV 250%", a running count of 1e308 printed 309 digits.
func TestFormatsAreBounded(t *testing.T) {
	for in, want := range map[float64]string{2.5: ">100%", 1.0: "100%", 0.973: "97%", -0.2: missing} {
		if got := fmtPct(model.Some(in)); got != want {
			t.Errorf("fmtPct(%v) = %q, want %q", in, got, want)
		}
	}
	for _, x := range []float64{1e308, -1e308, 1e12, math.MaxFloat64} {
		if got := fmtNum(model.Some(x)); len(got) > 8 {
			t.Errorf("fmtNum(%v) = %q: unbounded", x, got)
		}
	}
	for _, x := range []float64{math.NaN(), math.Inf(1)} {
		if got := fmtNum(model.Some(x)); got != missing {
			t.Errorf("fmtNum(%v) = %q", x, got)
		}
	}
}
