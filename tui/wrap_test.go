package tui

import (
	"slices"
	"testing"
)

func TestWordWrap(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want []string
	}{
		{"lower the fraction (vLLM --gpu-memory-utilization)", 30, []string{"lower the fraction (vLLM", "--gpu-memory-utilization)"}},
		{"abcdefghij xy", 4, []string{"abcd", "efgh", "ij", "xy"}},
		{"", 10, []string{""}},
		{"  two   spaces ", 20, []string{"two spaces"}},
		{"日本語 テキスト", 6, []string{"日本語", "テキス", "ト"}},
	} {
		if got := wordWrap(c.in, c.w); !slices.Equal(got, c.want) {
			t.Errorf("wordWrap(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}
