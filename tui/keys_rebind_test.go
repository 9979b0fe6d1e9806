package tui

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func fkey(n int) tea.KeyPressMsg { return tea.KeyPressMsg{Code: tea.KeyF1 + rune(n-1)} }

// Every action rebound to a new key (f1, f2, …; the zoom keys f50…): the
// help, the footer, the tab bar and the bench form show and obey the new
// keys, and none of the defaults is left on screen.
func TestRebindEveryAction(t *testing.T) {
	km := DefaultKeyMap()
	names := make([]string, 0, 48)
	for n := range km.bindings() {
		names = append(names, n)
	}
	sort.Strings(names)
	keyOf := map[string]string{}
	for i, n := range names {
		ks := []string{fmt.Sprintf("f%d", i+1)}
		if n == "zoom" {
			ks = nil
			for j := range paneSpecs {
				ks = append(ks, fmt.Sprintf("f%d", 50+j))
			}
		}
		if err := km.Rebind(n, ks); err != nil {
			t.Fatal(err)
		}
		keyOf[n] = strings.Join(ks, "/")
	}
	m := scenario(stressed, 8, true)
	m2 := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Keys: &km, Core: m.d.Core,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
	m2.Update(tea.WindowSizeMsg{Width: 250, Height: 70})

	foot := lastLine(ansi.Strip(m2.Render()))
	for _, n := range []string{"help", "focus", "zoom", "pause", "logs", "diagnose", "explain", "quit"} {
		if !strings.Contains(foot, keyOf[n]+" ") {
			t.Errorf("footer lacks %s's new key %s: %q", n, keyOf[n], foot)
		}
	}
	if strings.Contains(foot, "? help") || strings.Contains(foot, "1-7") {
		t.Errorf("footer still shows a default key: %q", foot)
	}

	m2.Update(fkey(indexOf(names, "help") + 1))
	if m2.overlay < 0 || m2.overlays[m2.overlay].id != "help" {
		t.Fatalf("the rebound help key did not open help")
	}
	m2.d.Replay = &ReplayState{} // the help lists the replay's keys in a replay
	help := ansi.Strip(m2.Render())
	m2.d.Replay = nil
	// shown by the bench form, which cmd/llmtop registers (tested below)
	stageOnly := map[string]bool{"yes": true, "no": true, "decrease": true, "increase": true, "confirm": true,
		"raw":  true, // raw: the probe overlay's, which cmd/llmtop registers (tested below)
		"undo": true} // the apply overlay's, which cmd/llmtop registers
	for _, n := range names {
		if stageOnly[n] {
			continue
		}
		re := regexp.MustCompile(`(^|[^\w])` + regexp.QuoteMeta(keyOf[n]) + `($|[^\w])`)
		if !re.MatchString(help) {
			t.Errorf("help does not show %s's new key %s:\n%s", n, keyOf[n], help)
		}
	}
	for _, old := range []string{"j/↓", "k/↑", "h/←", "1-7", "? help", " d diagnosis", "l Log", "pgup page", "enter start"} {
		if strings.Contains(help, old) {
			t.Errorf("help still shows the default %q:\n%s", old, help)
		}
	}

	// the zoom keys: the third zooms the third pane, the digit does nothing
	m2.Update(fkey(indexOf(names, "back") + 1))
	m2.Update(press("3"))
	if m2.zoom != "" {
		t.Errorf("the default zoom key 3 still zooms: %q", m2.zoom)
	}
	m2.Update(fkey(52))
	if m2.zoom != m2.panes[2].id {
		t.Errorf("f52 zooms %q, want %q", m2.zoom, m2.panes[2].id)
	}
	m2.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m2.Update(fkey(indexOf(names, "back") + 1))
	if tabs := strings.Split(ansi.Strip(m2.Render()), "\n")[4]; !strings.Contains(tabs, "f55 Diagn…!") || !strings.Contains(tabs, "[f52 Scheduler]") {
		t.Errorf("the tab bar does not name the zoom keys: %q", tabs)
	}

	// the bench form reads the same keys
	o := NewBenchOverlay(&fakeRunner{}).(*benchOverlay)
	o.Open(m2.d)
	o.url = "http://10.0.0.7:8000"
	o.HandleKey(press("right"), m2.d)
	if o.preset != 0 {
		t.Errorf("the default → still changes the preset")
	}
	o.HandleKey(fkey(indexOf(names, "increase")+1), m2.d)
	o.HandleKey(fkey(indexOf(names, "increase")+1), m2.d)
	o.HandleKey(fkey(indexOf(names, "decrease")+1), m2.d)
	if o.preset != 1 {
		t.Errorf("rebound increase/decrease: preset %d, want 1", o.preset)
	}
	o.HandleKey(press("enter"), m2.d)
	if o.stage != benchForm {
		t.Errorf("the default enter still confirms")
	}
	o.HandleKey(fkey(indexOf(names, "confirm")+1), m2.d)
	if o.stage != benchConfirm {
		t.Fatalf("rebound confirm: stage %v", o.stage)
	}
	ks := m2.d.Keys.currentAll(o.Keys())
	if got := ks[0].Help().Key + " " + ks[1].Help().Key; got != keyOf["yes"]+" "+keyOf["no"] {
		t.Errorf("confirm stage lists %q, want the rebound yes/no", got)
	}
	o.HandleKey(fkey(indexOf(names, "no")+1), m2.d)
	if o.stage != benchForm {
		t.Errorf("rebound no: stage %v", o.stage)
	}

	// the probe overlay too: raw and again are the user's keys
	p := NewProbeOverlay(nil).(*probeOverlay)
	p.HandleKey(press("x"), m2.d)
	if p.raw {
		t.Errorf("the default x still shows the raw requests")
	}
	p.HandleKey(fkey(indexOf(names, "raw")+1), m2.d)
	if !p.raw {
		t.Errorf("the rebound raw key does not show the raw requests")
	}
	pk := m2.d.Keys.currentAll(p.Keys())
	if got := pk[0].Help().Key + " " + pk[1].Help().Key; got != keyOf["raw"]+" "+keyOf["confirm"] {
		t.Errorf("the probe overlay lists %q, want the rebound raw and confirm", got)
	}
	if v := ansi.Strip(p.View(m2.d, 200, 10)); !strings.Contains(v, keyOf["raw"]+" raw") {
		t.Errorf("the probe overlay's head does not name the rebound raw key:\n%s", v)
	}
}

