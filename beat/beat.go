// Package beat puts the monitor's periodic work on one grid of instants, so
// that what is due in the same second wakes the process once.
//
// Each wake-up of an idle Go process costs more than the little work the
// monitor does in it: the thread that waits for timers wakes, and so does
// the runtime's monitor thread (sysmon), which sleeps until the next timer
// and, after a system call, polls every 20 µs while the work runs. The
// scrape, the log's poll, the host's reading and the screen's clock each
// had a timer of its own, each with the phase of the moment it started, so
// a one-second refresh woke llmtop four or five times a second (make
// monitor-cost). On the grid they are due at the same instant and run in
// one wake-up.
//
// The grid is the wall clock's whole multiples of a period (for a second:
// every whole second), so it needs no shared state: every timer computed
// from it, in any goroutine, falls on the same instants. Periods that
// divide one another (250 ms, 1 s, 3 s, 5 s) share their instants.
package beat

import "time"

// Next is the first instant of the grid of every that comes after now (an
// instant on the grid is the next one). every ≤ 0 gives now.
func Next(now time.Time, every time.Duration) time.Time {
	if every <= 0 {
		return now
	}
	return now.Truncate(every).Add(every)
}

// Until is how long from now to Next(now, every): a timer set to it fires on
// the grid.
func Until(now time.Time, every time.Duration) time.Duration {
	return Next(now, every).Sub(now)
}

// After is the first instant of the grid of every at least min after now:
// the next beat that leaves some room (a poll that just ran at an odd
// moment waits for a beat at least min away rather than running again a
// few milliseconds later).
func After(now time.Time, min, every time.Duration) time.Time {
	return Next(now.Add(min), every)
}
