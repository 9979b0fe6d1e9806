package tui

import (
	"encoding/json"
	"image/color"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// run executes a command and feeds what it returns back (one level).
func run(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	if msg := cmd(); msg != nil {
		m.Update(msg)
	}
}

func TestKeysFocusZoomWindowInterval(t *testing.T) {
	var mu sync.Mutex
	var set []time.Duration
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true,
		SetInterval: func(d time.Duration) { mu.Lock(); set = append(set, d); mu.Unlock() }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})

	first := m.focus
	m.Update(press("tab"))
	if m.focus == first {
		t.Fatal("tab did not move the focus")
	}
	m.Update(press("shift+tab"))
	if m.focus != first {
		t.Fatalf("shift+tab: focus %d, want %d", m.focus, first)
	}
	m.Update(press("4"))
	if m.zoom != "gpu" {
		t.Fatalf("4 zooms %q, want gpu", m.zoom)
	}
	m.Update(press("esc"))
	if m.zoom != "" {
		t.Fatal("esc did not leave the zoom")
	}

	if m.d.Window != time.Minute {
		t.Fatalf("default window %v", m.d.Window)
	}
	m.Update(press("]"))
	m.Update(press("]"))
	m.Update(press("]"))
	if m.d.Window != 15*time.Minute {
		t.Fatalf("] ×3: window %v, want 15m (clamped)", m.d.Window)
	}
	m.Update(press("["))
	if m.d.Window != 5*time.Minute {
		t.Fatalf("[: window %v, want 5m", m.d.Window)
	}

	_, cmd := m.Update(press("+"))
	run(t, m, cmd)
	if m.d.Interval != 2*time.Second {
		t.Fatalf("+: interval %v, want 2s", m.d.Interval)
	}
	for i := 0; i < 10; i++ {
		_, cmd = m.Update(press("-"))
		run(t, m, cmd)
	}
	if m.d.Interval != 250*time.Millisecond {
		t.Fatalf("- ×10: interval %v, want 250ms (clamped)", m.d.Interval)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(set) != 4 || set[0] != 2*time.Second || set[len(set)-1] != 250*time.Millisecond {
		t.Fatalf("SetInterval calls %v, want 2s,1s,500ms,250ms (none past the clamp)", set)
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newTestModel()
		_, cmd := m.Update(press(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s did not quit", k)
		}
	}
}

func TestPauseHoldsDataAndResumeAppliesIt(t *testing.T) {
	m := newTestModel()
	ss := scrapes(10, healthy)
	for _, s := range ss[:5] {
		m.Update(s)
	}
	m.Update(press("p"))
	for _, s := range ss[5:] {
		m.Update(s)
	}
	if got := m.d.Info(testURL).Scrapes; got != 5 {
		t.Fatalf("paused: %d scrapes applied, want 5", got)
	}
	if !strings.Contains(screen(t, m, 120, 40), "PAUSED") {
		t.Fatal("no PAUSED badge")
	}
	m.Update(press("space"))
	if got := m.d.Info(testURL).Scrapes; got != 10 {
		t.Fatalf("resumed: %d scrapes, want 10", got)
	}
}

func TestHealthBadges(t *testing.T) {
	cases := []struct {
		name string
		feed func(m *Model)
		want string
	}{
		{"up", func(m *Model) {
			for _, s := range scrapes(3, healthy) {
				m.Update(s)
			}
		}, "UP"},
		{"stale after 3 intervals", func(m *Model) {
			for _, s := range scrapes(3, healthy) {
				m.Update(s)
			}
			m.Update(tickMsg(t0.Add(2*time.Second + 3100*time.Millisecond)))
		}, "STALE"},
		{"down when refused", func(m *Model) {
			m.Update(model.Scrape{Endpoint: testURL, Time: t0, Err: "connection refused", ErrKind: model.ErrRefused,
				Hint: "is the engine running?"})
		}, "DOWN"},
		{"degraded on 404", func(m *Model) {
			m.Update(model.Scrape{Endpoint: testURL, Time: t0, Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp},
				Err: "metrics endpoint returned 404", ErrKind: model.ErrNotFound})
		}, "DEGRADED"},
		{"restarted when counters go back", func(m *Model) {
			ss := scrapes(6, healthy)
			for _, s := range ss[:5] {
				m.Update(s)
			}
			r := ss[0]
			r.Time = t0.Add(10 * time.Second)
			r.Samples = []model.Sample{r.Samples[0]}
			r.Samples[0].Time = r.Time
			m.Update(r)
		}, "RESTARTED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTestModel()
			c.feed(m)
			got, _ := m.d.Health(m.d.Endpoint())
			if got != c.want {
				t.Fatalf("badge %s, want %s", got, c.want)
			}
			if !strings.Contains(screen(t, m, 80, 24), " "+c.want+" ") {
				t.Fatalf("%s not on screen", c.want)
			}
		})
	}
}

