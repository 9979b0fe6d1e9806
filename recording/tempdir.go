package recording

import (
	"os"
	"path/filepath"
)

// TempDir is where a replay's index and the OpenMetrics export's spill
// files go: on disk. They grow with the recording (a day's index is a few
// times the recording, the spill files its points uncompressed), and in a
// tmpfs — /tmp on many systems — that is memory the process holds without
// its RSS showing it. So the temporary directory ($TMPDIR) serves unless
// it is in memory, then the user's cache directory (created), then the
// temporary directory after all.
func TempDir() string {
	tmp := os.TempDir()
	if !inMemoryFS(tmp) {
		return tmp
	}
	if c, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(c, "llmtop")
		if os.MkdirAll(dir, 0o700) == nil && !inMemoryFS(dir) {
			return dir
		}
	}
	return tmp
}
