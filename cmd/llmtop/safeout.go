package main

import (
	"io"

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
