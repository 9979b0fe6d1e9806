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

// In a replay the replay keys work from every screen, so every screen's
// footer names them: the log view's and the fleet's too, after their own.
func TestReplayKeysInAnOverlayFooter(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Replay: func(ReplayKey) {}})
	m.Update(tea.WindowSizeMsg{Width: 250, Height: 50})
	m.Update(ReplayMsg{At: t0, Speed: 1})
	m.Update(ReplayMsg{At: t0.Add(6 * time.Second), Speed: 1}) // the first flash is over
	m.Update(press("l"))
	foot := lastLine(ansi.Strip(m.Render()))
	k := m.d.Keys
	for _, b := range []string{k.Back.Help().Key, k.ReplayStep.Help().Key, k.ReplayNext.Help().Key, k.ReplayStart.Help().Key} {
		if !strings.Contains(foot, b+" ") {
			t.Errorf("the log view's footer in a replay lacks %q: %q", b, foot)
		}
	}
	live := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true})
	live.Update(tea.WindowSizeMsg{Width: 250, Height: 50})
	live.Update(press("l"))
	if foot := lastLine(ansi.Strip(live.Render())); strings.Contains(foot, k.ReplayStep.Help().Desc) {
		t.Errorf("a live log view's footer names replay keys: %q", foot)
	}
}

// In a replay the benchmark is off on every screen: from the help (or
// any other overlay) b opened its form and enter sent load to whatever
// now answers at the recorded URL (seen in tmux: "sent 2").
func TestReplayBenchOffFromAnOverlay(t *testing.T) {
	r := &fakeRunner{}
	saved := append([]OverlaySpec(nil), overlaySpecs...)
	t.Cleanup(func() { overlaySpecs = saved })
	RegisterOverlay(OverlaySpec{ID: "bench", Key: DefaultKeyMap().Bench, New: func() Overlay { return NewBenchOverlay(r) }})
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Replay: func(ReplayKey) {}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	m.Update(ReplayMsg{At: t0, Speed: 1})
	for _, from := range []string{"?", "f", "l", "d", "e", "r"} {
		m.Update(press(from))
		m.Update(press("b"))
		if _, cmd := m.Update(press("enter")); cmd != nil {
			cmd()
		}
		out := ansi.Strip(m.Render())
		if strings.Contains(out, "━ Benchmark ━") || len(r.specs) > 0 {
			t.Fatalf("from %q, b in a replay opened the benchmark (runs %d):\n%s", from, len(r.specs), out)
		}
		m.Update(press("esc"))
	}
}

// In a replay the help's key grid says what + - and b do there: it read
// "+ longer interval", "- shorter interval" and "b benchmark" above the
// replay's own line, where + and - change the speed and b is off.
func TestReplayHelpSaysWhatKeysDoThere(t *testing.T) {
	saved := append([]OverlaySpec(nil), overlaySpecs...)
	t.Cleanup(func() { overlaySpecs = saved })
	RegisterOverlay(OverlaySpec{ID: "bench", Key: DefaultKeyMap().Bench, New: func() Overlay { return NewBenchOverlay(&fakeRunner{}) }})
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Replay: func(ReplayKey) {}})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	m.Update(ReplayMsg{At: t0, Speed: 1})
	m.Update(press("?"))
	out := ansi.Strip(m.Render())
	for _, bad := range []string{"longer interval", "shorter interval", "b benchmark ", "b Benchmark"} {
		if strings.Contains(out, bad) {
			t.Errorf("the replay's help says %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"+ replay faster ×2", "- replay slower ÷2", "b benchmark: not in a replay"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay's help lacks %q:\n%s", want, out)
		}
	}
	live := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true})
	live.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	live.Update(press("?"))
	if out := ansi.Strip(live.Render()); !strings.Contains(out, "+ longer interval") || !strings.Contains(out, "b Benchmark — enter start") {
		t.Errorf("the live help lost its interval or benchmark keys:\n%s", out)
	}
}
