package engine

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The VRAM note says what /api/ps means: all in VRAM (no note), partly
// offloaded, or a CPU-only run (size_vram 0), which is not an offload.
func TestOllamaVRAMNotes(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra map[string]string
		want  string // the note expected, "" for none
	}{
		{"all in VRAM", map[string]string{"size": "100", "size_vram": "100", "vram_ratio": "1.000"}, ""},
		{"partly offloaded", map[string]string{"size": "100", "size_vram": "60", "vram_ratio": "0.600"}, ollamaOffloadNote + "0.600"},
		{"CPU only", map[string]string{"size": "100", "size_vram": "0", "vram_ratio": "0.000"}, ollamaCPUNote},
		{"no size_vram reported", map[string]string{"size": "100"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.extra["loaded"] = "true"
			ss := ollamaSamples([]model.ModelInfo{{ID: "m", Extra: c.extra}}, testMeta("m"))
			s := only(t, ss)
			var vram []string
			for _, n := range s.Notes {
				if strings.Contains(n, "VRAM") {
					vram = append(vram, n)
				}
			}
			switch {
			case c.want == "" && len(vram) != 0:
				t.Errorf("notes %q, want no VRAM note", vram)
			case c.want != "" && (len(vram) != 1 || vram[0] != c.want):
				t.Errorf("notes %q, want only %q", vram, c.want)
			}
		})
	}
}
