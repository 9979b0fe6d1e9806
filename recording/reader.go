package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// A recording is a file from outside: these bound what one may make the
// reader hold or do, so a crafted file ends in an error that names where,
// never in a crash.
const (
	// maxLine bounds one record: a line longer than this is not a record
	// this llmtop wrote (a scrape of a busy engine is tens of kilobytes; a
	// fleet's batch of scrapes a few MiB).
	maxLine = 16 << 20
	// maxPerSecond bounds the records stamped within one recorded second
	// (a fleet of 2 000 endpoints writes a few thousand a second).
	maxPerSecond = 200_000
	// maxNote bounds a note's text and maxLogText a log line's: the live
	// log source keeps lines up to 1 MiB for matching, but the screen and
	// the core's ring of 10 000 lines need far less (a ring of full
	// 1 MiB lines would be 10 GB).
	maxNote    = 4 << 10
	maxLogText = 16 << 10
	// maxKinds bounds the distinct unknown record kinds counted by name.
	maxKinds = 16
	// backwardsNoted is how far a record's time may step back before the
	// reader says so (two sources racing to the recorder differ by µs).
	backwardsNoted = time.Second
)

// LimitError is a recording that goes past what this llmtop writes: where
// (the record's number and its offset in the uncompressed stream) and
// what. What was read before it stands.
type LimitError struct {
	Name   string
	Record int   // the number of the record it stopped at (1 = the first after the header)
	Offset int64 // the byte offset of that record's line, uncompressed
	What   string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: record %d at byte %d (uncompressed): %s: not a recording llmtop writes; read up to there", e.Name, e.Record, e.Offset, e.What)
}

// Reader reads a recording's records in order.
type Reader struct {
	name   string
	header Header
	in     *bufio.Reader
	closer io.Closer
	notes  []string
	// unknown counts skipped records by kind; bad counts lines that did not
	// decode.
	unknown map[string]int
	bad     int
	done    bool
	n       int
	// off is the uncompressed offset of the next line; lineOff the
	// offset of the line just read.
	off, lineOff int64
	// pending is the first record, read by NewReader to check the header
	// against it.
	pending *Record
	err     error
	// last is the newest record time handed out: a record stamped before
	// it is handed out at it (back counts those more than backwardsNoted
	// behind, worst the furthest).
	last       time.Time
	back       int
	worst      time.Duration
	sec        time.Time
	inSec      int
	cutLog     int
	cutNote    int
	otherKinds int
	// raw is the line of the record handed out last; moved says the
	// reader changed its time (it stepped back).
	raw, pendingRaw     []byte
	moved, pendingMoved bool
}

// Open opens the recording at path and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a recording from in; name is how errors and notes call
// it. An input that is not a recording, or one of a newer format, is an
// error that says so.
func NewReader(in io.Reader, name string) (*Reader, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, fmt.Errorf("%s is not an llmtop recording (not gzip-compressed: %v)", name, err)
	}
	r := &Reader{name: name, in: bufio.NewReaderSize(zr, 256<<10), unknown: map[string]int{}}
	first, err := r.readLine()
	if err != nil {
		if len(first) == 0 && errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s is empty: no header line (the recording was cut before its first second)", name)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if bytes.HasPrefix(first, []byte(`{"`+magic+`"`)) {
				return nil, fmt.Errorf("%s ends inside its header line (cut before its first second): nothing to read", name)
			}
		} else {
			return nil, fmt.Errorf("%s: reading the header: %v", name, err)
		}
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(first, &probe) != nil || probe[magic] == nil {
		return nil, fmt.Errorf("%s is not an llmtop recording (its first line is not an llmtop_recording header)", name)
	}
	if err := json.Unmarshal(first, &r.header); err != nil {
		var v int
		if json.Unmarshal(probe[magic], &v) == nil && v > Version {
			return nil, newerError(name, v)
		}
		return nil, fmt.Errorf("%s: bad header: %v", name, err)
	}
	if r.header.Version > Version || r.header.Version < 1 {
		return nil, newerError(name, r.header.Version)
	}
	r.header = cleaned(r.header) // endpoints, labels: text from the file
	r.checkHeader()
	return r, nil
}

