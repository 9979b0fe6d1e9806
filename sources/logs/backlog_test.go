package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// realTwoRuns is the real llama-server's log of two runs, six requests each
// (testdata/backlog/SOURCE.md).
const realTwoRuns = "testdata/backlog/llama-server-two-runs.log"

// backlog and live split what a collector got into the lines marked
// history and the others (llmtop's own notices left out).
func (c *collector) split() (backlog, live []model.LogLine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.msgs {
		if l, ok := m.(model.LogLine); ok && !strings.HasPrefix(l.Text, "llmtop: ") {
			if l.Backlog {
				backlog = append(backlog, l)
			} else {
				live = append(live, l)
			}
		}
	}
	return backlog, live
}

// Attaching to a log written earlier: its last lines are shown, marked as
// history, their start banners and requests never read as now (they made
// a RESTARTED "run 1 lasted 0ms" and 19 000 req/s); what is appended after
// is now.
func TestFileBacklogIsHistory(t *testing.T) {
	old, err := os.ReadFile(realTwoRuns)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "llama-server.log")
	// the log ends inside a line still being written: that line is now
	appendTo(t, path, string(old)+"0.05.100.000 I slot print_timing: id  0 | task 90 | prompt eval time =       1.00 ms /     8 tokens (")
	c := startFile(t, path, 10*time.Millisecond)
	n := strings.Count(string(old), "\n")
	waitFor(t, "the backlog", func() bool { b, _ := c.split(); return len(b) == n })
	b, live := c.split()
	if len(live) != 0 || len(c.samples()) != 0 {
		t.Fatalf("before anything was appended: %d live lines, %d samples; want none (the backlog's 12 requests are no rate of now)", len(live), len(c.samples()))
	}
	banners := 0
	for _, l := range b {
		if l.Event == nil {
			continue
		}
		if !l.Event.Backlog || !l.Event.Untimed {
			t.Errorf("backlog event %q: Backlog %v Untimed %v, want both (llama-server's lines carry no clock time)", l.Event.Title, l.Event.Backlog, l.Event.Untimed)
		}
		if l.Event.Fields["phase"] == model.PhaseStart {
			banners++
		}
	}
	if banners != 2 {
		t.Errorf("%d start banners in the backlog, want the two runs'", banners)
	}
	if b[0].Text != strings.SplitN(string(old), "\n", 2)[0] {
		t.Errorf("first line %q: the whole backlog is shown", b[0].Text)
	}

	appendTo(t, path, " 8000.00 tokens per second)\n"+
		"0.05.100.100 I slot print_timing: id  0 | task 90 |        eval time =      24.00 ms /    32 tokens (    0.75 ms per token,  1333.33 tokens per second)\n"+
		"0.05.100.200 I slot print_timing: id  0 | task 90 |       total time =      25.00 ms /    40 tokens\n")
	waitFor(t, "the appended request's sample", func() bool { return len(c.samples()) > 0 })
	_, live = c.split()
	if len(live) != 3 || !strings.Contains(live[0].Text, "task 90 | prompt eval time") {
		t.Errorf("live lines %q: want the line being written when llmtop attached, and the two appended", texts(live))
	}
}

func texts(ls []model.LogLine) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Text)
	}
	return out
}

// A log that appears after llmtop started, one rewritten from the start,
// and a rotated one's new file are all written now: no backlog.
func TestFileWrittenAfterStartIsNow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vllm.log")
	c := startFile(t, path, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	appendTo(t, path, "INFO 11-26 23:00:00 [api_server.py:1] vLLM API server version 0.11.0\n")
	waitFor(t, "the new file's line", func() bool { _, l := c.split(); return len(l) == 1 })
	if b, _ := c.split(); len(b) != 0 {
		t.Errorf("a file created while llmtop watched has no backlog: %q", texts(b))
	}
}

// docker and kubectl logs --timestamps: the stamp is each line's time and
// is cut before the line is shown and matched; what the command prints
// stamped before it started is history, with its own time.
func TestCommandStampsTellBacklog(t *testing.T) {
	start := time.Now()
	before := start.Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	after := start.Add(time.Second).UTC().Format(time.RFC3339Nano)
	c := &collector{}
	opts := unlimited
	opts.StampPrefix = true
	src := NewSource(opts, c.send)
	src.since = start
	src.Line([]byte(before + " INFO 11-26 22:00:00 [api_server.py:1] vLLM API server version 0.11.0"))
	src.Line([]byte(after + " INFO 11-26 23:00:01 [api_server.py:1] vLLM API server version 0.11.0"))
	src.Line([]byte("no stamp at all"))
	ctx, cancel := context.WithCancel(context.Background())
	go src.Run(ctx)
	defer cancel()
	waitFor(t, "three lines", func() bool { return len(c.lines()) == 3 })
	b, live := c.split()
	if len(b) != 1 || len(live) != 2 {
		t.Fatalf("backlog %q, live %q: want the line stamped before the start as history", texts(b), texts(live))
	}
	if !strings.HasPrefix(b[0].Text, "INFO 11-26 22:00:00") || !b[0].Time.Equal(start.Add(-time.Hour)) {
		t.Errorf("history line %q at %v: want the stamp cut and its time kept", b[0].Text, b[0].Time)
	}
	if ev := b[0].Event; ev == nil || !ev.Backlog || ev.Untimed || ev.Fields["phase"] != model.PhaseStart {
		t.Errorf("history banner event %+v: want a start banner from the backlog, dated by its stamp", ev)
	}
	if ev := live[0].Event; ev == nil || ev.Backlog {
		t.Errorf("live banner event %+v: want a start now", ev)
	}
}

// vLLM's and Ollama's lines carry their own time (LOG-PATTERNS.md): a
// backlog's events are dated by it, not "before llmtop started".
func TestFileBacklogKeepsTheLinesOwnTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.log")
	appendTo(t, path, "INFO 11-26 09:00:01 [api_server.py:1] vLLM API server version 0.11.0\n"+
		`time=2026-11-26T09:00:02.000Z level=INFO source=routes.go:1500 msg="Listening on 127.0.0.1:11434 (version 0.17.4)"`+"\n")
	c := &collector{}
	opts := unlimited
	opts.Location = time.UTC
	src := NewSource(opts, c.send)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	go FollowFile(ctx, path, FileOptions{Poll: 10 * time.Millisecond}, src)
	waitFor(t, "two lines", func() bool { b, _ := c.split(); return len(b) == 2 })
	b, _ := c.split()
	for i, want := range []time.Time{time.Date(2026, 11, 26, 9, 0, 1, 0, time.UTC), time.Date(2026, 11, 26, 9, 0, 2, 0, time.UTC)} {
		ev := b[i].Event
		if ev == nil || !ev.Backlog || ev.Untimed || !ev.Time.Equal(want) || ev.Fields["phase"] == "" {
			t.Errorf("line %q: event %+v, want a backlog lifecycle event at its own %v", b[i].Text, ev, want)
		}
	}
}

// The log of the engine llmtop itself launched (llmtop run) was written
// since llmtop started: its first lines are this run's start, not history.
func TestLaunchedLogHasNoHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.log")
	appendTo(t, path, "INFO 11-26 23:00:00 [api_server.py:1] vLLM API server version 0.11.0\n")
	c := startFileWith(t, path, FileOptions{Poll: 10 * time.Millisecond, NoHistory: true})
	waitFor(t, "the line", func() bool { _, l := c.split(); return len(l) == 1 })
	if b, _ := c.split(); len(b) != 0 {
		t.Errorf("history %q in a log llmtop's own engine wrote", texts(b))
	}
}
