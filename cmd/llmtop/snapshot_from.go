package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
)

// `llmtop snapshot --from FILE [--at TIME]`: the snapshot the monitor's `s`
// would have saved at TIME of a recording.

func snapshotFrom(out, errOut io.Writer, path, at string, asJSON bool) error {
	r, from, err := resumeAt(path, at)
	if err != nil {
		return err
	}
	defer r.Close()
	mon, t, err := replayUntil(r.Header(), r, at, from)
	printNotes(errOut, path, r.Notes())
	if err == errNoRecords {
		err = noRecords(path)
	}
	if err != nil {
		return err
	}
	doc := mon.Snapshot()
	doc.GPU = mon.GPU()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	fmt.Fprintf(out, "from %s at %s\n", path, t.Local().Format("2006-01-02 15:04:05"))
	printSnapshot(out, doc.SnapshotJSON)
	return nil
}

// resumeAt opens the recording at path to replay it up to the moment at:
// from the newest of its checkpoints (this build's) at or before that
// moment (a day's snapshot at its end: 60 s of CPU from its start), else
// from its start (from is nil).
func resumeAt(path, at string) (*recording.Reader, *resumeFrom, error) {
	r, err := readStream(path)
	if err != nil {
		return nil, nil, err
	}
	if r.Header().Checkpoints == nil {
		return r, nil, nil
	}
	first, err := r.Next()
	r.Close()
	if err != nil { // the reader from the start says it
		r, err := readStream(path)
		return r, nil, err
	}
	t := maxTime
	if strings.TrimSpace(at) != "" {
		if t, err = parseAt(at, first.Time, maxTime); err != nil {
			return nil, nil, err
		}
	}
	r, cp, _, err := recording.ResumeBefore(path, buildID(), t)
	if err != nil || cp == nil {
		return r, nil, err
	}
	mon, err := coreFrom(cp.State)
	if err != nil { // its checkpoint is of no use: from the start
		r.Close()
		r, err := readStream(path)
		return r, nil, err
	}
	return r, &resumeFrom{mon: mon, first: first.Time, last: cp.Last}, nil
}

// resumeFrom is where replayUntil starts when not at the recording's
// start: the core a checkpoint held, the recording's first record's time
// and the newest time the checkpoint holds.
type resumeFrom struct {
	mon         *core.Monitor
	first, last time.Time
}

// replayUntil feeds a fresh monitor core every record up to the moment at
// (parseAt's forms; empty for the end), as the monitor took them, and runs
// the rules there. It reads the records as a stream, stopping at the
// first one after that moment. With from, src holds the records after a
// checkpoint and the core starts as it held them.
func replayUntil(h recording.Header, src recording.Source, at string, from *resumeFrom) (*core.Monitor, time.Time, error) {
	next, err := src.Next()
	if err != nil && (err != io.EOF || from == nil) {
		if err == io.EOF {
			err = errNoRecords
		}
		return nil, time.Time{}, err
	}
	mon, first, last := session.ReplayCore(h), next.Time, next.Time
	if from != nil {
		mon, first, last = from.mon, from.first, from.last
	}
	end := strings.TrimSpace(at) == ""
	t := first
	if !end {
		// the end is not known until it is read: bound it after
		if t, err = parseAt(at, first, maxTime); err != nil {
			return nil, time.Time{}, err
		}
	}
	for r := next; err != io.EOF; {
		if !end && r.Time.After(t) {
			break
		}
		session.Feed(mon, r)
		last = r.Time
		if r, err = src.Next(); err != nil && err != io.EOF {
			return nil, time.Time{}, err
		}
	}
	if err == io.EOF && !end && t.After(last) {
		_, err = parseAt(at, first, last) // says the recording's span
		return nil, time.Time{}, err
	}
	if end {
		t = last
	}
	mon.Evaluate(t)
	return mon, t, nil
}

// maxTime is a moment after every recording.
var maxTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// parseAt reads a moment of a recording that spans first…last: empty for
// its end; an RFC 3339 time; a clock time (15:04 or 15:04:05, local time,
// its first occurrence in the recording); or an offset from its start
// (+90s, 10m).
func parseAt(s string, first, last time.Time) (time.Time, error) {
	span := fmt.Sprintf("the recording spans %s – %s", first.Local().Format("2006-01-02 15:04:05"), last.Local().Format("15:04:05"))
	s = strings.TrimSpace(s)
	if s == "" {
		return last, nil
	}
	var t time.Time
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "+")); err == nil {
		t = first.Add(d)
	} else if v, err := time.Parse(time.RFC3339, s); err == nil {
		t = v
	} else {
		var c time.Time
		var cerr error
		for _, layout := range []string{"15:04:05", "15:04"} {
			if c, cerr = time.ParseInLocation(layout, s, time.Local); cerr == nil {
				break
			}
		}
		if cerr != nil {
			return time.Time{}, usageErr("--at %q: want a clock time (14:02 or 14:02:11), an RFC 3339 time or an offset from the start (+10m)", s)
		}
		f := first.Local()
		t = time.Date(f.Year(), f.Month(), f.Day(), c.Hour(), c.Minute(), c.Second(), 0, time.Local)
		if t.Before(f.Truncate(time.Second)) {
			t = t.AddDate(0, 0, 1)
		}
	}
	if t.Before(first.Truncate(time.Second)) || t.After(last) {
		return time.Time{}, usageErr("--at %s is outside the recording: %s", s, span)
	}
	return t, nil
}
