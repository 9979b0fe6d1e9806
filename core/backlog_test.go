package core

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// history marks lines as a log's backlog without timestamps of their own
// (llama-server's): what the log source sends for a file's last 64 KiB.
func history(ls ...model.LogLine) model.LogLines {
	for i := range ls {
		ls[i].Backlog = true
		if ls[i].Event != nil {
			e := *ls[i].Event
			e.Backlog, e.Untimed = true, true
			ls[i].Event = &e
		}
	}
	return ls
}

// The backlog of a log attached after the engine started, read a moment
// after the first scrape: its start banners, clean shutdown and CUDA OOM
// happened before llmtop watched. They start no run and end none (the
// screen said RESTARTED and "run 1 lasted 0ms"), and the OOM is history of
// an engine serving now, dated "before llmtop started".
func TestBacklogStartsAndEndsNoRun(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", at(-3600), 0.02)
	m.Apply(e.scrape(at(0), 5, 100))
	m.Tick(at(0))
	read := at(0.05)
	var bl []model.LogLine
	bl = append(bl, banner(read, "{'max_num_seqs': 64}")...)
	bl = append(bl, shutdown(read)...)
	bl = append(bl, banner(read, "{'max_num_seqs': 128}")...)
	bl = append(bl, logEvent(read, "torch_cuda_oom", "", model.SevCrit, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", nil))
	m.Apply(history(bl...))
	run(m, e, 1, 20, 5, 100)

	ep := m.Endpoint(url)
	if runs := m.RunsOf(url); len(runs) != 1 || runs[0].StartedBy != "first seen; "+pastBanner || runs[0].Ended != nil {
		t.Fatalf("runs %+v: want one, begun when first seen (its banner before llmtop started) and still running", runs)
	}
	if ep.Life != model.LifeServing {
		t.Errorf("life %s (%s), want serving", ep.Life, ep.LifeDetail)
	}
	// What the backlog's last process said of its configuration is the
	// run first seen's (llama.cpp's slot layout is only in its start-up
	// lines).
	if c := m.RunsOf(url)[0].Config; c["args.max_num_seqs"] != "128" {
		t.Errorf("run 1 config %v: want the backlog's last start's --max-num-seqs 128", c)
	}
	for i := 0; i < m.Events().Len(); i++ {
		if x := m.Events().Newest(i); x.Kind == model.KindRestart {
			t.Errorf("restart event %q from the backlog", x.Title)
		}
	}
	var oom bool
	for _, f := range m.Report().Findings {
		if f.ID != "cuda_oom" {
			continue
		}
		oom = true
		if f.Severity != model.SevInfo || !strings.HasPrefix(f.Evidence[0].Text, model.BeforeStart) {
			t.Errorf("cuda_oom %s %+v: the backlog's OOM is history of an engine serving now, dated %q", f.Severity, f.Evidence, model.BeforeStart)
		}
	}
	if !oom {
		t.Errorf("findings %s: the backlog's CUDA OOM is still told", findingIDs(m.Report().Findings))
	}
}

// The same backlog with the engine down: its last crash is why, a critical
// finding dated "before llmtop started"; no run is made up from it.
func TestBacklogCrashExplainsAnEngineThatIsDown(t *testing.T) {
	m := newMonitor()
	m.Apply(down(at(0)))
	m.Apply(history(append(banner(at(0.05), "--max-num-seqs 64"),
		logEvent(at(0.05), "torch_cuda_oom", "", model.SevCrit, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", nil))...))
	for s := 1.0; s <= 5; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	if runs := m.RunsOf(url); len(runs) != 0 {
		t.Errorf("runs %+v: a backlog's banner is no run seen by llmtop", runs)
	}
	got := ""
	for _, f := range m.Report().Findings {
		if f.ID == "cuda_oom" {
			got = f.Severity.String() + " " + f.Evidence[0].Text
		}
	}
	if !strings.HasPrefix(got, "crit "+model.BeforeStart) {
		t.Errorf("cuda_oom %q, want critical, dated %q (findings %s)", got, model.BeforeStart, findingIDs(m.Report().Findings))
	}
}

// A backlog read before the first scrape: its last process's configuration
// reaches the run the scrape starts; a backlog ending in a shutdown gives
// none (that process is gone).
func TestBacklogConfigBeforeTheFirstScrape(t *testing.T) {
	for _, c := range []struct {
		name string
		tail []model.LogLine
		want string
	}{
		{"serving", nil, "128"},
		{"stopped since", shutdown(at(0)), ""},
	} {
		m := newMonitor()
		bl := append(banner(at(0), "{'max_num_seqs': 128}"), c.tail...)
		m.Apply(history(bl...))
		e := newEngine("0.11.0", at(-3600), 0.02)
		run(m, e, 1, 3, 5, 100)
		runs := m.RunsOf(url)
		if len(runs) != 1 || runs[0].Config["args.max_num_seqs"] != c.want {
			t.Errorf("%s: runs %+v, want one with args.max_num_seqs %q", c.name, runs, c.want)
		}
	}
}

// Ollama restarted a moment after llmtop attached to its log (2.4 s, the
// real engines' TestRunsAcrossOllamaRestart): the backlog had the first
// process's banner, so the new banner is a new run, not the first-seen
// run's own banner read late.
func TestBannerAfterABacklogBannerIsANewRun(t *testing.T) {
	m := newMonitor()
	m.Apply(history(banner(at(0), "{'max_num_seqs': 16}")...))
	e := newEngine("0.11.0", at(-5), 0.02)
	run(m, e, 1, 2, 5, 100)
	m.Apply(model.LogLines(shutdown(at(3))))
	m.Apply(model.LogLines(banner(at(3.5), "{'max_num_seqs': 32}")))
	e2 := newEngine("0.11.0", at(3.5), 0.02)
	run(m, e2, 4, 3, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || !strings.Contains(runs[0].StartedBy, pastBanner) || runs[1].Config["args.max_num_seqs"] != "32" {
		t.Fatalf("runs %+v: want run 1 (its banner before llmtop) ended planned, run 2 with --max-num-seqs 32", runs)
	}
}
