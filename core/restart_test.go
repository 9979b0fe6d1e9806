package core

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// outages lists the scrape-failed events a person would read as the
// engine being down (critical ones).
func outages(m *Monitor) []string {
	var out []string
	for i := 0; i < m.Events().Len(); i++ {
		if x := m.Events().Newest(i); x.Kind == "scrape_failed" && x.Severity == model.SevCrit {
			out = append(out, x.Title)
		}
	}
	return out
}

// llmtop run applies a change from the screen: it tells the core before it
// stops the engine, the engine drains (its port closed, its shutdown lines
// in the log) and the new process takes a while to listen. That whole
// window reads "restarting (applied …)", never an outage; only the first
// start was told before, and the refused scrapes of the restart were
// critical "scrape failed" events. A crash llmtop did not cause afterwards
// is an outage again.
func TestRestartLlmtopPerformsIsNoOutage(t *testing.T) {
	const applied = "applied: ttft_queueing → --max-num-seqs 16 → 32"
	m := newMonitor()
	m.Apply(model.Launch{Endpoint: url, Time: at(0), PID: 41, Cmdline: "vllm serve m --max-num-seqs 16"})
	m.Apply(model.Event{Time: at(0), Source: "log", Kind: "x", Title: "log on"}) // a log is attached
	e := newEngine("0.11.0", at(0), 0.02)
	run(m, e, 1, 40, 5, 100)

	m.Apply(model.Launch{Endpoint: url, Time: at(41), PID: 41, Cmdline: "vllm serve m --max-num-seqs 16", Applied: applied, Restarting: true})
	for s := 41.0; s < 60; s++ { // the drain: SIGTERM closed the port, up to --stop-timeout
		m.Apply(down(at(s)))
		if s == 50 {
			m.Apply(model.LogLines(shutdown(at(s))))
		}
		m.Tick(at(s))
		if ep := m.Endpoint(url); ep.Life != model.LifeStarting || ep.LifeDetail != "restarting ("+applied+")" {
			t.Fatalf("at %vs: life %s %q, want starting %q", s, ep.Life, ep.LifeDetail, "restarting ("+applied+")")
		}
	}
	m.Apply(model.Launch{Endpoint: url, Time: at(41), PID: 42, Cmdline: "vllm serve m --max-num-seqs 32", Applied: applied})
	for s := 60.0; s < 70; s++ { // the new process loads before it listens
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	if got := outages(m); len(got) > 0 {
		t.Errorf("outage events during llmtop's own restart: %q", got)
	}
	if st := m.Endpoint(url).Status(at(69), 0, 0); st != StatusStarting {
		t.Errorf("status %s during the restart, want %s", st, StatusStarting)
	}
	for _, f := range m.Report().Findings {
		if f.Severity == model.SevCrit {
			t.Errorf("critical finding %s %q during llmtop's own restart", f.ID, f.Title)
		}
	}
	e2 := newEngine("0.11.0", at(69), 0.02)
	run(m, e2, 70, 20, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || !strings.HasPrefix(runs[0].EndReason, "llmtop restarted it: ") || runs[1].Applied != applied {
		t.Fatalf("runs %+v: want the first ended planned by llmtop's restart, the second marked with the change", runs)
	}

	// The new process dies without llmtop: an outage.
	for s := 90.0; s < 95; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	if got := outages(m); len(got) != 1 {
		t.Errorf("outage events after a crash llmtop did not cause: %q, want one", got)
	}
}

// The restart stopped the engine but could not start it again: said, and
// the engine not answering is no longer "restarting".
func TestRestartThatFailedIsSaid(t *testing.T) {
	m := newMonitor()
	m.Apply(model.Launch{Endpoint: url, Time: at(0), PID: 41, Cmdline: "vllm serve m"})
	e := newEngine("0.11.0", at(0), 0.02)
	run(m, e, 1, 10, 5, 100)
	m.Apply(model.Launch{Endpoint: url, Time: at(11), PID: 41, Applied: "applied: x → --y 2", Restarting: true})
	m.Apply(down(at(12)))
	m.Apply(model.Launch{Endpoint: url, Time: at(13), Applied: "applied: x → --y 2", Failed: "exec: \"vllm\": executable file not found in $PATH"})
	m.Apply(down(at(14)))
	m.Tick(at(14))
	ep := m.Endpoint(url)
	if ep.Life != model.LifeStopped || !strings.Contains(ep.LifeDetail, "could not start it again") {
		t.Errorf("life %s %q", ep.Life, ep.LifeDetail)
	}
	if x := m.Events().Newest(0); x.Kind != "restart_failed" && m.Events().Newest(1).Kind != "restart_failed" {
		t.Errorf("newest events %q, %q: want the failed restart said", x.Title, m.Events().Newest(1).Title)
	}
}
