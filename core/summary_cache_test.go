package core

import (
	"reflect"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// freshSummary is the current run's summary worked out anew, whatever the
// core kept from before.
func freshSummary(m *Monitor, url string) model.RunSummary {
	e := m.eps[url]
	r := e.Current()
	kept, was := r.Summary, e.summarized
	e.summarized = summaryInputs{}
	m.summarize(e, m.now)
	fresh := r.Summary
	r.Summary, e.summarized = kept, was
	return fresh
}

// The core keeps a run's summary while nothing it is read from changed
// (issue 33: a fleet's refresh must not work out every replica's again).
// Whatever changed, the summary after the rules ran is the one worked out
// anew: new samples, a refresh with none, the log's per-request timings
// alone (no scrape sample, no peak moved), a restart; and the run that
// ended keeps the numbers of its own last samples, not the new run's.
func TestRunSummaryIsWorkedOutAgainWhenItsInputsChange(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(-10), 0.02)
	check := func(s float64, what string) {
		t.Helper()
		r := m.eps[url].Current()
		if r == nil || r.Ended != nil {
			return
		}
		if got, want := r.Summary, freshSummary(m, url); !reflect.DeepEqual(got, want) {
			t.Fatalf("at %gs (%s) the kept summary is stale:\n got %+v\nwant %+v", s, what, got, want)
		}
	}
	s := 0.0
	for ; s < 20; s++ {
		e.waiting = s
		m.Apply(e.scrape(at(s), 2+s/10, 100))
		if m.Tick(at(s)) {
			check(s, "scrapes")
		}
	}
	// A refresh with no sample (a failed scrape) changes nothing of it.
	m.Apply(down(at(s)))
	m.Tick(at(s))
	check(s, "a failed scrape")
	s++
	// The log's per-request timings change the latencies and nothing else
	// the core counts.
	// (They wait for the next scrape while scrapes come; with none for
	// 1.5 s, they run the rules once a second by themselves.)
	itlBefore := m.eps[url].Current().Summary.TPOTp50ms
	ran := 0
	for i := 0; i < 5; i++ {
		sm := model.NewSample(url, "", at(s), model.FromLog)
		sm.Observations = []model.Observation{{Time: at(s), Values: map[model.Latency]float64{model.TPOT: 0.5}}}
		m.Apply(sm)
		if m.Tick(at(s)) {
			ran++
			check(s, "the log's timings")
		}
		s++
	}
	if ran < 3 {
		t.Fatalf("the log's timings ran the rules %d times in 5 s without a scrape", ran)
	}
	if got := m.eps[url].Current().Summary.TPOTp50ms; reflect.DeepEqual(got, itlBefore) {
		t.Fatalf("the log's TPOT timings did not reach the summary: %v", got)
	}
	// Scrapes not followed by the rules (a second not over yet), then a
	// restart: the ended run's summary counts them, the new run starts
	// its own.
	for i := 0; i < 3; i++ {
		m.Apply(e.scrape(at(s), 9, 100))
		s++
	}
	fed := m.eps[url].runSamples
	e = newEngine("0.11.0", at(s-1), 0.02)
	for i := 0; i < 10; i++ {
		m.Apply(e.scrape(at(s), 1, 100))
		if m.Tick(at(s)) {
			check(s, "after the restart")
		}
		s++
	}
	runs := m.RunsOf(url)
	if len(runs) != 2 {
		t.Fatalf("want 2 runs, got %d", len(runs))
	}
	if got := runs[0].Summary.Samples; got != fed {
		t.Fatalf("the ended run's summary counts %d samples, want all %d it was fed", got, fed)
	}
	if got := runs[1].Summary.Samples; got != 10 {
		t.Fatalf("the new run's summary counts %d samples, want its own 10", got)
	}
	// A start banner the log announces (the store's windows restart):
	// the summary follows.
	for _, l := range banner(at(s), "{'max_num_seqs': 8}") {
		m.Apply(l)
	}
	for i := 0; i < 5; i++ {
		m.Apply(e.scrape(at(s), 3, 100))
		if m.Tick(at(s + 0.5)) {
			check(s, "after a banner")
		}
		s++
	}
}

// The cost the cache saves: with nothing new for an endpoint, the rules'
// next run works none of its summary out again (a mark left in it stays).
func TestRunSummaryKeptWithoutChange(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", at(-10), 0.02), 0, 5, 2, 100)
	r := m.eps[url].Current()
	r.Summary.WindowS = -1
	m.Evaluate(at(6))
	if r.Summary.WindowS != -1 {
		t.Fatalf("summary worked out again with nothing changed")
	}
}
