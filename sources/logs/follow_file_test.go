package logs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/beat"
)

// startFile follows path with a fast poll and returns the collector.
func startFile(t *testing.T, path string, poll time.Duration) *collector {
	t.Helper()
	return startFileWith(t, path, FileOptions{Poll: poll})
}

// startFileWith follows path with fo and returns the collector.
func startFileWith(t *testing.T, path string, fo FileOptions) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{}
	src := NewSource(unlimited, c.send)
	done := make(chan struct{})
	go src.Run(ctx)
	go func() { FollowFile(ctx, path, fo, src); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("FollowFile did not stop")
		}
	})
	return c
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestFollowFileAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vllm.log")
	appendTo(t, path, "old 1\nold 2\n")
	c := startFile(t, path, 10*time.Millisecond)
	waitFor(t, "backlog", func() bool { return len(c.plain()) == 2 })
	appendTo(t, path, "new 1\nnew ")
	appendTo(t, path, "2\n")
	want := []string{"old 1", "old 2", "new 1", "new 2"}
	waitFor(t, "appended lines", func() bool { return equalLines(c.plain(), want) })
}

func TestFollowFileBacklogStartsAtALineBoundary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.log")
	var b strings.Builder
	for i := 0; i < 20000; i++ { // ~200 KiB, more than the 64 KiB backlog
		fmt.Fprintf(&b, "line %05d\n", i)
	}
	appendTo(t, path, b.String())
	c := startFile(t, path, 10*time.Millisecond)
	waitFor(t, "last line", func() bool { l := c.plain(); return len(l) > 0 && l[len(l)-1] == "line 19999" })
	for _, l := range c.plain() {
		if len(l) != len("line 00000") {
			t.Fatalf("partial backlog line %q", l)
		}
	}
	if n := len(c.plain()); n > 6000 || n < 5000 {
		t.Errorf("backlog of %d lines, want about 64 KiB worth", n)
	}
}

func TestFollowFileNotExistingYet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.log")
	c := startFile(t, path, 10*time.Millisecond)
	waitFor(t, "waiting notice", func() bool { return len(c.events("log_waiting")) == 1 })
	appendTo(t, path, "hello\n")
	waitFor(t, "first line", func() bool { return equalLines(c.plain(), []string{"hello"}) })
}

func TestFollowFileTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.log")
	c := startFile(t, path, 10*time.Millisecond)
	appendTo(t, path, "a\nb\n")
	waitFor(t, "a b", func() bool { return len(c.plain()) == 2 })
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "truncate notice", func() bool { return len(c.events("log_truncated")) == 1 })
	appendTo(t, path, "c\n")
	waitFor(t, "c", func() bool { return equalLines(c.plain(), []string{"a", "b", "c"}) })
}

// A truncate followed by a longer rewrite between two polls leaves the size
// larger than the offset; the changed first bytes give it away.
func TestFollowFileTruncateAndLongerRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.log")
	c := startFile(t, path, 300*time.Millisecond)
	appendTo(t, path, "first\n")
	waitFor(t, "first", func() bool { return len(c.plain()) == 1 })
	time.Sleep(50 * time.Millisecond) // let the follower remember the head
	if err := os.WriteFile(path, []byte("second run line 1\nsecond run line 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"first", "second run line 1", "second run line 2"}
	waitFor(t, "rewritten lines", func() bool { return equalLines(c.plain(), want) })
}

func TestFollowFileRenameAndRecreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.log")
	c := startFile(t, path, 10*time.Millisecond)
	old, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.WriteString("before rotation\n")
	waitFor(t, "first line", func() bool { return len(c.plain()) == 1 })
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	old.WriteString("written to the renamed file\n") // the writer has not reopened yet
	waitFor(t, "line in the renamed file", func() bool { return len(c.plain()) == 2 })
	appendTo(t, path, "after rotation\n")
	want := []string{"before rotation", "written to the renamed file", "after rotation"}
	waitFor(t, "new file", func() bool { return equalLines(c.plain(), want) })
	if len(c.events("log_rotated")) != 1 {
		t.Error("rotation not reported")
	}
}

func TestFollowFileDeleteAndComeBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.log")
	c := startFile(t, path, 10*time.Millisecond)
	appendTo(t, path, "one\n")
	waitFor(t, "one", func() bool { return len(c.plain()) == 1 })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "removed notice", func() bool { return len(c.events("log_removed")) == 1 })
	appendTo(t, path, "two\n")
	waitFor(t, "two", func() bool { return equalLines(c.plain(), []string{"one", "two"}) })
}

// A writer that dribbles a line out byte by byte across many polls still
// gives whole lines.
func TestFollowFileSlowWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	c := startFile(t, path, 5*time.Millisecond)
	line := "INFO 08-14 12:00:01 [loggers.py:259] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%\n"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < len(line); i += 20 {
		f.WriteString(line[i:min(i+20, len(line))])
		time.Sleep(8 * time.Millisecond)
	}
	waitFor(t, "whole line", func() bool { return len(c.plain()) == 1 })
	if got := c.plain()[0]; got != strings.TrimSuffix(line, "\n") {
		t.Errorf("got %q", got)
	}
	waitFor(t, "its sample", func() bool { return len(c.samples()) == 1 })
}

func TestFollowFileBurst100k(t *testing.T) {
	path := filepath.Join(t.TempDir(), "burst.log")
	c := startFile(t, path, 10*time.Millisecond)
	waitFor(t, "follower up", func() bool { return len(c.events("log_waiting")) == 1 })
	var b strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, "burst line %06d\n", i)
	}
	appendTo(t, path, b.String())
	waitFor(t, "100k lines", func() bool { return len(c.plain()) == 100000 })
	for i, l := range c.plain() {
		if l != fmt.Sprintf("burst line %06d", i) {
			t.Fatalf("line %d = %q", i, l)
		}
	}
}

// On the beat grid (FileOptions.Beat) a file is read at the beats and not
// watched: a line written just after a beat is not read before the next
// one (inotify would have it read at once), and it is read then.
func TestFollowFileOnTheBeat(t *testing.T) {
	const every = time.Second
	path := filepath.Join(t.TempDir(), "vllm.log")
	appendTo(t, path, "old\n")
	c := startFileWith(t, path, FileOptions{Beat: every})
	waitFor(t, "backlog", func() bool { return len(c.plain()) == 1 })
	time.Sleep(beat.Until(time.Now(), every) + 20*time.Millisecond) // just after a beat
	wrote := time.Now()
	appendTo(t, path, "new\n")
	next := beat.Next(wrote, every)
	time.Sleep(time.Until(next.Add(-80 * time.Millisecond)))
	early := len(c.plain())
	if time.Now().Before(next) && early != 1 { // a busy machine may have slept past the beat: nothing to judge then
		t.Fatalf("the line written at %s was read before the beat at %s", wrote.Format("15:04:05.000"), next.Format("15:04:05.000"))
	}
	waitFor(t, "the line, at the beat", func() bool { return equalLines(c.plain(), []string{"old", "new"}) })
}

// The rate's window closes on the grid too: at the first whole second at
// least half a second away; without a beat, a second after the lines came.
func TestSourceWindowOnTheBeat(t *testing.T) {
	base := time.Date(2026, 11, 26, 23, 0, 7, 0, time.UTC)
	on := NewSource(Options{Beat: time.Second}, func(any) {})
	for _, c := range []struct{ now, want time.Duration }{
		{10 * time.Millisecond, 990 * time.Millisecond},
		{700 * time.Millisecond, 1300 * time.Millisecond},
	} {
		if got := on.windowWait(base.Add(c.now)); got != c.want {
			t.Errorf("window from +%v: %v, want %v", c.now, got, c.want)
		}
	}
	off := NewSource(Options{}, func(any) {})
	if got := off.windowWait(base.Add(700 * time.Millisecond)); got != time.Second {
		t.Errorf("window without a beat: %v, want 1s", got)
	}
}
