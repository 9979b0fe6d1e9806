//go:build linux

package recording

import (
	"os"
	"path/filepath"
	"testing"
)

// A replay's index and the export's spill files go to disk when the
// temporary directory is a tmpfs: there they would be memory the process
// holds (the day's index is 200 MB) without its RSS showing it.
func TestTempDirNotInATmpfs(t *testing.T) {
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
	if got, want := TempDir(), filepath.Join(disk, "llmtop"); got != want {
		t.Fatalf("TempDir is %s, want %s (the tmpfs at %s is memory)", got, want, shm)
	}
	if fi, err := os.Stat(filepath.Join(disk, "llmtop")); err != nil || !fi.IsDir() {
		t.Fatalf("the cache directory was not made: %v", err)
	}

	// a temporary directory on disk serves as it is
	t.Setenv("TMPDIR", disk)
	if got := TempDir(); got != disk {
		t.Fatalf("TempDir is %s, want $TMPDIR %s", got, disk)
	}
}
