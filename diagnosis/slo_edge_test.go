package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func TestSLOEdge(t *testing.T) {
	est := dist(0.037, 0.0475, 0.0497, 0.03)
	exact := est
	exact.Estimate = false
	cases := []struct {
		name string
		v    model.Opt
		d    model.Dist
		want string
	}{
		{"QA #6: 49.7 ms in the 25–50 ms bucket", model.Some(0.0497), est, "≤50 ms (bucket edge)"},
		{"exactly on the edge", model.Some(0.05), est, "≤50 ms (bucket edge)"},
		{"clearly under", model.Some(0.045), est, ""},
		{"over the SLO is a finding, not an edge", model.Some(0.0501), est, ""},
		{"exact quantile", model.Some(0.0497), exact, ""},
		{"absent", model.None, est, ""},
	}
	for _, c := range cases {
		got, ok := SLOEdge(c.v, c.d, 50*time.Millisecond)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
}
