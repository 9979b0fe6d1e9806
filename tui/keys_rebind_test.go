package tui

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

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
	help := ansi.Strip(m2.Render())
	// shown by the bench form, which cmd/llmtop registers (tested below)
	stageOnly := map[string]bool{"yes": true, "no": true, "decrease": true, "increase": true, "confirm": true,
		"raw": true} // raw: the probe overlay's, which cmd/llmtop registers (tested below)
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
	if tabs := strings.Split(ansi.Strip(m2.Render()), "\n")[4]; !strings.Contains(tabs, "f55 Dia…!") {
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
