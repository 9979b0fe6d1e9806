package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/recording"
)

// `record = true` in the config: every monitor session is recorded into
// $XDG_STATE_HOME/llmtop/recordings (~/.local/state when unset), a new
// file past [record] file_mb, the oldest files removed past keep_mb in
// all or keep_days of age. The directory is 0700 and the files 0600: a
// recording holds the engine's log. The demo is not recorded (pass
// --record to record it).

const recordingPrefix, recordingExt = "llmtop-", ".llmrec"

func recordingsDir() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("record = true: no state directory (set XDG_STATE_HOME): %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "llmtop", "recordings")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("record = true: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("record = true: %w", err)
	}
	return dir, nil
}

// newStateFile creates the next file, named by its start time (UTC).
func newStateFile(dir string, h recordSpec, now time.Time) (*recording.Writer, string, error) {
	base := recordingPrefix + now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := base + recordingExt
		if i > 1 {
			name = fmt.Sprintf("%s-%d%s", base, i, recordingExt)
		}
		path := filepath.Join(dir, name)
		h.Started = now
		w, err := createRecording(path, h.Header, h.secrets...)
		if err == nil {
			return w, path, nil
		}
		if _, serr := os.Stat(path); serr != nil || i >= 100 {
			return nil, "", err
		}
	}
}

func openStateRecording(h recordSpec, rc config.RecordConfig, ticks bool) (*recorder, error) {
	dir, err := recordingsDir()
	if err != nil {
		return nil, err
	}
	h.Llmtop = version
	w, path, err := newStateFile(dir, h, time.Now())
	if err != nil {
		return nil, err
	}
	r := &recorder{path: path, w: w}
	pruneRecordings(dir, rc, time.Now(), path)
	next := func() (*recording.Writer, error) {
		nw, p, err := newStateFile(dir, h, time.Now())
		if err == nil {
			pruneRecordings(dir, rc, time.Now(), p)
		}
		return nw, err
	}
	r.r = recording.NewRecorder(w, recording.RecorderOptions{Ticks: ticks, Next: next, MaxBytes: rc.FileBytes})
	return r, nil
}

// pruneRecordings removes llmtop's own recordings older than KeepAge, then
// the oldest while they hold more than KeepBytes; never keep (the file
// being written) nor a file it did not name. It returns what it removed.
func pruneRecordings(dir string, rc config.RecordConfig, now time.Time, keep string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type file struct {
		path string
		mod  time.Time
		size int64
	}
	var files []file
	var total int64
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, recordingPrefix) || !strings.HasSuffix(n, recordingExt) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{filepath.Join(dir, n), info.ModTime(), info.Size()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	var removed []string
	for _, f := range files {
		if f.path == keep {
			continue
		}
		old := rc.KeepAge > 0 && now.Sub(f.mod) > rc.KeepAge
		over := rc.KeepBytes > 0 && total > rc.KeepBytes
		if !old && !over {
			continue
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, os.ErrNotExist) {
			total -= f.size
			removed = append(removed, f.path)
		}
	}
	return removed
}
