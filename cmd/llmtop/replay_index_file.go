package main

import (
	"os"
	"path/filepath"
)

// indexTemp creates a replay's index file, unlinked (it lives until the
// replay closes it). It belongs on disk: the index of a day's recording
// is about three times the recording (a checkpoint of the core every few
// minutes of it), and in a tmpfs — /tmp on many systems — that is memory
// the replay holds without its RSS showing it. So the temporary directory
// ($TMPDIR) serves unless it is memory (inMemoryFS), then the user's cache
// directory does, then the temporary directory after all.
func indexTemp() (*os.File, error) {
	dirs := []string{os.TempDir()}
	if inMemoryFS(dirs[0]) {
		if c, err := os.UserCacheDir(); err == nil {
			dir := filepath.Join(c, "llmtop")
			if os.MkdirAll(dir, 0o700) == nil && !inMemoryFS(dir) {
				dirs = []string{dir, dirs[0]}
			}
		}
	}
	var f *os.File
	var err error
	for _, d := range dirs {
		if f, err = os.CreateTemp(d, "llmtop-replay-"); err == nil {
			os.Remove(f.Name())
			return f, nil
		}
	}
	return nil, err
}
