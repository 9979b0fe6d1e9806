package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// fakeClock stands in for the clock's timer: it records each re-arm.
type fakeClock struct{ resets []time.Duration }

func (f *fakeClock) install(m *Model) {
	m.clock = screenClock{c: make(chan time.Time), reset: func(d time.Duration) bool {
		f.resets = append(f.resets, d)
		return true
	}}
}

// A frame of fresh data moves the header's clock, so the clock's own tick
// is pushed past the next scrape: at a one-second refresh the screen draws
// one frame a second, not a data frame and a clock frame.
func TestDataFramePushesTheClockBack(t *testing.T) {
	m := newTestModel()
	var f fakeClock
	f.install(m)
	ss := scrapes(3, healthy)
	var walls []time.Time
	for _, s := range ss {
		wall := s.Time.Add(60 * time.Millisecond)
		walls = append(walls, wall)
		m.wall = func() time.Time { return wall }
		m.Update(s)
		m.Update(frameMsg{})
	}
	if len(f.resets) != 3 {
		t.Fatalf("re-arms after three data frames: %v, want 3", f.resets)
	}
	// each at the first whole second (the beat grid) clockAfterData after the frame
	for i, d := range f.resets {
		at := walls[i].Add(d)
		if d < clockAfterData || d >= clockAfterData+time.Second || !at.Equal(at.Truncate(time.Second)) {
			t.Errorf("re-arm %d: %v after the frame (at %s), want the first whole second at least %v after it", i, d, at.Format("15:04:05.000"), clockAfterData)
		}
	}
	if clockAfterData <= time.Second+frameDelay {
		t.Fatalf("clockAfterData %v would tick before the next one-second scrape is drawn", clockAfterData)
	}
}

// A frame that does not show the present (log lines while the endpoint's
// scrapes have stopped) leaves the clock alone: "down 23 s" keeps counting.
func TestStaleFrameLeavesTheClockTicking(t *testing.T) {
	m := newTestModel()
	var f fakeClock
	f.install(m)
	ss := scrapes(2, healthy)
	last := ss[len(ss)-1].Time
	for _, s := range ss {
		m.Update(s)
	}
	m.wall = func() time.Time { return last.Add(30 * time.Second) }
	m.Update(model.LogLines{{Time: last.Add(30 * time.Second), Text: "INFO still here"}})
	m.Update(frameMsg{})
	if len(f.resets) != 0 {
		t.Fatalf("a frame 30 s behind the wall pushed the clock back: %v", f.resets)
	}
	// the clock's own tick moves the screen and re-arms for a second
	cmd := func() any { _, c := m.Update(clockMsg(last.Add(30 * time.Second))); return c }()
	if cmd == nil || len(f.resets) != 1 || f.resets[0] <= 0 || f.resets[0] > time.Second ||
		!m.wall().Add(f.resets[0]).Equal(m.wall().Add(f.resets[0]).Truncate(time.Second)) {
		t.Fatalf("a clock tick re-armed %v (cmd %v), want the next whole second", f.resets, cmd)
	}
	if out := screen(t, m, 120, 40); !strings.Contains(out, "STALE") {
		t.Fatalf("30 s without a scrape, the clock's tick should show STALE:\n%s", out)
	}
}

// A replay's clock is the recording's: data frames do not touch the timer,
// and the clock stops after its tick.
func TestReplayLeavesTheClock(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Replay: func(ReplayKey) {}})
	var f fakeClock
	f.install(m)
	for _, s := range scrapes(2, healthy) {
		m.wall = func() time.Time { return s.Time }
		m.Update(s)
		m.Update(frameMsg{})
	}
	if _, cmd := m.Update(clockMsg(t0)); cmd != nil || len(f.resets) != 0 {
		t.Fatalf("replay: re-arms %v, cmd %v; want none", f.resets, cmd)
	}
}

// Data is gathered into one frame only while more than one source polls on
// the refresh (an endpoint and the GPUs): with a single one, its scrape is
// drawn at once, without the frame timer's wake-up.
func TestOneSourceDrawsAtOnce(t *testing.T) {
	ss := scrapes(1, healthy)
	for _, c := range []struct {
		name    string
		opts    Options
		gathers bool
	}{
		{"one endpoint, --no-gpu", Options{Endpoints: []string{testURL}, NoGPU: true}, false},
		{"one endpoint and the GPUs", Options{Endpoints: []string{testURL}}, true},
		{"two endpoints, --no-gpu", Options{Endpoints: []string{testURL, "http://127.0.0.1:8001"}, NoGPU: true}, true},
	} {
		c.opts.Now, c.opts.NoColor = t0, true
		m := New(c.opts)
		var f fakeClock
		f.install(m)
		m.wall = func() time.Time { return ss[0].Time }
		_, cmd := m.Update(ss[0])
		if got := cmd != nil && m.hold; got != c.gathers {
			t.Errorf("%s: gathered %v (cmd %v, hold %v), want %v", c.name, got, cmd != nil, m.hold, c.gathers)
		}
		if !c.gathers && len(f.resets) == 0 {
			t.Errorf("%s: a scrape drawn at once did not push the clock back", c.name)
		}
	}
}

// Data that comes between the scrapes (the host's readings, the log's lines)
// is in the core at once but drawn with the next scrape's frame: each drew a
// frame of its own, nearly two a second at a 1 s refresh on the sim with
// its log. The clock's tick draws it when no scrape comes.
func TestBetweenDataWaitsForTheNextFrame(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, NoGPU: true,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
	var f fakeClock
	f.install(m)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	ss := scrapes(3, healthy)
	m.wall = func() time.Time { return ss[0].Time }
	m.Update(ss[0])
	m.View()
	drawn := m.lastFrame
	at := ss[0].Time.Add(300 * time.Millisecond)
	host := func(busy float64) model.HostReading {
		return model.HostReading{Endpoint: testURL, Time: at, IntervalS: 3, CPUs: 16, CPUBusy: model.Some(busy)}
	}
	for _, msg := range []tea.Msg{model.LogLine{Time: at, Endpoint: testURL, Text: "INFO between the scrapes"}, host(0.34)} {
		if _, cmd := m.Update(msg); cmd != nil {
			t.Fatalf("%T asked for a frame timer of its own", msg)
		}
		m.View()
		if m.lastFrame != drawn {
			t.Fatalf("%T drew a frame of its own", msg)
		}
	}
	if m.d.Core.Logs().Len() == 0 {
		t.Fatal("the held log line is not in the core")
	}
	m.wall = func() time.Time { return ss[1].Time }
	m.Update(ss[1])
	m.View()
	if !strings.Contains(ansi.Strip(m.lastFrame), "CPU 34% of 16") {
		t.Fatalf("the next scrape's frame does not show the host's reading:\n%s", ansi.Strip(m.lastFrame))
	}

	// no scrape comes: the clock's tick draws what came since
	at = ss[1].Time.Add(time.Second)
	m.Update(host(0.71))
	m.View()
	if strings.Contains(ansi.Strip(m.lastFrame), "CPU 71% of 16") {
		t.Fatal("the host's reading drew a frame of its own")
	}
	m.Update(clockMsg(ss[1].Time.Add(clockAfterData)))
	m.View()
	if !strings.Contains(ansi.Strip(m.lastFrame), "CPU 71% of 16") {
		t.Fatalf("the clock's frame does not show the host's reading:\n%s", ansi.Strip(m.lastFrame))
	}
}