// The replay's keys rebound (as above): the footer, the first flash and
// the end-of-recording note name them, they drive the replay on the main
// screen and on the log view, and the defaults no longer do.
func TestRebindReplayKeys(t *testing.T) {
	km := DefaultKeyMap()
	controls := map[string]ReplayKey{
		"pause": ReplayPause, "replay_step": ReplayStep, "replay_back": ReplayBack1m, "replay_forward": ReplayFwd1m,
		"replay_back_far": ReplayBack10m, "replay_forward_far": ReplayFwd10m, "replay_next": ReplayNext,
		"replay_start": ReplayStart, "slower": ReplayFaster, "faster": ReplaySlower,
	}
	names := make([]string, 0, len(controls))
	for n := range controls {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if err := km.Rebind(n, []string{fmt.Sprintf("f%d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []ReplayKey
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Keys: &km,
		Replay: func(k ReplayKey) { got = append(got, k) }})
	m.Update(tea.WindowSizeMsg{Width: 250, Height: 50})
	m.Update(ReplayMsg{At: t0, Speed: 1})
	flash := lastLine(ansi.Strip(m.Render()))
	m.Update(ReplayMsg{At: t0.Add(6 * time.Second), Speed: 1})
	foot := lastLine(ansi.Strip(m.Render()))
	m.Update(ReplayMsg{At: t0.Add(12 * time.Second), Speed: 1, Ended: true, Paused: true})
	end := lastLine(ansi.Strip(m.Render()))
	for i, n := range names {
		k := fmt.Sprintf("f%d", i+1)
		re := regexp.MustCompile(`(^|[^\w])` + k + `($|[^\w])`)
		if !re.MatchString(foot) {
			t.Errorf("the replay footer lacks %s's key %s: %q", n, k, foot)
		}
		if !re.MatchString(flash) {
			t.Errorf("the replay's first flash lacks %s's key %s: %q", n, k, flash)
		}
	}
	if !strings.Contains(end, indexKey(names, "replay_start")+" plays it again · "+indexKey(names, "replay_back")+"/"+indexKey(names, "replay_back_far")+" seek back") {
		t.Errorf("the end note does not name the rebound start key: %q", end)
	}
	for _, old := range []string{"space", "t", ",", ".", "{", "}", "!", "0", "+", "-"} {
		if regexp.MustCompile(`(^|• )` + regexp.QuoteMeta(old) + ` `).MatchString(foot) {
			t.Errorf("the replay footer still shows the default %q: %q", old, foot)
		}
	}
	run := func(cmd tea.Cmd) {
		if cmd != nil {
			cmd()
		}
	}
	for _, screen := range []string{"main", "logs"} {
		if screen == "logs" {
			m.Update(press("l"))
			if m.overlay < 0 {
				t.Fatal("l did not open the log view")
			}
		}
		for i, n := range names {
			got = nil
			_, cmd := m.Update(fkey(i + 1))
			run(cmd)
			if len(got) != 1 || got[0] != controls[n] {
				t.Errorf("%s: the rebound %s key sent %v, want %v", screen, n, got, controls[n])
			}
		}
		got = nil
		for _, old := range []string{"p", " ", "t", ",", ".", "{", "}", "!", "0", "+", "-"} {
			_, cmd := m.Update(press(old))
			run(cmd)
		}
		if len(got) != 0 {
			t.Errorf("%s: the default replay keys still drive the replay: %v", screen, got)
		}
	}
}

func indexKey(names []string, n string) string { return fmt.Sprintf("f%d", indexOf(names, n)+1) }

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	panic("no " + s)
}

func lastLine(s string) string {
	ls := strings.Split(s, "\n")
	return ls[len(ls)-1]
}
