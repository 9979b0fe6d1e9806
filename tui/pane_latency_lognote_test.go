package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Ollama after its first request: E2E "p50 611ms … from log · n=1" over a
// note that said "≈ estimates from histogram buckets; no requests finished
// in the 1m window yet". One request from the log spans no time.
func TestWindowNoteOfOneLoggedRequest(t *testing.T) {
	m := newTestModel()
	one := model.Dist{Exposed: true, Source: model.FromLog, Count: 1, P50: model.Some(0.611), P99: model.Some(0.611), Mean: model.Some(0.611)}
	note := windowNote(one, m.d)
	if note != "from the engine's log · 1 request" {
		t.Errorf("note %q", note)
	}
	more := one
	more.Count, more.Window = 92, 40*time.Second
	if note := windowNote(more, m.d); !strings.HasPrefix(note, "from the engine's log over 40s") || !strings.HasSuffix(note, "· 92 requests") {
		t.Errorf("note %q", note)
	}
	// a mean-only engine with nothing finished is not said to have buckets
	if note := windowNote(model.Dist{Exposed: true}, m.d); strings.Contains(note, "bucket") || !strings.Contains(note, "no requests finished") {
		t.Errorf("note %q", note)
	}
}

// At 120 columns after a restart the note read "≈ bucket estimates over
// 48s · run 51s (window 1m) · 613 r…": the count goes before the words
// that say what the window is.
func TestWindowNoteDropsTheCountBeforeCuttingAWord(t *testing.T) {
	m := newTestModel()
	dist := model.Dist{Exposed: true, Estimate: true, Count: 613, Window: 48 * time.Second}
	full := windowNoteFit(dist, m.d, 200)
	if full != "≈ bucket estimates over 48s · 613 requests" {
		t.Fatalf("note %q", full)
	}
	if got := windowNoteFit(dist, m.d, 36); got != "≈ bucket estimates over 48s" {
		t.Errorf("note in 36 cells %q", got)
	}
}
