package main

import (
	"io"
	"os"
	"sync"

	"github.com/llmtop/llmtop/model"
)

// safeOut wraps a face's output (snapshot, diagnose, bench, errors) so
// that nothing an endpoint, a config file or a process wrote can reach the
// terminal as a control sequence, and no URL credential is printed: each
// write passes model.SafeOutput. The faces write whole formatted lines or
// documents per call; an escape sequence split across two writes loses its
// ESC in the first and is plain text in the second.
func safeOut(w io.Writer) io.Writer { return safeWriter{w} }

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, model.SafeOutput(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// outTracker is every command's stdout (root.SetOut): it keeps the first
// write error, so that output that could not be written (a full disk,
// /dev/full, a closed pipe) is an error on every face, never exit 0 with
// nothing written.
type outTracker struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (o *outTracker) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// Err is the first write error.
func (o *outTracker) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

var stdout = &outTracker{w: os.Stdout}