func TestSimulatedBadge(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Simulated: true})
	if !strings.Contains(screen(t, m, 80, 24), "SIMULATED") {
		t.Fatal("no SIMULATED badge")
	}
}

func TestMissingValuesRenderDashes(t *testing.T) {
	// A llama.cpp-like endpoint: running/waiting and token counters only.
	m := newTestModel()
	id := model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "tiny"}}}
	for i := 0; i < 5; i++ {
		sm := model.NewSample(testURL, "tiny", t0.Add(time.Duration(i)*time.Second), model.FromScrape)
		sm.Gauges[model.Running], sm.Gauges[model.Waiting] = 1, 0
		sm.Counters[model.GenTokens] = float64(100 * i)
		m.Update(model.Scrape{Endpoint: testURL, Time: sm.Time, Identity: id, Samples: []model.Sample{sm}})
	}
	out := screen(t, m, 200, 60)
	for _, want := range []string{"-- not exposed by llama.cpp", "no latency histograms from llama.cpp", "KV -- not exposed", "-- tok/s", "100 tok/s", "ctx --", "TTFT p99              --"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "KV 0%") || strings.Contains(out, "TTFT 0") {
		t.Error("a missing value rendered as zero")
	}
}

func TestAbsentSourcesSayWhy(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true,
		Sources: map[string]string{"engine": "", "logs": "no log file: pass --log or run llmtop demo"}})
	out := screen(t, m, 200, 60)
	for _, want := range []string{"waiting for the first scrape of " + testURL, "no GPU source in this build",
		"log source not running: no log file"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q", want)
		}
	}
	m.Update(model.GPUSnapshot{Time: t0, Err: "no NVIDIA driver: libnvidia-ml.so.1 not found"})
	if out := screen(t, m, 200, 60); !strings.Contains(out, "libnvidia-ml.so.1 not found") {
		t.Error("the GPU error line is not shown")
	}
}

func TestEventsCollapseNewestFirst(t *testing.T) {
	m := newTestModel()
	for i := 0; i < 4; i++ {
		m.Update(model.Event{Time: t0.Add(time.Duration(i) * time.Second), Kind: "cuda_oom", Severity: model.SevCrit, Title: "CUDA out of memory"})
	}
	m.Update(model.Event{Time: t0.Add(5 * time.Second), Kind: "restart", Severity: model.SevWarn, Title: "engine restarted"})
	if n := m.d.Events.Len(); n != 2 {
		t.Fatalf("%d entries, want 2", n)
	}
	if e := m.d.Events.Newest(0); e.Kind != "restart" {
		t.Fatalf("newest is %s", e.Kind)
	}
	if e := m.d.Events.Newest(1); e.Count != 4 {
		t.Fatalf("OOM count %d, want 4", e.Count)
	}
	out := screen(t, m, 200, 60)
	if !strings.Contains(out, "CUDA out of memory ×4") {
		t.Fatal("collapsed event not shown as ×4")
	}
	if strings.Index(out, "engine restarted") > strings.Index(out, "CUDA out of memory") {
		t.Fatal("events not newest first")
	}
}

