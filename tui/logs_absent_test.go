package tui

import (
	"strings"
	"testing"
)

// With no log followed the sources line has no "logs" entry (it would say
// ok); the Events pane and the log view then say how to follow one, not
// that this build has no log source.
func TestNoLogFollowedSaysHow(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true,
		Sources: map[string]string{"engine": "", "gpu": ""}})
	for _, s := range scrapes(5, healthy) {
		m.Update(s)
	}
	m.Update(press("5"))
	out := screen(t, m, 200, 60)
	if strings.Contains(out, "in this build") || !strings.Contains(out, "no engine log followed (--log FILE") {
		t.Errorf("Events pane with no log followed:\n%s", out)
	}
	m.Update(press("l"))
	out = screen(t, m, 200, 60)
	if strings.Contains(out, "in this build") || !strings.Contains(out, "no engine log followed: start llmtop with --log FILE") {
		t.Errorf("log view with no log followed:\n%s", out)
	}
}
