package tui

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// At 120 columns the demo's fleet named every row "http://127.0.…:PORT":
// the scheme took the cells the address needed.
func TestFleetNameDropsTheSchemeBeforeCuttingTheAddress(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"http://127.0.0.1:35639", 20, "127.0.0.1:35639"},
		{"http://127.0.0.1:35639", 30, "http://127.0.0.1:35639"},
		{"http://gpu-node-17.cluster.local:8000", 20, "gpu-node-17.cl…:8000"},
		{"https://127.0.0.1:35639", 20, "https://127.0…:35639"},
	} {
		if got := clipKeepTail(c.in, c.n); got != c.want {
			t.Errorf("clipKeepTail(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// A pool's KV of 0.01 % and 0.03 % read "KV 0%–0%".
func TestSpanOfValuesThatReadAlikeIsOneValue(t *testing.T) {
	vals := []model.Opt{model.Some(0.0001), model.Some(0.0003)}
	if got := span(vals, fmtPct); got != fmtPct(model.Some(0.0001)) {
		t.Errorf("span = %q", got)
	}
	vals = append(vals, model.Some(0.36))
	if got := span(vals, fmtPct); got != fmtPct(model.Some(0.0001))+"–"+fmtPct(model.Some(0.36)) {
		t.Errorf("span = %q", got)
	}
}
