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
// reading (every 3 s) comes before the scrape's answer in the same beat.
// Before, the second between two runs of the rules was counted from any
// input: a scrape answered 2 ms sooner than the last one was 998 ms after
// the last run and waited for the next, and a host reading ran the rules
// just before the scrape, which then waited too. The engine goes down at
// 11 s and is back at 31 s: endpoint_down (hold 10 s, closes at once) must
// open on the scrape at 21 s, ten seconds after the first failed one, and
// close on the scrape at 31 s. The host's readings, less than a second
// after the last run, wait for the scrape.
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
			m.Apply(model.HostReading{Endpoint: url, Time: at(s + 0.0005), Procs: []model.ProcUsage{{PID: 4000, Front: true}}})
			if m.Tick(at(s+0.0005)) && s > 0 {
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

// Two endpoints' answers to one refresh run the rules once; without
// scrapes the other inputs run them once a second.
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
		sc := e.scrape(at(s+0.004), 5, 100)
		sc.Endpoint = other
		for i := range sc.Samples {
			sc.Samples[i].Endpoint = other
		}
		m.Apply(sc)
		if m.Tick(at(s+0.004)) && s > 0 { // (the first starts the second endpoint's run: at once)
			runs++
		}
	}
	if runs != 10 {
		t.Errorf("the rules ran %d times in 10 refreshes of two endpoints, want 10", runs)
	}
	// No scrape any more: the host's readings every half second. The first
	// runs the rules for the second endpoint's last answer (judged with
	// the next input), then they run them once a second.
	var ran []float64
	for s := 10.0; s < 15; s += 0.5 {
		m.Apply(model.HostReading{Endpoint: url, Time: at(s), Procs: []model.ProcUsage{{PID: 4000, Front: true, CPU: model.Some(s)}}})
		if m.Tick(at(s)) {
			ran = append(ran, s)
		}
	}
	if want := []float64{10, 11, 12, 13, 14}; !slices.Equal(ran, want) {
		t.Errorf("without scrapes the host's readings ran the rules at %v s, want %v", ran, want)
	}
}
