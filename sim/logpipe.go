package sim

import (
	"bytes"
	"io"
	"sync"
)

// LogPipe carries the sim's log to a reader (the demo's log pane) without
// ever blocking the sim: Write never waits, and when the reader falls more
// than max bytes behind, the oldest whole lines are dropped.
type LogPipe struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	max    int
	closed bool
	// Dropped counts bytes thrown away because the reader was slow.
	Dropped int64
}

// NewLogPipe returns a pipe that holds at most max bytes (minimum 4 KiB).
func NewLogPipe(max int) *LogPipe {
	p := &LogPipe{max: max}
	if p.max < 4096 {
		p.max = 4096
	}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// Write appends p; it never blocks. Writing to a closed pipe is an error.
func (p *LogPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, io.ErrClosedPipe
	}
	p.buf = append(p.buf, b...)
	if over := len(p.buf) - p.max; over > 0 {
		cut := over
		if i := bytes.IndexByte(p.buf[over:], '\n'); i >= 0 {
			cut = over + i + 1 // keep whole lines
		}
		cut = min(cut, len(p.buf))
		p.Dropped += int64(cut)
		p.buf = append(p.buf[:0], p.buf[cut:]...)
	}
	p.cond.Broadcast()
	return len(b), nil
}

// Read blocks until there is something to read or the pipe is closed.
func (p *LogPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 && !p.closed {
		p.cond.Wait()
	}
	if len(p.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(b, p.buf)
	p.buf = append(p.buf[:0], p.buf[n:]...)
	return n, nil
}

// Close ends the pipe: readers get what is left, then io.EOF.
func (p *LogPipe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.cond.Broadcast()
	return nil
}
