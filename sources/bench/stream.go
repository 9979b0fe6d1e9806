package bench

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// lineReader hands out the lines of a stream without copying them, except
// for the rare line longer than its buffer.
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

const readBuf = 32 << 10

// next returns the next line without its line ending; it is valid until the
// following call.
func (lr *lineReader) next() ([]byte, error) {
	line, err := lr.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, line...)
		}
		line = lr.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimRight(line, "\r\n")
	return line, nil
}

var (
	dataPrefix  = []byte("data:")
	eventPrefix = []byte("event:")
	donePayload = []byte("[DONE]")
)

// streamState follows one response stream and fills its Record.
type streamState struct {
	api      API
	rec      *report.Record
	last     time.Time // the previous content chunk's arrival
	done     bool      // an end marker arrived ([DONE], finish_reason, done:true)
	errEvent bool      // the SSE event type was "error"
	// text keeps the start of the answer's text, up to its capacity (never
	// grown: nil keeps none); reasoning says reasoning text came.
	text      []byte
	reasoning bool
}

// line handles one line that arrived at now. It returns a non-empty error
// kind (with a detail) when the line ends the request as a failure.
func (s *streamState) line(b []byte, now time.Time) (report.ErrKind, string) {
	payload := b
	if !s.api.ndjson() {
		switch {
		case len(b) == 0 || b[0] == ':':
			return report.ErrNone, "" // event boundary or comment (keep-alive)
		case bytes.HasPrefix(b, dataPrefix):
			payload = bytes.TrimLeft(b[len(dataPrefix):], " ")
		case bytes.HasPrefix(b, eventPrefix):
			s.errEvent = string(bytes.TrimSpace(b[len(eventPrefix):])) == "error"
			return report.ErrNone, ""
		case isSSEField(b):
			return report.ErrNone, ""
		default:
			return report.ErrMalformed, "not an SSE line: " + clip(b)
		}
		if bytes.Equal(payload, donePayload) {
			s.done = true
			return report.ErrNone, ""
		}
	} else if len(bytes.TrimSpace(b)) == 0 {
		return report.ErrNone, ""
	}
	if !wellFormed(payload) {
		return report.ErrMalformed, "payload is not a JSON object: " + clip(payload)
	}
	c := s.api.parse(payload)
	if c.err || s.errEvent {
		return report.ErrStream, "server error in stream: " + clip(payload)
	}
	r := s.rec
	if r.ResponseID == "" && len(c.id) > 0 {
		r.ResponseID = string(c.id) // once per request
	}
	if c.content {
		if r.Chunks == 0 {
			r.TTFT = now.Sub(r.Start)
		} else {
			r.ITL = append(r.ITL, now.Sub(s.last))
		}
		s.last = now
		r.E2EL = now.Sub(r.Start)
		r.Chunks++
		s.reasoning = s.reasoning || c.reasoning
		if len(c.text) > 0 && len(s.text) < cap(s.text) {
			s.text = appendText(s.text, c.text)
		}
	}
	if c.usage {
		r.PromptTokens, r.PromptFromUsage = c.prompt, true
		r.OutputTokens, r.OutputFromUsage = c.output, true
	}
	if c.finish {
		s.done = true
	}
	if len(c.reason) > 0 && r.FinishReason == "" {
		r.FinishReason = finishReason(c.reason)
	}
	return report.ErrNone, ""
}

// finishReason is the reason as a string, without allocating for the
// usual ones.
func finishReason(b []byte) string {
	for _, known := range [...]string{"stop", "length", "abort", "tool_calls", "content_filter", "load", "unload"} {
		if string(b) == known {
			return known
		}
	}
	return string(b)
}

// isSSEField reports the SSE fields we have no use for (id:, retry:).
func isSSEField(b []byte) bool {
	return bytes.HasPrefix(b, []byte("id:")) || bytes.HasPrefix(b, []byte("retry:"))
}

// clip shortens a payload for an error message.
func clip(b []byte) string {
	const n = 120
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
