package core

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// llmtop run restarts the engine to apply a finding's change: the run that
// served ends as planned (llmtop stopped it), the next run carries the
// change and its command line, and with a benchmark at the same load on
// each, the comparison is the two benchmarks'.
func TestLaunchMarksTheAppliedRun(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(0), 0.02)
	run(m, e, 0, 40, 5, 100)
	load := &model.BenchLoad{Preset: "quick", Streams: 16, DurationS: 30, InputLen: 256, OutputLen: 128}
	m.SetBench(&diagnosis.Bench{URL: url, Start: at(0), End: at(30)}, model.RunBench{Time: at(30), Completed: 100, TTFTp99ms: model.Some(8100), TPOTp99ms: model.Some(30), OutputTPS: model.Some(1000), Load: load})
	m.Apply(model.Launch{Endpoint: url, Time: at(41), PID: 42, Cmdline: "llmtop sim --max-num-seqs 32",
		Applied: "applied: queue_backlog → --max-num-seqs 16 → 32"})
	for s := 41.0; s < 45; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	e2 := newEngine("0.11.0", at(45), 0.02)
	run(m, e2, 45, 40, 5, 100)
	m.SetBench(&diagnosis.Bench{URL: url, Start: at(50), End: at(80)}, model.RunBench{Time: at(80), Completed: 200, TTFTp99ms: model.Some(1200), TPOTp99ms: model.Some(32), OutputTPS: model.Some(1410), Load: load})
	runs := m.RunsOf(url)
	if len(runs) != 2 {
		t.Fatalf("runs: %+v", runs)
	}
	if runs[0].End != model.RunPlanned || !strings.Contains(runs[0].EndReason, "llmtop restarted it") {
		t.Errorf("run 1 ended %s (%s), want planned by llmtop", runs[0].End, runs[0].EndReason)
	}
	if runs[1].Applied != "applied: queue_backlog → --max-num-seqs 16 → 32" || runs[1].Config["launch.cmdline"] != "llmtop sim --max-num-seqs 32" {
		t.Errorf("run 2: applied %q, config %v", runs[1].Applied, runs[1].Config)
	}
	c := diagnosis.CompareRuns(runs[0], runs[1], diagnosis.DefaultConfig())
	want := "--max-num-seqs 16 → 32: TTFT p99 8.1 s → 1.2 s, TPOT p99 30 ms → 32 ms, output tok/s +41 % at 16 streams × 30s, 256 in / 128 out: better (TPOT p99 rose within its 50 ms SLO)"
	if c.SameLoad == nil || c.Verdict != want {
		t.Errorf("verdict\n got %q\nwant %q", c.Verdict, want)
	}
	// Past its SLO, the rise is a regression: the change is a trade.
	runs[1].Benches[0].TPOTp99ms = model.Some(80)
	if c = diagnosis.CompareRuns(runs[0], runs[1], diagnosis.DefaultConfig()); !strings.HasSuffix(c.Verdict, ": mixed") {
		t.Errorf("TPOT past its SLO: %q", c.Verdict)
	}
	// A different load is not compared.
	runs[1].Benches[0].Load = &model.BenchLoad{Preset: "quick", Streams: 32, DurationS: 30, InputLen: 256, OutputLen: 128}
	c = diagnosis.CompareRuns(runs[0], runs[1], diagnosis.DefaultConfig())
	if c.SameLoad != nil || !strings.Contains(c.Verdict, "not comparable: the benchmarks offered different loads") {
		t.Errorf("different loads: %q", c.Verdict)
	}
}

// The new run can be seen before llmtop's word of the restart comes, and
// its log's start banner carries whole seconds: it is marked all the same,
// and the run before ends as llmtop's planned restart.
func TestLaunchWordAfterTheNewRun(t *testing.T) {
	m := newMonitor()
	m.Apply(model.Event{Time: at(0), Source: "log", Kind: "x", Title: "log on"}) // a log is attached
	e := newEngine("0.11.0", at(0), 0.02)
	run(m, e, 0, 40, 5, 100)
	for _, l := range banner(at(44), "{'max_num_seqs': 32}") {
		m.Apply(l)
	}
	m.Apply(model.Launch{Endpoint: url, Time: at(44.6), PID: 7, Cmdline: "llmtop sim --max-num-seqs 32", Applied: "applied: queue_backlog → --max-num-seqs 16 → 32"})
	e2 := newEngine("0.11.0", at(44), 0.02)
	run(m, e2, 45, 5, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[1].Applied == "" || runs[0].End != model.RunPlanned || !strings.HasPrefix(runs[0].EndReason, "llmtop restarted it") {
		t.Fatalf("runs: %+v", runs)
	}
}

// llmtop run's first start: the core hears of it before any scrape, the
// endpoint is starting, its refused scrapes are "not answering yet", not a
// CRIT "scrape failed" (the first thing `llmtop run` showed was a red ✗),
// and the first run carries the exact command line. The same refusal on
// an endpoint nobody launched stays CRIT.
func TestFirstLaunchIsStartingNotAnOutage(t *testing.T) {
	m := New(Options{Window: time.Minute})
	m.Apply(model.Launch{Endpoint: url, Time: at(0), PID: 42, Cmdline: "llama-server -m m.gguf --port 8000"})
	if e := m.Endpoint(url); e == nil || e.Life != model.LifeStarting || !strings.Contains(e.LifeDetail, "launched by llmtop (pid 42)") {
		t.Fatalf("after the launch: %+v", e)
	}
	for s := 0.5; s < 3; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	failed := 0
	for i := 0; i < m.Events().Len(); i++ {
		if ev := m.Events().Newest(i); ev.Kind == "scrape_failed" {
			failed++
			if ev.Severity != model.SevInfo || !strings.HasPrefix(ev.Title, "not answering yet (engine starting)") {
				t.Errorf("refused while starting: %s %q", ev.Severity, ev.Title)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d scrape_failed events, want 1", failed)
	}
	run(m, newEngine("0.11.0", at(3), 0.02), 3, 10, 5, 100)
	e := m.Endpoint(url)
	if e.Life != model.LifeServing {
		t.Errorf("serving: life %s", e.Life)
	}
	if runs := m.RunsOf(url); len(runs) != 1 || runs[0].Config["launch.cmdline"] != "llama-server -m m.gguf --port 8000" {
		t.Errorf("runs %+v", runs)
	}

	other := New(Options{Endpoints: []string{url}, Window: time.Minute})
	other.Apply(down(at(0)))
	if ev := other.Events().Newest(0); ev.Kind != "scrape_failed" || ev.Severity != model.SevCrit {
		t.Errorf("not launched: %s %s %q", ev.Kind, ev.Severity, ev.Title)
	}
}
