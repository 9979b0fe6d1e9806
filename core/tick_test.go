package core

import (
	"slices"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// A finding opens and closes on the scrape that causes it, as the screen
// drives the core: each message applied, then Tick. The scrapes start on
// the beat but their answers come 1 or 3 ms after it, and the host's
// reading (every 3 s) comes before the scrape's answer in the same beat,
// stamped later than the scrape (the look takes longer than the request
// to start).
// Before, the second between two runs of the rules was counted from any
// input: a scrape answered 2 ms sooner than the last one was 998 ms after
// the last run and waited for the next, and a host reading ran the rules
// just before the scrape, which then waited too. The engine goes down at
// 11 s and is back at 31 s: endpoint_down (hold 10 s, closes at once) must
// open on the scrape at 21 s, ten seconds after the first failed one, and
// close on the scrape at 31 s. The host's readings wait for the scrape:
// the rules run once a refresh.
func TestFindingOpensAndClosesOnTheScrapeThatCausesIt(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(-100), 0.02)
	late := func(s float64) time.Time {
		if int(s)%2 == 1 {
			return at(s + 0.001)
		}
		return at(s + 0.003)
	}
	open := func() bool {
		for _, f := range m.Report().Findings {
			if f.ID == "endpoint_down" {
				return true
			}
		}
		return false
	}
	for s := 0.0; s < 40; s++ {
		if int(s)%3 == 0 {
			m.Apply(model.HostReading{Endpoint: url, Time: late(s).Add(time.Millisecond), Procs: []model.ProcUsage{{PID: 4000, Front: true}}})
			if m.Tick(late(s).Add(time.Millisecond)) && s > 0 {
				t.Errorf("at %gs the host's reading ran the rules: it waits for the scrape", s)
			}
		}
		if s >= 11 && s < 31 {
			m.Apply(down(late(s)))
		} else {
			m.Apply(e.scrape(late(s), 5, 100))
		}
		if !m.Tick(late(s)) {
			t.Errorf("at %gs the scrape did not run the rules", s)
		}
		want := s >= 21 && s < 31
		if got := open(); got != want {
			t.Errorf("after the scrape at %gs endpoint_down open %v, want %v", s, got, want)
		}
	}
}

// Two endpoints' answers to one refresh run the rules once. Without
// scrapes, the clock runs them a second after they last ran, and the
// other inputs once a second from 1.5 s after a scrape last ran them.
func TestRulesRunOncePerRefresh(t *testing.T) {
	const other = "http://127.0.0.1:8001"
	m := New(Options{Endpoints: []string{url, other}, Window: time.Minute})
	e := newEngine("0.11.0", at(-100), 0.02)
	runs := 0
	for s := 0.0; s < 10; s++ {
		m.Apply(e.scrape(at(s+0.002), 5, 100))
		if m.Tick(at(s + 0.002)) {
			runs++
		}
		sc := e.scrape(at(s+0.003), 5, 100)
		sc.Endpoint = other
		for i := range sc.Samples {
			sc.Samples[i].Endpoint = other
		}
		m.Apply(sc)
		if m.Tick(at(s+0.003)) && s > 0 { // (the first starts the second endpoint's run: at once)
			runs++
		}
	}
	if runs != 10 {
		t.Errorf("the rules ran %d times in 10 refreshes of two endpoints, want 10", runs)
	}
	host := func(s float64) bool {
		m.Apply(model.HostReading{Endpoint: url, Time: at(s), Procs: []model.ProcUsage{{PID: 4000, Front: true, CPU: model.Some(s)}}})
		return m.Tick(at(s))
	}
	// No scrape any more. A host reading soon after the last refresh
	// waits; the second endpoint's last answer is judged at the next Tick
	// half a second after the refresh, the clock's here.
	if host(9.4) {
		t.Error("a host reading 0.4 s after the last refresh ran the rules")
	}
	if !m.Tick(at(9.9)) {
		t.Error("the second endpoint's last answer was not judged at the clock 0.9 s after the refresh")
	}
	if m.Tick(at(10.5)) {
		t.Error("the clock ran the rules with nothing changed")
	}
	// the host's readings every half second run them once a second, from
	// 1.5 s after a scrape last ran them
	var ran []float64
	for s := 11.0; s < 15; s += 0.5 {
		if host(s) {
			ran = append(ran, s)
		}
	}
	if want := []float64{11.5, 12.5, 13.5, 14.5}; !slices.Equal(ran, want) {
		t.Errorf("without scrapes the host's readings ran the rules at %v s, want %v", ran, want)
	}
}

// The clock (a Tick with no input since the last) runs the rules a second
// after they last ran when the data changed, a scrape's run or not: the
// screen's clock ticks in a second without a scrape, and what came between
// (the host's reading, the log's lines) is judged then.
func TestClockRunsTheRulesASecondOn(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(-100), 0.02)
	run(m, e, 0, 5, 5, 100)
	m.Apply(model.HostReading{Endpoint: url, Time: at(4.5), Procs: []model.ProcUsage{{PID: 4000, Front: true}}})
	if m.Tick(at(4.5)) {
		t.Error("the host's reading half a second after the scrape ran the rules")
	}
	if m.Tick(at(4.9)) {
		t.Error("the clock ran the rules 0.9 s after they last ran")
	}
	if !m.Tick(at(5.2)) {
		t.Error("the clock did not run the rules 1.2 s after they last ran, the host's reading unjudged")
	}
}
