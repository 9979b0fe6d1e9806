//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A replay's index goes to disk when the temporary directory is a tmpfs:
// there it would be memory the replay holds (the day's index is
// 200 MB+) without its RSS showing it.
func TestReplayIndexNotInATmpfs(t *testing.T) {
	if !inMemoryFS("/dev/shm") {
		t.Skip("no tmpfs at /dev/shm to stand for a /tmp in memory")
	}
	disk := t.TempDir()
	if inMemoryFS(disk) {
		t.Skip("the test's own temporary directory is in memory")
	}
	shm, err := os.MkdirTemp("/dev/shm", "llmtop-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(shm)
	t.Setenv("TMPDIR", shm)
	t.Setenv("XDG_CACHE_HOME", disk)
	f, err := indexTemp()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := filepath.Dir(f.Name()), filepath.Join(disk, "llmtop"); got != want {
		t.Fatalf("the index went to %s, want %s (the tmpfs at %s is memory)", got, want, shm)
	}
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Fatalf("the index's file is still linked: %v", err)
	}

	// a temporary directory on disk serves as it is
	t.Setenv("TMPDIR", disk)
	g, err := indexTemp()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if filepath.Dir(g.Name()) != disk {
		t.Fatalf("the index went to %s, want $TMPDIR %s", g.Name(), disk)
	}
}
