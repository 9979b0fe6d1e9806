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
	r, err := readStream(path)
	if err != nil {
		return err
	}
	defer r.Close()
	mon, t, err := replayUntil(r.Header(), r, at)
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

// replayUntil feeds a fresh monitor core every record up to the moment at
// (parseAt's forms; empty for the end), as the monitor took them, and runs
// the rules there. It reads the records as a stream, stopping at the
// first one after that moment.
func replayUntil(h recording.Header, src recording.Source, at string) (*core.Monitor, time.Time, error) {
	first, err := src.Next()
	if err == io.EOF {
		return nil, time.Time{}, errNoRecords
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	end := strings.TrimSpace(at) == ""
	t := first.Time
	if !end {
		// the end is not known until it is read: bound it after
		if t, err = parseAt(at, first.Time, maxTime); err != nil {
			return nil, time.Time{}, err
		}
	}
	mon := session.ReplayCore(h)
	last := first.Time
	for r := first; ; {
		if !end && r.Time.After(t) {
			break
		}
		session.Feed(mon, r)
		last = r.Time
		if r, err = src.Next(); err == io.EOF {
			if !end && t.After(last) {
				_, err = parseAt(at, first.Time, last) // says the recording's span
				return nil, time.Time{}, err
			}
			break
		} else if err != nil {
			return nil, time.Time{}, err
		}
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