func TestSaveSnapshotMatchesScreen(t *testing.T) {
	var saved []byte
	m := scenario(stressed, 2, true)
	m.opts.Save = func(b []byte) (string, error) { saved = b; return "/tmp/x.json", nil }
	_, cmd := m.Update(press("s"))
	run(t, m, cmd)
	var snap model.SnapshotJSON
	if err := json.Unmarshal(saved, &snap); err != nil {
		t.Fatalf("%v: %s", err, saved)
	}
	if len(snap.Endpoints) != 1 || snap.GPU == nil || len(snap.GPU.GPUs) != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	mt := snap.Endpoints[0].Metrics
	out := screen(t, m, 200, 60)
	for _, want := range []string{
		fmtPct(mt.KVCacheUsageRatio), fmtNum(mt.Waiting), fmtSec(mt.TTFTms.P99.Scale(0.001)),
		fmtNum(mt.GenerationTokensPerS) + " tok/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshot value %q not on screen", want)
		}
	}
	if !strings.Contains(out, "snapshot saved to /tmp/x.json") {
		t.Error("no saved message")
	}
}

func TestResizeNeverPanics(t *testing.T) {
	m := scenario(stressed, 8, true)
	for w := 0; w <= 230; w += 7 {
		for h := 0; h <= 70; h += 5 {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			out := m.Render()
			if w >= minW && h >= minH {
				if n := len(strings.Split(out, "\n")); n != h {
					t.Fatalf("%d×%d: %d lines", w, h, n)
				}
				for _, l := range strings.Split(out, "\n") {
					if ansi.StringWidth(l) != w {
						t.Fatalf("%d×%d: line of %d cells", w, h, ansi.StringWidth(l))
					}
				}
			}
			for _, k := range []string{"tab", "4", "j", "k", "e", "esc", "l", "esc", "?", "esc", "esc"} {
				m.Update(press(k))
				_ = m.Render()
			}
		}
	}
}

func TestTooSmall(t *testing.T) {
	m := newTestModel()
	if out := screen(t, m, 40, 10); !strings.Contains(out, "terminal too small") {
		t.Fatal(out)
	}
}

func TestMultipleEndpointsSwitch(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		m.Update(s)
	}
	other := "http://127.0.0.1:30000"
	for _, s := range scrapes(3, stressed) {
		s.Endpoint = other
		s.Identity.Engine = model.SGLang
		for i := range s.Samples {
			s.Samples[i].Endpoint = other
		}
		m.Update(s)
	}
	if got := screen(t, m, 200, 60); !strings.Contains(got, "[1/2 h/→]") || !strings.Contains(got, "also: "+other+" UP") {
		t.Fatalf("two endpoints not shown:\n%s", got)
	}
	m.Update(press("right"))
	if k, _ := m.d.Key(); k.Endpoint != other {
		t.Fatalf("→ selected %v", k)
	}
	if got := screen(t, m, 200, 60); !strings.Contains(got, "sglang") {
		t.Fatal("header did not follow the selection")
	}
	m.Update(press("h"))
	if k, _ := m.d.Key(); k.Endpoint != testURL {
		t.Fatalf("h selected %v", k)
	}
}

func TestReservedKeysSayNotAvailable(t *testing.T) {
	m := newTestModel()
	m.Update(press("b"))
	if !strings.Contains(screen(t, m, 120, 40), "benchmark: not available") {
		t.Fatal("b is silent")
	}
}

func TestRegisterPaneReplaces(t *testing.T) {
	saved := append([]PaneSpec(nil), paneSpecs...)
	defer func() { paneSpecs = saved }()
	RegisterPane(PaneSpec{ID: "diagnosis", Slot: 6, New: func() Pane { return fakePane{} }})
	m := newTestModel()
	if len(m.panes) != len(saved) {
		t.Fatalf("%d panes after replacing one, want %d", len(m.panes), len(saved))
	}
	if !strings.Contains(screen(t, m, 200, 60), "fake findings") {
		t.Fatal("the replacement pane is not drawn")
	}
}

type fakePane struct{}

