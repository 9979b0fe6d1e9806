package diagnosis

import (
	"math"
	"testing"
)

// Evidence text stays bounded whatever an engine sends.
func TestEvidenceNumbersAreBounded(t *testing.T) {
	if got := pct(2.5); got != ">100 %" {
		t.Errorf("pct(2.5) = %q", got)
	}
	for _, x := range []float64{1e308, -1e308, math.MaxFloat64, math.NaN(), math.Inf(-1)} {
		if got := num(x); len(got) > 8 {
			t.Errorf("num(%v) = %q: unbounded", x, got)
		}
	}
}
