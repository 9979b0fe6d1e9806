package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/tui"
)

// screen is the TUI model driven by the replayer's goroutine, as the
// program would drive it; the test reads it under the same lock.
type screen struct {
	mu sync.Mutex
	m  *tui.Model
}

func (s *screen) send(msg any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Update(msg)
}

func (s *screen) read(f func(m *tui.Model)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.m)
}

// waitFor polls until cond holds (generous deadline: the machine is shared).
func (s *screen) waitFor(t *testing.T, what string, cond func(m *tui.Model) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ok := false
		s.read(func(m *tui.Model) { ok = cond(m) })
		if ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.read(func(m *tui.Model) { t.Fatalf("timed out waiting for %s; replay at %+v", what, m.Data().Replay) })
}

// `llmtop replay` on a recording of the monitor: played through the TUI at
// ×1000 it ends where the live monitor ended; seeks rebuild the core to
// exactly the live state of that second; f lands on a finding or restart;
// pause and step hold the clock.
func TestReplayTheMonitor(t *testing.T) {
	const secs = 110
	file, live, _, url := recordMonitorSession(t, recordScenario, time.Millisecond, secs, -1)
	r, err := recording.NewReader(bytes.NewReader(file), "mem")
	if err != nil {
		t.Fatal(err)
	}
	var recs []recording.Record
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	h := r.Header()
	first := recs[0].Time
	ctx, cancel := context.WithCancel(context.Background())
	// short segments: every seek starts from a checkpoint of the core
	// taken mid-recording, not from the start
	rp, p := replayerOn(t, ctx, file, replayOptions{Speed: 1000, Every: 37}, first)
	th := config.DefaultThresholds
	sc := &screen{m: tui.New(tui.Options{Core: p.mon, Endpoints: h.Endpoints, Window: time.Duration(h.Window),
		Now: first, NoColor: true, Thresholds: &th, Replay: rp.control})}
	sc.send(tea.WindowSizeMsg{Width: 160, Height: 50})
	done := make(chan struct{})
	go func() { defer close(done); rp.run(ctx, p, sc.send) }()
	defer func() { cancel(); <-done }()

	sc.waitFor(t, "the end", func(m *tui.Model) bool { return m.Data().Replay != nil && m.Data().Replay.Ended })
	sc.read(func(m *tui.Model) {
		if got := moments(m.Data().Core, url); got != live[secs-1] {
			t.Fatalf("end of the replay:\nlive   %s\nreplay %s", live[secs-1], got)
		}
		// Issue 31 item 24: the badge says where the replay stands in the
		// recording: at its end, its offset and its length are the same.
		badge := regexp.MustCompile(`REPLAY ` + recs[len(recs)-1].Time.Local().Format("15:04:05") + ` (\S+)/(\S+) \(×1000\) END`)
		v := m.View().Content
		if b := badge.FindStringSubmatch(v); b == nil || b[1] != b[2] || !strings.HasSuffix(b[1], "s") {
			t.Fatalf("header badge missing or not at the end (%q):\n%s", b, v)
		}
	})

	// seek −1 m from the end: second 50 exactly as it was live
	key := func(k tui.ReplayKey) { rp.control(k) }
	key(tui.ReplayBack1m)
	sc.waitFor(t, "the seek", func(m *tui.Model) bool { return m.Data().Replay.At.Equal(first.Add(49 * time.Second)) })
	sc.read(func(m *tui.Model) {
		if got := moments(m.Data().Core, url); got != live[49] {
			t.Fatalf("after seeking to second 50:\nlive   %s\nreplay %s", live[49], got)
		}
	})

	// The end paused the replay, and seeks keep it paused: back to the
	// start, where it stays; a step moves exactly one second.
	key(tui.ReplayStart)
	sc.waitFor(t, "the start", func(m *tui.Model) bool { return m.Data().Replay.At.Equal(first) })
	time.Sleep(50 * time.Millisecond) // ×1000: 50 recorded seconds, were it playing
	sc.read(func(m *tui.Model) {
		if r := m.Data().Replay; !r.Paused || !r.At.Equal(first) {
			t.Fatalf("a paused replay moved: %+v", r)
		}
	})
	key(tui.ReplayStep)
	sc.waitFor(t, "a step", func(m *tui.Model) bool { return m.Data().Replay.At.Equal(first.Add(time.Second)) })
	sc.read(func(m *tui.Model) {
		if got := moments(m.Data().Core, url); got != live[1] {
			t.Fatalf("after a step to second 2:\nlive   %s\nreplay %s", live[1], got)
		}
	})

	// f: the next moment a finding opened or a run started (the marks
	// are found in the background: f says so until they are)
	var at time.Time
	for deadline := time.Now().Add(60 * time.Second); at.IsZero() && time.Now().Before(deadline); {
		key(tui.ReplayNext)
		time.Sleep(20 * time.Millisecond)
		sc.read(func(m *tui.Model) {
			if a := m.Data().Replay.At; a.After(first.Add(time.Second)) {
				at = a
			}
		})
	}
	if at.IsZero() {
		t.Fatal("f never moved the replay")
	}
	sc.read(func(m *tui.Model) {
		n := int(at.Sub(first) / time.Second)
		opened := false
		for _, f := range m.Data().Core.History() {
			opened = opened || f.Opened.Equal(at)
		}
		for _, run := range m.Data().Core.RunsOf(url) {
			opened = opened || run.Started.Equal(at)
		}
		if !opened {
			t.Fatalf("f landed on %v where nothing opened or started: %s", at, moments(m.Data().Core, url))
		}
		if got := moments(m.Data().Core, url); at.Equal(first.Add(time.Duration(n)*time.Second)) && got != live[n] {
			t.Fatalf("at the mark (second %d):\nlive   %s\nreplay %s", n+1, live[n], got)
		}
	})

	// space plays on to the end, where the live monitor ended
	key(tui.ReplayPause)
	sc.waitFor(t, "the end again", func(m *tui.Model) bool { return m.Data().Replay.Ended })
	sc.read(func(m *tui.Model) {
		if got := moments(m.Data().Core, url); got != live[secs-1] {
			t.Fatalf("played on to the end:\nlive   %s\nreplay %s", live[secs-1], got)
		}
	})
}

