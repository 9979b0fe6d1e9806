package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/beat"
)

// The screen's clock moves the header (uptime, staleness, a flash's end)
// and lets the rules advance when no data comes. It is drawn at least once
// a second; it never costs a frame of its own while data does that.
//
// A frame drawn for new data pushes the clock's next tick back by
// clockAfterData: while the sources deliver every second, their frames move
// the clock (the data's time is the screen's) and the clock's timer does not
// fire, so an idle box costs one frame a second rather than two. When data
// stops (an endpoint down, a paused screen, a refresh slower than a
// second) the clock ticks every second again.
//
// The clock ticks on the beat grid (package beat), at whole seconds, where
// the scrape, the log's poll and the host's look are due too: its tick
// falls in their wake-up rather than making one of its own.

// tickMsg moves the screen's clock to its time (tests send it directly).
type tickMsg time.Time

// clockMsg is the clock's own tick: a tickMsg that re-arms the clock.
type clockMsg time.Time

// clockAfterData is how long after a data frame the clock ticks at the
// least (at the first whole second after that): longer than a one-second
// refresh with its jitter, so steady data keeps it quiet.
const clockAfterData = 1250 * time.Millisecond

// screenClock is one timer that is re-armed, never replaced: one goroutine
// waits on it at a time (tests give it a channel and a reset of their own).
type screenClock struct {
	c     <-chan time.Time
	reset func(time.Duration) bool
}

// startClock arms the clock and returns the command that waits for it.
func (m *Model) startClock() tea.Cmd {
	if m.clock.c == nil {
		t := time.NewTimer(m.clockWait(0))
		m.clock = screenClock{c: t.C, reset: t.Reset}
	}
	return m.clock.wait
}

// wait blocks until the clock ticks (a tea.Cmd).
func (c screenClock) wait() tea.Msg { return clockMsg(<-c.c) }

// clockTick moves the screen to t. The clock moves the header (uptime,
// STALE) only: the state and the series stay cached until data changes, so
// an idle second costs one cheap frame. The diagnosis advances on the
// clock too (in the core, never while drawing).
func (m *Model) clockTick(t time.Time) {
	if t.After(m.d.Now) {
		m.d.Now = t
	}
	m.diagnose()
}

// clockAgain re-arms the clock after it ticked.
func (m *Model) clockAgain() tea.Cmd {
	if m.clock.c == nil {
		return nil
	}
	m.clock.reset(m.clockWait(0))
	return m.clock.wait
}

// clockWait is how long from now to the first whole second at least least
// away: the clock's next tick on the beat grid.
func (m *Model) clockWait(least time.Duration) time.Duration {
	now := m.wall()
	return beat.After(now, least, time.Second).Sub(now)
}

// dataDrawn pushes the clock back after a frame of new data that showed the
// present (a scrape's time is the screen's). A frame of log lines alone does
// not move the clock, so it leaves the clock's tick where it was: the
// header's "down 23 s" keeps counting while only the log speaks. A replay's
// clock is the recording's.
func (m *Model) dataDrawn() {
	if m.clock.c == nil || m.opts.Replay != nil {
		return
	}
	if lag := m.wall().Sub(m.d.Now); lag > -presentLag && lag < presentLag {
		m.clock.reset(m.clockWait(clockAfterData))
	}
}

// presentLag is how far the screen's clock may be from the wall's for a
// frame to count as showing the present.
const presentLag = 250 * time.Millisecond
