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
	"sync"
	"time"
)

// Writer writes a recording. It is safe for concurrent use; a write error
// is kept and returned by every later call (Err says it too).
type Writer struct {
	mu      sync.Mutex
	file    io.Closer // nil when writing to a caller's io.Writer
	out     *counter  // the compressed bytes written
	buf     *bufio.Writer
	zw      *gzip.Writer
	line    bytes.Buffer
	enc     *json.Encoder
	secrets [][]byte
	err     error
	n       int64 // records written
	header  Header
	// shadow, when set, checkpoints the core the file replays into
	// (checkpoints.go).
	shadow *shadowing
	// written is the line written last, as the file holds it.
	written []byte
}

// Create makes a new recording at path, readable by its owner only (a
// recording shows the log and the served models). It never overwrites: an
// existing file is an error, so a recording is never lost to a typo.
func Create(path string, h Header, secrets ...string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("--record %s: the file exists and llmtop never overwrites a recording; choose another name", path)
		}
		return nil, fmt.Errorf("--record: %w", err)
	}
	w, err := NewWriter(f, h, secrets...)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.file = f
	return w, nil
}

// NewWriter writes a recording to out, starting with h's header line (its
// Version is set to this format's). Any of secrets (an API key, a URL's
// password) found in a record is replaced with REDACTED before it is
// written: no path can carry one into the file.
func NewWriter(out io.Writer, h Header, secrets ...string) (*Writer, error) {
	zw, err := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	cnt := &counter{w: out}
	w := &Writer{buf: bufio.NewWriterSize(cnt, 64<<10), zw: zw, out: cnt}
	w.zw.Reset(w.buf)
	w.enc = json.NewEncoder(&w.line)
	w.enc.SetEscapeHTML(false)
	for _, s := range secrets {
		if len(s) < 4 { // shorter would redact ordinary words
			continue
		}
		// as it is, and as JSON writes it inside a string (with and
		// without HTML escaping: messages are marshalled, the header
		// encoded)
		forms := map[string]bool{s: true}
		if q, err := json.Marshal(s); err == nil {
			forms[string(q[1:len(q)-1])] = true
		}
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if e.Encode(s) == nil {
			q := bytes.TrimSpace(b.Bytes())
			forms[string(q[1:len(q)-1])] = true
		}
		for f := range forms {
			w.secrets = append(w.secrets, []byte(f))
		}
	}
	h.Version = Version
	h.Started = h.Started.UTC()
	w.header = h
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeValue(h); err != nil {
		return nil, err
	}
	if err := w.flushLocked(); err != nil {
		return nil, err
	}
	return w, nil
}

// Write appends one message received at t. Messages of a type the format
// does not know are not written (reported false).
func (w *Writer) Write(t time.Time, msg any) (bool, error) {
	kind, v, ok := encode(msg)
	if !ok {
		return false, nil
	}
	l := line{T: unixNano(t), K: kind}
	if v != nil {
		raw, err := json.Marshal(v)
		if err != nil {
			return false, fmt.Errorf("recording a %s: %w", kind, err)
		}
		l.M = raw
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, w.err
	}
	if err := w.writeValue(l); err != nil {
		return false, err
	}
	w.n++
	if w.shadow != nil {
		w.shadowLine(w.written)
	}
	return true, nil
}

// writeValue encodes v as one line, redacts it and hands it to gzip.
func (w *Writer) writeValue(v any) error {
	b, err := w.lineOf(v)
	if err != nil {
		return err
	}
	w.written = b
	if _, err := w.zw.Write(b); err != nil {
		w.err = fmt.Errorf("writing the recording: %w", err)
		return w.err
	}
	return nil
}

// lineOf is v as the file holds it: one line of JSON, redacted. It is
// valid until the next call.
func (w *Writer) lineOf(v any) ([]byte, error) {
	w.line.Reset()
	if err := w.enc.Encode(v); err != nil {
		return nil, err
	}
	b := w.line.Bytes()
	for _, s := range w.secrets {
		if bytes.Contains(b, s) {
			b = bytes.ReplaceAll(b, s, []byte("REDACTED"))
		}
	}
	return b, nil
}

// Flush pushes what was written to the file: a reader (or a crash) sees
// every record before it. It costs a few bytes of compression; the
// Recorder calls it about once a second.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if w.err != nil {
		return w.err
	}
	if err := w.zw.Flush(); err != nil {
		w.err = fmt.Errorf("writing the recording: %w", err)
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		w.err = fmt.Errorf("writing the recording: %w", err)
		return w.err
	}
	return nil
}

// counter counts the bytes that reach the file.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Size is how many bytes reached the file (compressed), as of the last
// flush.
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.n
}

// Records counts the records written.
func (w *Writer) Records() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Err is the first write error, nil when none.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close ends the gzip stream (its checksum) and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == nil {
		if cerr := w.zw.Close(); cerr != nil {
			err = cerr
		} else if ferr := w.buf.Flush(); ferr != nil {
			err = ferr
		}
	}
	if w.file != nil {
		if cerr := w.file.Close(); err == nil {
			err = cerr
		}
		w.file = nil
	}
	if w.err == nil {
		w.err = errors.New("the recording is closed")
	}
	return err
}