// + and - change a replay's speed (they change the refresh interval live).
func TestReplaySpeedKeys(t *testing.T) {
	start := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	recs := []recording.Record{{Time: start, Msg: recording.Tick{}}, {Time: start.Add(time.Hour), Msg: recording.Tick{}}}
	ctx, cancel := context.WithCancel(context.Background())
	rp, p := replayerOn(t, ctx, recordingOf(t, recs), replayOptions{Speed: 1}, start)
	sc := &screen{m: tui.New(tui.Options{Core: p.mon, Now: start, NoColor: true, Replay: rp.control})}
	sc.send(tea.WindowSizeMsg{Width: 160, Height: 40})
	done := make(chan struct{})
	go func() { defer close(done); rp.run(ctx, p, sc.send) }()
	defer func() { cancel(); <-done }()
	sc.waitFor(t, "the start", func(m *tui.Model) bool { return m.Data().Replay != nil })
	press := func(k string) {
		var cmd tea.Cmd
		sc.read(func(m *tui.Model) { _, cmd = m.Update(tea.KeyPressMsg{Code: rune(k[0]), Text: k}) })
		if cmd != nil {
			cmd() // the program runs it: it hands the key to the replayer
		}
	}
	press("+")
	press("+")
	sc.waitFor(t, "×4", func(m *tui.Model) bool { return m.Data().Replay.Speed == 4 })
	press("-")
	sc.waitFor(t, "×2", func(m *tui.Model) bool { return m.Data().Replay.Speed == 2 })
	sc.read(func(m *tui.Model) {
		if v := m.View().Content; !strings.Contains(v, "(×2)") {
			t.Fatalf("badge:\n%s", v)
		}
		if m.Data().Interval != time.Second {
			t.Fatalf("+/- changed the refresh interval in a replay: %v", m.Data().Interval)
		}
	})
}

// replayerOn starts a replayer on the recording in file, positioned at
// from; it ends with the test.
func replayerOn(tb testing.TB, ctx context.Context, file []byte, o replayOptions, from time.Time) (*replayer, position) {
	tb.Helper()
	open := func() (*recording.Reader, error) { return recording.NewReader(bytes.NewReader(file), "mem") }
	r, err := open()
	if err != nil {
		tb.Fatal(err)
	}
	rp, err := newReplayer("mem", r.Header(), open, o, ctx.Done())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rp.close)
	p, err := rp.seekTo(from)
	if err != nil {
		tb.Fatal(err)
	}
	return rp, p
}

// recordingOf writes recs as a monitor recording.
func recordingOf(tb testing.TB, recs []recording.Record) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := recording.NewWriter(&buf, recording.Header{Face: "monitor", Started: recs[0].Time})
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range recs {
		if _, err := w.Write(r.Time, r.Msg); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
