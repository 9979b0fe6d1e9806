package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/recording"
)

// fullDisk takes the header, then fills: every later write fails as a
// full disk does.
type fullDisk struct{ written int }

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.written > 0 {
		return 0, syscall.ENOSPC
	}
	d.written += len(p)
	return len(p), nil
}

// A recording that fails (a full disk under diagnose --record) loses no
// report: the report is printed whole, the failure is said, and the exit
// status is the error's (70), not a verdict's. Before, diagnose returned
// the recording's error and printed no report at all.
func TestDiagnoseRecordOnAFullDiskStillReports(t *testing.T) {
	w := newWatch([]string{"http://127.0.0.1:1"}, diagnoseConfig(config.Thresholds{}, time.Second))
	w.start = time.Now()
	rw, err := recording.NewWriter(&fullDisk{}, recording.Header{Face: "diagnose", Started: w.start})
	if err != nil {
		t.Fatal(err)
	}
	w.rec = &recorder{path: "full.llmrec", w: rw, r: recording.NewRecorder(rw, recording.RecorderOptions{})}
	w.rec.record(recording.Note{Text: "a note the full disk refuses"})

	diagnoseFlags.json = true
	defer func() { diagnoseFlags.json = false }()
	var out, errOut bytes.Buffer
	err = w.finish(&out, &errOut, diagnosis.Report{}, nil)

	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailure {
		t.Fatalf("exit: %v (want exit %d)", err, exitFailure)
	}
	if !strings.Contains(err.Error(), "full.llmrec") || !strings.Contains(err.Error(), "report above stands") {
		t.Errorf("the error does not say the recording failed beside a report that stands: %v", err)
	}
	if !strings.Contains(errOut.String(), "recording full.llmrec") {
		t.Errorf("stderr does not name the failed recording: %q", errOut.String())
	}
	var res decoded
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil || res.Status == "" {
		t.Fatalf("no report printed (%v): %q", jerr, out.String())
	}
}
