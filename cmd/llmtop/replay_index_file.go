package main

import (
	"os"

	"github.com/llmtop/llmtop/recording"
)

// indexTemp creates a replay's index file, unlinked (it lives until the
// replay closes it), on disk (recording.TempDir).
func indexTemp() (*os.File, error) {
	f, err := os.CreateTemp(recording.TempDir(), "llmtop-replay-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}