func (fakePane) Title() string               { return "Findings" }
func (fakePane) Height(*Data, int) int       { return 1 }
func (fakePane) View(*Data, int, int) string { return "fake findings" }
func (fakePane) Keys() []key.Binding         { return nil }

func TestLogSamplesJoinTheirScrapedEndpoint(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(3, healthy) {
		m.Update(s)
	}
	sm := model.NewSample(testURL, "", t0.Add(2500*time.Millisecond), model.FromLog)
	sm.Gauges[model.Running] = 3
	m.Update(sm)
	if n := len(m.d.ModelKeys()); n != 1 {
		t.Fatalf("%d keys, want 1 (the log's picture is the same endpoint)", n)
	}
	if strings.Contains(screen(t, m, 200, 60), "[1/2") {
		t.Fatal("the log-derived key is offered as a second endpoint")
	}
	// A log-only endpoint (nothing scrapes it) stays a choice.
	other := model.NewSample("http://10.0.0.9:8000", "", t0.Add(3*time.Second), model.FromLog)
	other.Gauges[model.Running] = 1
	m.Update(other)
	if n := len(m.d.ModelKeys()); n != 2 {
		t.Fatalf("%d keys, want 2", n)
	}
}

func TestThemeFollowsTheTerminalUnlessForced(t *testing.T) {
	white := tea.BackgroundColorMsg{Color: color.White}
	m := New(Options{Endpoints: []string{testURL}, Now: t0})
	if !m.d.Styles.Dark {
		t.Fatal("dark is the default until the terminal answers")
	}
	m.Update(white)
	if m.d.Styles.Dark {
		t.Fatal("a white background did not switch to the light palette")
	}
	forced := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: "dark"})
	forced.Update(white)
	if !forced.d.Styles.Dark {
		t.Fatal("theme = dark was overridden by the terminal")
	}
	mono := New(Options{Endpoints: []string{testURL}, Now: t0, Theme: "mono"})
	if !mono.d.Styles.NoColor {
		t.Fatal("theme = mono is not colourless")
	}
	for _, s := range scrapes(3, stressed) {
		mono.Update(s)
	}
	mono.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	if out := mono.Render(); strings.Contains(out, "\x1b[3") || strings.Contains(out, "\x1b[4") || strings.Contains(out, "38;") {
		t.Fatalf("colour codes without colour: %q", out[:200])
	}
}

// Panes drawn for one state are reused on clock ticks, but clock-dependent
// words (a STALE badge in the endpoints pane) follow the moment they change.
func TestCachedPanesFollowTheClock(t *testing.T) {
	m := newTestModel()
	ss := scrapes(3, healthy)
	for _, s := range ss {
		m.Update(s)
	}
	m.Update(press("7"))
	if out := screen(t, m, 120, 40); strings.Count(out, " UP") < 2 {
		t.Fatalf("header and endpoints pane should both say UP:\n%s", out)
	}
	m.Update(tickMsg(ss[2].Time.Add(500 * time.Millisecond)))
	_ = m.Render()
	before := m.panes[m.paneIndex("endpoints")].cached
	m.Update(tickMsg(ss[2].Time.Add(900 * time.Millisecond)))
	_ = m.Render()
	if after := m.panes[m.paneIndex("endpoints")].cached; &after[0] != &before[0] {
		t.Fatal("a tick that changed nothing it shows redrew an unchanged pane")
	}
	m.Update(tickMsg(ss[2].Time.Add(10 * time.Second)))
	out := screen(t, m, 120, 40)
	if strings.Count(out, "STALE") < 2 {
		t.Fatalf("header and endpoints pane should both say STALE:\n%s", out)
	}
	// Stale values count their age in seconds: the panes follow each tick.
	m.Update(press("esc"))
	m.Update(tickMsg(ss[2].Time.Add(11 * time.Second)))
	if out := screen(t, m, 120, 40); !strings.Contains(out, "(11s ago)") {
		t.Fatalf("the age of stale values did not follow the clock:\n%s", out)
	}
}
