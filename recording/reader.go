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
)

// maxLine bounds one record: a line longer than this is not a record this
// llmtop wrote (a scrape of a busy engine is tens of kilobytes).
const maxLine = 64 << 20

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
	return r, nil
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
	for {
		chunk, err := r.in.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxLine {
			return nil, fmt.Errorf("a line longer than %d MiB", maxLine>>20)
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
// skipped with a note.
func (r *Reader) Next() (Record, error) {
	for !r.done {
		b, err := r.readLine()
		if err != nil {
			r.done = true
			switch {
			case errors.Is(err, io.EOF) && len(b) == 0:
				// the clean end
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				r.note(fmt.Sprintf("the recording ends mid-record after record %d (cut by a crash or still being written): the partial record was skipped", r.n))
			default:
				r.note(fmt.Sprintf("the recording is damaged after record %d (%v): read up to there", r.n, err))
			}
			return Record{}, io.EOF
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			r.bad++
			continue
		}
		rec, err := decode(l)
		if err != nil {
			var uk errUnknownKind
			if errors.As(err, &uk) {
				r.unknown[string(uk)]++
			} else {
				r.bad++
			}
			continue
		}
		r.n++
		rec.Msg = cleaned(rec.Msg)
		return rec, nil
	}
	return Record{}, io.EOF
}

func (r *Reader) note(s string) { r.notes = append(r.notes, s) }

// Notes says what the reader skipped or could not read, so far.
func (r *Reader) Notes() []string {
	out := append([]string(nil), r.notes...)
	if r.bad > 0 {
		out = append(out, fmt.Sprintf("%d records could not be decoded and were skipped", r.bad))
	}
	if len(r.unknown) > 0 {
		var kinds []string
		for k, n := range r.unknown {
			kinds = append(kinds, fmt.Sprintf("%d %q", n, k))
		}
		sort.Strings(kinds)
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

// ReadFile reads a whole recording: its header, its records in order and
// the notes on what was skipped.
func ReadFile(path string) (Header, []Record, []string, error) {
	r, err := Open(path)
	if err != nil {
		return Header{}, nil, nil, err
	}
	defer r.Close()
	var recs []Record
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	return r.Header(), recs, r.Notes(), nil
}