// earliest and latest bound the times a record or a header may hold: a
// time outside them was not written by a clock.
var (
	earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func plausible(t time.Time) bool { return !t.Before(earliest) && t.Before(latest) }

// checkHeader replaces header values no llmtop writes with what a face
// can use, saying so: a start that is not a real time (or far from the
// first record) becomes the first record's time; an interval or window
// outside a second's fraction to a day becomes the default.
func (r *Reader) checkHeader() {
	h := &r.header
	if d := time.Duration(h.Interval); d < 0 || d > 24*time.Hour {
		r.note(fmt.Sprintf("the header's interval %v is not one llmtop uses: 1s is used", d))
		h.Interval = Duration(time.Second)
	}
	if d := time.Duration(h.Window); d < 0 || d > 24*time.Hour {
		r.note(fmt.Sprintf("the header's window %v is not one llmtop uses: 1m is used", d))
		h.Window = Duration(time.Minute)
	}
	first, err := r.next()
	if err != nil {
		r.err = err
	} else {
		r.pending = &first
		r.pendingRaw, r.pendingMoved = r.raw, r.moved
	}
	start := h.Started
	switch {
	case start.IsZero() && r.pending != nil: // not given: the first record's
		h.Started = first.Time
	case r.pending == nil:
		if !start.IsZero() && !plausible(start) {
			r.note(fmt.Sprintf("the header's start %s is not a real time", start.Format(time.RFC3339)))
			h.Started = time.Time{}
		}
	case !plausible(start) || start.Sub(first.Time).Abs() > 24*time.Hour:
		r.note(fmt.Sprintf("the header's start %s is not near its first record (%s): the first record's time is used",
			start.Format(time.RFC3339), first.Time.Format(time.RFC3339)))
		h.Started = first.Time
	}
}

func newerError(name string, v int) error {
	return fmt.Errorf("%s is recording format version %d; this llmtop reads version %d: replay it with a newer llmtop", name, v, Version)
}

// Header is the file's header line.
func (r *Reader) Header() Header { return r.header }

// readLine returns the next line without its newline. A last line without
// one (a torn write) comes back with the error that ended the stream.
func (r *Reader) readLine() ([]byte, error) {
	var out []byte
	r.lineOff = r.off
	for {
		chunk, err := r.in.ReadSlice('\n')
		r.off += int64(len(chunk))
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, r.limit(fmt.Sprintf("a line longer than %d MiB", maxLine>>20))
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			return out[:len(out)-1], nil
		}
		return out, err
	}
}

// Next returns the next record, or io.EOF after the last. A torn or
// corrupt end ends the records with a note (Notes), not an error: what was
// read before it is kept. Records of a kind this llmtop does not know are
// skipped with a note. A record past this llmtop's limits (a line over
// 16 MiB, more than 200 000 records in one recorded second, a time no clock
// writes) ends the reading with a *LimitError naming its offset.
func (r *Reader) Next() (Record, error) {
	if r.pending != nil {
		rec := *r.pending
		r.pending = nil
		r.raw, r.moved = r.pendingRaw, r.pendingMoved
		return rec, nil
	}
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil && err != io.EOF {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	for !r.done {
		b, err := r.readLine()
		if err != nil {
			r.done = true
			var le *LimitError
			switch {
			case errors.As(err, &le):
				return Record{}, err
			case errors.Is(err, io.EOF) && len(b) == 0:
				// the clean end
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				r.note(fmt.Sprintf("the recording ends mid-record after record %d (cut by a crash or still being written): the partial record was skipped", r.n))
			default:
				r.note(fmt.Sprintf("the recording is damaged after record %d (%v): read up to there", r.n, err))
			}
			return Record{}, io.EOF
		}
		rec, ok, err := r.take(b)
		if err != nil {
			r.done = true
			return Record{}, err
		}
		if ok {
			return rec, nil
		}
	}
	return Record{}, io.EOF
}

// take reads one line as the record it holds: false for a line that holds
// none (blank, undecodable, of an unknown kind, a checkpoint), an error
// for one past the limits. A recording's Writer reads what it writes
// through take too, so its checkpoints see the records a replay will.
func (r *Reader) take(b []byte) (Record, bool, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return Record{}, false, nil
	}
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		r.bad++
		return Record{}, false, nil
	}
	if l.K == kindCheckpoint {
		return Record{}, false, nil
	}
	rec, err := decode(l)
	if err != nil {
		var uk errUnknownKind
		if errors.As(err, &uk) {
			r.unknownKind(string(uk))
		} else {
			r.bad++
		}
		return Record{}, false, nil
	}
	stamped := rec.Time
	if err := r.stamp(&rec); err != nil {
		return Record{}, false, err
	}
	r.raw, r.moved = b, !rec.Time.Equal(stamped)
	r.n++
	rec.Msg = r.bound(cleaned(rec.Msg))
	return rec, true, nil
}

