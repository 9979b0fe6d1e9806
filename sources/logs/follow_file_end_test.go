package logs

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// startFileAt follows path with the given backlog and returns the collector.
func startFileAt(t *testing.T, path string, backlog int64) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{}
	src := NewSource(unlimited, c.send)
	done := make(chan struct{})
	go src.Run(ctx)
	go func() {
		FollowFile(ctx, path, FileOptions{Poll: 10 * time.Millisecond, Backlog: backlog}, src)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return c
}

// Backlog < 0 starts at the end: nothing already in the file is read.
func TestFollowFileNegativeBacklogStartsAtTheEnd(t *testing.T) {
	for _, c := range []struct {
		name, before, after string
		want                []string
	}{
		{"whole lines", "old 1\nold 2\n", "new 1\nnew 2\n", []string{"new 1", "new 2"}},
		// A line being written when following starts is read whole once finished.
		{"unfinished last line", "old 1\npart", "ial\nnew\n", []string{"partial", "new"}},
		{"one unfinished line", "no newline yet", " done\n", []string{"no newline yet done"}},
		{"empty file", "", "first\n", []string{"first"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "end.log")
			appendTo(t, path, c.before)
			col := startFileAt(t, path, -1)
			time.Sleep(60 * time.Millisecond) // several polls: the old content must stay unread
			if got := col.plain(); len(got) != 0 {
				t.Fatalf("read %q before anything was appended", got)
			}
			appendTo(t, path, c.after)
			waitFor(t, "appended lines", func() bool { return equalLines(col.plain(), c.want) })
		})
	}
}

// Starting at the end applies to the first open only: a file that appears
// later (rotation, creation) is read from its start.
func TestFollowFileNegativeBacklogReadsANewFileWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.log")
	col := startFileAt(t, path, -1)
	waitFor(t, "waiting notice", func() bool { return len(col.events("log_waiting")) == 1 })
	appendTo(t, path, "a\nb\n")
	waitFor(t, "a b", func() bool { return equalLines(col.plain(), []string{"a", "b"}) })
}
