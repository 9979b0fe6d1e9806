package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/core"
)

// Replay: the monitor on a recording (`llmtop replay`). A replayer
// goroutine in cmd sends the recorded messages paced by their times, and
// ReplayMsg moves the screen's clock: in a replay the wall clock moves
// nothing. The replay keys go back to the replayer through
// Options.Replay, called in a tea.Cmd.

// ReplayKey is a replay control the user pressed.
type ReplayKey int

const (
	ReplayPause   ReplayKey = iota // pause / resume
	ReplayStep                     // one recorded second (paused)
	ReplayBack1m                   // seek −1 m
	ReplayFwd1m                    // seek +1 m
	ReplayBack10m                  // seek −10 m
	ReplayFwd10m                   // seek +10 m
	ReplayNext                     // the next finding that opened or engine run that started
	ReplayStart                    // back to the start
	ReplayFaster                   // speed ×2
	ReplaySlower                   // speed ÷2
)

// ReplayKeys are the replay's keys as the help and the footer show them:
// the user's, each back/forward pair as one entry.
func (k KeyMap) ReplayKeys() []key.Binding {
	pair := func(a, b key.Binding, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(append(a.Keys(), b.Keys()...)...), key.WithHelp(a.Help().Key+"/"+b.Help().Key, desc))
	}
	return []key.Binding{
		relabel(k.Pause, "pause"), k.ReplayStep,
		pair(k.ReplayBack, k.ReplayForward, "−/+1m"), pair(k.ReplayBackFar, k.ReplayForwardFar, "−/+10m"),
		k.ReplayNext, k.ReplayStart, pair(k.Slower, k.Faster, "speed ×2/÷2"),
	}
}

// replayFullHelp is FullHelp as the keys act in a replay: + and - change
// its speed (no interval there) and b is off (replayKey).
func (k KeyMap) replayFullHelp() [][]key.Binding {
	k.Slower = relabel(k.Slower, "replay faster ×2")
	k.Faster = relabel(k.Faster, "replay slower ÷2")
	k.Bench = relabel(k.Bench, "benchmark: not in a replay")
	return k.FullHelp()
}

// ReplayHelp names the replay keys of k in one line.
func ReplayHelp(k KeyMap) string {
	parts := make([]string, 0, 8)
	for _, b := range k.ReplayKeys() {
		parts = append(parts, b.Help().Key+" "+b.Help().Desc)
	}
	return "replay: " + strings.Join(parts, " · ")
}

// ReplayMsg is the replayer's word on where the replay stands. At is the
// recording's clock; Core, when set, replaces the monitor's core (a seek
// rebuilt it from the start up to At, and hands it over: the replayer no
// longer touches it). Tick runs the rules at At, as the recorded monitor
// did. Note is flashed.
type ReplayMsg struct {
	At     time.Time
	Speed  float64
	Paused bool
	Ended  bool
	Tick   bool
	Core   *core.Monitor
	Note   string
	// Start and End are the recording's first and last moments (End zero
	// while its length is not known yet): the header says where At stands.
	Start, End time.Time
}

// ReplayState is what the header shows of a replay.
type ReplayState struct {
	At            time.Time
	Speed         float64
	Paused, Ended bool
	Start, End    time.Time
}

// replayUpdate handles the replay's messages; handled is false for others.
func (m *Model) replayUpdate(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	d := m.d
	switch msg := msg.(type) {
	case ReplayMsg:
		if msg.Core != nil {
			m.swapCore(msg.Core)
			// a flash lasts until a moment of the recording's clock: one
			// from after a seek back would show again
			m.status = ""
		}
		k := d.Keys
		switch {
		case msg.Note != "":
		case d.Replay == nil: // the first word: the keys, as the user bound them
			msg.Note = ReplayHelp(k)
		case msg.Ended && !d.Replay.Ended:
			msg.Note = fmt.Sprintf("end of the recording · %s plays it again · %s/%s seek back",
				k.ReplayStart.Help().Key, k.ReplayBack.Help().Key, k.ReplayBackFar.Help().Key)
		}
		d.Replay = &ReplayState{At: msg.At, Speed: msg.Speed, Paused: msg.Paused, Ended: msg.Ended, Start: msg.Start, End: msg.End}
		d.Now = msg.At // a seek moves it back
		if msg.Tick {  // a rebuilt core comes with its report
			m.diagnose()
		}
		if msg.Note != "" {
			m.flash(msg.Note)
			// a flash lasts 5 s of the screen's clock: of the recording's
			// here, so it lasts 5 s of the viewer's at any speed
			m.statusUntil = d.Now.Add(time.Duration(5 * max(msg.Speed, 1) * float64(time.Second)))
		}
		d.Version++
		return nil, true
	}
	return nil, false
}

// swapCore shows another core: every cache derived from the old one goes.
func (m *Model) swapCore(c *core.Monitor) {
	d := m.d
	d.Core, d.Store, d.Events, d.Logs = c, c.Store(), c.Events(), c.Logs()
	c.SetWindow(d.Window)
	d.invalidate()
	d.touched(&d.GPUVersion)
	d.touched(&d.EventsVersion)
	d.touched(&d.LogsVersion)
	d.ReportVersion++
	m.gen++
}

// replayKey turns a key into a replay control, in a replay, on any
// screen (after the screen's own keys: none share one, see screenKeys).
func (m *Model) replayKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	ctl := m.opts.Replay
	if ctl == nil {
		return nil, false
	}
	k := m.d.Keys
	if key.Matches(msg, k.Bench) {
		m.flash("benchmark: not in a replay (it would load the recorded endpoint now)")
		return nil, true
	}
	// + and - change the speed in a replay: + faster, - slower.
	controls := []struct {
		b key.Binding
		c ReplayKey
	}{
		{k.Pause, ReplayPause}, {k.ReplayStep, ReplayStep}, {k.ReplayBack, ReplayBack1m}, {k.ReplayForward, ReplayFwd1m},
		{k.ReplayBackFar, ReplayBack10m}, {k.ReplayForwardFar, ReplayFwd10m}, {k.ReplayNext, ReplayNext},
		{k.ReplayStart, ReplayStart}, {k.Slower, ReplayFaster}, {k.Faster, ReplaySlower},
	}
	for _, x := range controls {
		if key.Matches(msg, x.b) {
			c := x.c
			return func() tea.Msg { ctl(c); return nil }, true
		}
	}
	return nil, false
}

// replayBadge is the header's "REPLAY 14:02:11 (×10)".
func replayBadge(r *ReplayState) string {
	speed := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", r.Speed), "0"), ".")
	s := fmt.Sprintf(" REPLAY %s", r.At.Local().Format("15:04:05"))
	if !r.Start.IsZero() && !r.At.Before(r.Start) {
		// where it stands in the recording: "3m10s/12m0s"
		s += " " + fmtDur(r.At.Sub(r.Start).Truncate(time.Second))
		if !r.End.IsZero() && !r.End.Before(r.Start) {
			s += "/" + fmtDur(r.End.Sub(r.Start).Truncate(time.Second))
		}
	}
	s += fmt.Sprintf(" (×%s) ", speed)
	switch {
	case r.Ended:
		s += "END "
	case r.Paused:
		s += "PAUSED "
	}
	return s
}
