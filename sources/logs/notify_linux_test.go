//go:build linux

package logs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// watched follows path with a recheck of an hour: whatever it reads within
// the test's wait came through inotify, not the poll.
func watched(t *testing.T, path string) *collector {
	t.Helper()
	if n := newNotifier(path); n == nil {
		t.Skip("inotify is not available here")
	} else {
		n.close()
	}
	return startFileWith(t, path, FileOptions{Poll: 20 * time.Millisecond, Recheck: time.Hour})
}

// A line written after a quiet spell is read at once, without a poll.
func TestWatchedFileWakesOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vllm.log")
	appendTo(t, path, "old\n")
	c := watched(t, path)
	waitFor(t, "backlog", func() bool { return equalLines(c.plain(), []string{"old"}) })
	time.Sleep(100 * time.Millisecond) // quiet: the follower waits on inotify
	appendTo(t, path, "CUDA out of memory\n")
	waitFor(t, "the line written after a quiet spell", func() bool { return equalLines(c.plain(), []string{"old", "CUDA out of memory"}) })
}

// The path appearing, being rotated (renamed away, a new file created) and
// truncated wakes the follower too.
func TestWatchedFileCreateRotateTruncate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engine.log")
	c := watched(t, path)
	appendTo(t, filepath.Join(dir, "other.log"), "not ours\n") // another file in the directory
	appendTo(t, path, "first\n")
	waitFor(t, "the created file's line", func() bool { return equalLines(c.plain(), []string{"first"}) })

	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "after rotation\n")
	waitFor(t, "the rotated-in file's line", func() bool {
		return equalLines(c.plain(), []string{"first", "after rotation"})
	})

	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil { // truncate and rewrite, shorter
		t.Fatal(err)
	}
	waitFor(t, "the truncated file's line", func() bool {
		return equalLines(c.plain(), []string{"first", "after rotation", "x"})
	})
}

// Reading the file does not wake the follower: a quiet watched log costs
// nothing between rechecks. A write does.
func TestWatchedFileQuietNoWakeups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quiet.log")
	appendTo(t, path, "one\n")
	n := newNotifier(path)
	if n == nil {
		t.Skip("inotify is not available here")
	}
	defer n.close()
	n.watchFile(path)
	f, err := os.Open(path) // what the follower does on each look
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	f.ReadAt(buf, 0)
	f.Stat()
	os.Stat(path)
	f.Close()
	select {
	case <-n.C():
		t.Fatal("reading the file woke the follower")
	case <-time.After(200 * time.Millisecond):
	}
	appendTo(t, path, "two\n")
	select {
	case <-n.C():
	case <-time.After(10 * time.Second):
		t.Fatal("a write did not wake the follower")
	}
}

// Closing the notifier ends its reader, also after a file was watched: the
// descriptor stays non-blocking, so the close interrupts the read (a
// blocking read on a closed inotify descriptor would wait forever).
func TestNotifierCloseEndsItsReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.log")
	appendTo(t, path, "one\n")
	n := newNotifier(path)
	if n == nil {
		t.Skip("inotify is not available here")
	}
	n.watchFile(path)
	closed := make(chan struct{})
	go func() { n.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the notifier's reader did not end when it was closed")
	}
}
