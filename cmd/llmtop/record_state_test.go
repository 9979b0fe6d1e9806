package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
)

// record = true: the monitor records into the state directory (0700,
// files 0600), starts a new file past file_mb, and removes llmtop's own
// recordings past keep_days or keep_mb, never another file.
func TestStateRecordingsRotateAndArePruned(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "llmtop", "recordings")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "llmtop-20200101T000000Z.llmrec")
	mine := filepath.Join(dir, "notes.txt")
	for _, p := range []string{old, mine} {
		os.WriteFile(p, []byte("x"), 0o600)
		os.Chtimes(p, time.Now().Add(-30*24*time.Hour), time.Now().Add(-30*24*time.Hour))
	}
	rc := config.DefaultRecordConfig
	rc.Enabled, rc.FileBytes, rc.KeepAge = true, 400, 7*24*time.Hour
	h := recordHeader("monitor", []string{"http://127.0.0.1:8000"}, time.Second, time.Minute, diagnosis.DefaultConfig(), false)
	rec, err := openRecording(h, true, &rc)
	if err != nil || rec == nil {
		t.Fatalf("%v %v", rec, err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", st.Mode())
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the 30-day-old recording is still there: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("a file llmtop did not write was touched: %v", err)
	}
	count := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "llmtop-*.llmrec"))
		return m
	}
	for i := 0; len(count()) < 2; i++ {
		if i > 30000 {
			t.Fatal("no second file after 30 s")
		}
		rec.record(model.LogLine{Time: time.Now(), Text: strings.Repeat("a busy log line ", 8) + time.Now().String()})
		time.Sleep(time.Millisecond)
	}
	if err := rec.close(io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, p := range count() {
		st, _ := os.Stat(p)
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v", p, st.Mode())
		}
		h, recs, notes, err := recording.ReadFile(p)
		if err != nil || h.Face != "monitor" || len(recs) == 0 || len(notes) != 0 {
			t.Fatalf("%s: %v %d records %q", p, err, len(recs), notes)
		}
	}

	// the total cap removes the oldest first
	rc.KeepBytes = 1
	files := count()
	removed := pruneRecordings(dir, rc, time.Now(), files[len(files)-1])
	if len(removed) != len(files)-1 || len(count()) != 1 {
		t.Fatalf("removed %q of %q", removed, files)
	}
}

// The demo is not recorded by record = true (only with --record).
func TestStateRecordingSkipsTheDemo(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	rc := config.DefaultRecordConfig
	rc.Enabled = true
	h := recordHeader("monitor", nil, time.Second, time.Minute, diagnosis.DefaultConfig(), true)
	if rec, err := openRecording(h, true, &rc); rec != nil || err != nil {
		t.Fatalf("%v %v", rec, err)
	}
}
