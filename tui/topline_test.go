package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Every layout leads with the top finding: title and first action, and the
// tab or box holding findings is marked.
func TestTopFindingInEveryLayout(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			m := scenario(stressed, 8, true)
			out := screen(t, m, sz.w, sz.h)
			ls := strings.Split(out, "\n")
			// TTFT p99 4.9 s against a 200 ms SLO is 24× its threshold:
			// critical, and so the top finding.
			if !strings.Contains(ls[2], "CRIT  TTFT over SLO: requests wait in the queue") {
				t.Errorf("line 3 is not the top finding: %q", ls[2])
			}
			if !strings.Contains(out, "→ --gpu-memory-utilization 0.97 (from default)") {
				t.Errorf("the top finding's first action is not shown:\n%s", out)
			}
			if m.mode() == modeTabs {
				if !strings.Contains(out, "6 Diagnosis!") {
					t.Errorf("the Diagnosis tab is not marked:\n%s", out)
				}
			} else if !strings.Contains(out, "6 Diagnosis · 1 CRIT · 11 WARN") {
				t.Errorf("the Diagnosis box is not marked:\n%s", out)
			}
		})
	}
	m := newTestModel() // nothing seen: no finding
	if out := screen(t, m, 80, 24); strings.Contains(out, "WARN") || strings.Contains(out, "Diagnosis!") {
		t.Errorf("a healthy screen shows a finding line or mark:\n%s", out)
	}
}

// Zoomed at 80×24 the diagnosis wraps its actions instead of cutting them.
func TestDiagnosisZoomWraps(t *testing.T) {
	m := scenario(stressed, 8, true)
	m.Update(press("a")) // the TTFT finding's actions are short: the GPU one's are not
	m.Update(press("6"))
	out := screen(t, m, 80, 24)
	// the memory-fraction flags of every engine, wrapped to their end
	want := []string{"  --gpu-memory-utilization, ", "--kv_cache_free_gpu_memory_fraction)", "a second model)"}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("zoomed diagnosis lacks %q (cut, not wrapped):\n%s", w, out)
		}
	}
}

// The top finding's line, cut to the width, ends after a whole word: at 80
// columns "KV transfer is 100 % of TTFT (2.5 s of 2…" cut a number.
func TestTopLineCutsAfterAWord(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"KV transfer is 100 % of TTFT (2.5 s of 2.5 s) on decode", 40, "KV transfer is 100 % of TTFT (2.5 s of…"},
		{"short", 40, "short"},
		// no space near the cut: cut inside, as clip does
		{"see http://127.0.0.1:8000/a/very/long/path/without/spaces", 33, "see http://127.0.0.1:8000/a/very…"},
	} {
		if got := clipWords(c.s, c.w); got != c.want {
			t.Errorf("clipWords(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
	m := scenario(stressed, 8, true)
	f, _ := topFinding(m.d)
	for w := 50; w <= 90; w++ {
		for _, l := range topLine(m.d, w) {
			l = ansi.Strip(l)
			before, _, cut := strings.Cut(l, "…")
			if !cut {
				continue
			}
			text := strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(before), f.Severity.Tag()), " →")
			if text != "" && !strings.Contains(f.Title+" "+f.Actions[0].Change+" ", text+" ") && !strings.Contains(f.Title+" "+f.Actions[0].Change, text+",") {
				t.Errorf("width %d: %q is cut inside a word", w, l)
			}
		}
	}
}
