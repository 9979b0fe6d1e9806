package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// A flash lasts until a moment of the recording's clock; a seek back to
// before that moment must not bring an old one back.
func TestReplaySeekBackDropsOldFlash(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Replay: func(ReplayKey) {}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m.Update(ReplayMsg{At: t0, Speed: 1})
	if foot := lastLine(ansi.Strip(m.Render())); !strings.HasPrefix(foot, "replay: ") {
		t.Fatalf("the first flash is not the replay's keys: %q", foot)
	}
	m.Update(ReplayMsg{At: t0.Add(time.Minute), Speed: 1})
	m.Update(ReplayMsg{At: t0, Speed: 1, Core: m.d.Core}) // a seek back
	if foot := lastLine(ansi.Strip(m.Render())); strings.HasPrefix(foot, "replay: ") {
		t.Errorf("a seek back showed the old flash again: %q", foot)
	}
}