func (r *Reader) limit(what string) *LimitError {
	return &LimitError{Name: r.name, Record: r.n + 1, Offset: r.lineOff, What: what}
}

// stamp checks a record's time: none past 2200, the first not before 2000; a later one
// never goes back (it is handed out at the time of the one before, and a
// step back of more than backwardsNoted is counted for a note); no
// recorded second holds more than maxPerSecond records.
func (r *Reader) stamp(rec *Record) error {
	if r.n == 0 {
		if !plausible(rec.Time) {
			return r.limit(fmt.Sprintf("its first record is stamped %s, not a time a clock writes", rec.Time.Format(time.RFC3339)))
		}
		r.last, r.sec = rec.Time, rec.Time
	}
	if !rec.Time.Before(latest) {
		return r.limit(fmt.Sprintf("stamped %s, not a time a clock writes", rec.Time.Format(time.RFC3339)))
	}
	if d := r.last.Sub(rec.Time); d > 0 {
		if d > backwardsNoted {
			r.back++
			r.worst = max(r.worst, d)
		}
		rec.Time = r.last
	}
	r.last = rec.Time
	if rec.Time.Sub(r.sec) >= time.Second {
		r.sec, r.inSec = rec.Time, 0
	}
	r.inSec++
	if r.inSec > maxPerSecond {
		return r.limit(fmt.Sprintf("more than %d records stamped within one second (from %s)", maxPerSecond, r.sec.Format(time.RFC3339Nano)))
	}
	return nil
}

// bound cuts the texts a record may carry at what the screen and the
// core's rings can hold: a note's at maxNote, a log line's at maxLogText.
func (r *Reader) bound(msg any) any {
	cut := func(s string, n int, count *int) string {
		if len(s) <= n {
			return s
		}
		*count++
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	switch m := msg.(type) {
	case Note:
		m.Text = cut(m.Text, maxNote, &r.cutNote)
		return m
	case model.LogLine:
		m.Text = cut(m.Text, maxLogText, &r.cutLog)
		return m
	case model.LogLines:
		for i := range m {
			m[i].Text = cut(m[i].Text, maxLogText, &r.cutLog)
		}
		return m
	}
	return msg
}

func (r *Reader) unknownKind(k string) {
	if _, ok := r.unknown[k]; ok || len(r.unknown) < maxKinds {
		r.unknown[k]++
		return
	}
	r.otherKinds++
}

// Raw is the line of the record Next returned last, as the file holds it
// (the caller must not change it), and whether the reader moved that
// record's time (it was stamped before the one ahead of it).
func (r *Reader) Raw() (line []byte, moved bool) { return r.raw, r.moved }

func (r *Reader) note(s string) { r.notes = append(r.notes, s) }

// Notes says what the reader skipped or could not read, so far.
func (r *Reader) Notes() []string {
	out := append([]string(nil), r.notes...)
	if r.bad > 0 {
		out = append(out, fmt.Sprintf("%d records could not be decoded and were skipped", r.bad))
	}
	if r.back > 0 {
		out = append(out, fmt.Sprintf("%d records are stamped before the record ahead of them (by up to %v): each was taken at the time of the one before", r.back, r.worst.Round(time.Millisecond)))
	}
	if r.cutLog > 0 {
		out = append(out, fmt.Sprintf("%d log lines longer than %d KiB were cut there", r.cutLog, maxLogText>>10))
	}
	if r.cutNote > 0 {
		out = append(out, fmt.Sprintf("%d notes longer than %d KiB were cut there", r.cutNote, maxNote>>10))
	}
	if len(r.unknown) > 0 {
		var kinds []string
		for k, n := range r.unknown {
			kinds = append(kinds, fmt.Sprintf("%d %q", n, k))
		}
		sort.Strings(kinds)
		if r.otherKinds > 0 {
			kinds = append(kinds, fmt.Sprintf("%d of other kinds", r.otherKinds))
		}
		out = append(out, fmt.Sprintf("skipped records of kinds this llmtop does not know (written by a newer llmtop?): %s", strings.Join(kinds, ", ")))
	}
	return out
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// ReadFile reads a whole recording into memory: its header, its records in
// order and the notes on what was skipped. It is for tests and small
// files: the faces read a recording as a stream (Open, Next), whose memory
// does not grow with its length.
func ReadFile(path string) (Header, []Record, []string, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, nil, nil, err
	}
	defer r.Close()
	var recs []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return r.Header(), recs, r.Notes(), err
		}
		recs = append(recs, rec)
	}
	return r.Header(), recs, r.Notes(), nil
}
