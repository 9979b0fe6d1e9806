package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
)

// `llmtop diagnose --from FILE`: judge a recording offline, with the exit
// status a live diagnose would give.

func diagnoseFrom(cmd *cobra.Command, path string, urls []string) error {
	if recordFlags.path != "" {
		return fmt.Errorf("diagnose --from judges a recording: it records nothing (drop --record %s)", recordFlags.path)
	}
	if len(urls) > 0 {
		return fmt.Errorf("diagnose --from reads its endpoints from the recording: drop %s", strings.Join(urls, " "))
	}
	r, from, err := resumeRecording(cmd.ErrOrStderr(), path)
	if err != nil {
		return err
	}
	defer r.Close()
	res, err := judgeRecording(r.Header(), r, from)
	printNotes(cmd.ErrOrStderr(), path, r.Notes())
	if err == errNoRecords {
		err = noRecords(path)
	}
	if err != nil {
		return err
	}
	res.Recording, res.Notes = path, r.Notes()
	return reportDiagnosis(safeOut(cmd.OutOrStdout()), res)
}

// resumeRecording opens a recording to judge from its last checkpoint;
// one it must read from its start (written by an older llmtop, or
// another build) it reads whole, and says so on errOut when that is slow.
func resumeRecording(errOut io.Writer, path string) (*recording.Reader, *resumed, error) {
	r, from, why, err := recording.Resume(path, buildID())
	if err != nil {
		return nil, nil, err
	}
	if from != nil {
		mon, err := coreFrom(from.State)
		if err == nil {
			return r, &resumed{mon: mon, records: from.Records, last: from.Last}, nil
		}
		r.Close()
		why = "its last checkpoint could not be read (" + err.Error() + ")"
		if r, err = readStream(path); err != nil {
			return nil, nil, err
		}
	}
	if why != "" && r.Header().Face != "diagnose" {
		fmt.Fprintf(errOut, "llmtop: %s: %s: judged from its start (about a minute per recorded day)\n", path, why)
	}
	return r, nil, nil
}

// resumed is the core a checkpoint held, the records fed into it and the
// newest one's time.
type resumed struct {
	mon     *core.Monitor
	records int
	last    time.Time
}

// judgeRecording replays a recording into a fresh core the way its face
// drove the live one. A diagnose recording runs its watch again: the same
// messages, the same evaluations at the same times, the same window since
// the watch began, so it reaches the live verdict. A monitor recording
// runs as the monitor did (its window and rules, the clock once a second):
// the findings open at its end are the verdict, those that opened and
// closed during it are listed as closed.
//
// It reads the records as a stream: its memory does not grow with the
// recording's length. A recording with no records is errNoRecords. from,
// when not nil, is a monitor recording's checkpoint that src's records
// follow (the core the records before it made).
func judgeRecording(h recording.Header, src recording.Source, from *resumed) (diagnoseResult, error) {
	cfg := config.DiagnosisConfig(config.DefaultThresholds)
	if h.Diagnosis != nil {
		cfg = *h.Diagnosis
	}
	w := newWatch(h.Endpoints, cfg)
	w.start = h.Started
	var last time.Time
	n := 0
	each := func(fn func(recording.Record)) error {
		for {
			r, err := src.Next()
			if err == io.EOF {
				if n == 0 {
					return errNoRecords
				}
				return nil
			}
			if err != nil {
				return err
			}
			n++
			last = r.Time
			fn(r)
		}
	}
	if h.Face != "diagnose" {
		w.mon = session.ReplayCore(h)
		if from != nil {
			w.mon, n, last = from.mon, from.records, from.last
		}
		if err := each(func(r recording.Record) { session.Feed(w.mon, r) }); err != nil {
			return diagnoseResult{}, err
		}
		return w.result(w.mon.Evaluate(last)), nil
	}
	var rep diagnosis.Report
	evaluated := false
	watch := session.Watch{Mon: w.mon, Start: w.start}
	err := each(func(r recording.Record) {
		got, ok := watch.Feed(r)
		switch r.Msg.(type) {
		case recording.Scenario, recording.Note: // for the screen only
		default:
			rep, evaluated = got, ok
		}
	})
	if err != nil {
		return diagnoseResult{}, err
	}
	if !evaluated { // cut before the watch's last evaluation
		rep = w.evaluate(last)
	}
	return w.result(rep), nil
}

// errNoRecords: a recording with a header and nothing after it.
var errNoRecords = errors.New("no records")
