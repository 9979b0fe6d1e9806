package tui

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Screen writes frames to the terminal line by line: a line that did not
// change since the last frame is not written. It replaces Bubble Tea's
// cell renderer for the monitor and the replay (tea.WithoutRenderer).
//
// Why: that renderer parses every frame into cells, diffs every cell of
// every line and wakes ten times a second to look for a new frame. At
// 200×60 that was half of the monitor's CPU (`make monitor-cost`); a frame
// here costs a string compare per line. What it gives up is the cell diff
// inside a changed line (a changed line is written whole, which over ssh
// is a few hundred bytes more a second) and the cell renderer's repairs
// for terminals that measure a character wider than the layout did, which
// cannot happen here: every outside string is made width-safe on entry
// (model.Clean) and the layout measures with the same width tables.
//
// Frames are drawn by Run's goroutine, never by the caller: a terminal
// that stops reading (flow control, a stuck ssh) stalls that goroutine,
// not the monitor, and only the newest frame is ever written.
type Screen struct {
	out io.Writer

	mu      sync.Mutex
	frame   string // newest frame handed in
	shown   string // the frame last written
	width   int
	repaint bool // the next frame is drawn whole (after a resize)
	closed  bool
	wake    chan struct{}
	done    chan struct{}

	prev []string // the lines on the terminal (Run's goroutine only)
	buf  bytes.Buffer
}

// NewScreen writes to out (the terminal, through a colour-profile writer).
func NewScreen(out io.Writer) *Screen {
	return &Screen{out: out, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Show hands in a frame; the newest one is written soon after. It never
// blocks.
func (s *Screen) Show(frame string) {
	s.mu.Lock()
	changed := frame != s.frame
	s.frame = frame
	s.mu.Unlock()
	if changed {
		s.poke()
	}
}

// Resize says the terminal is now w cells wide: the next frame is drawn
// whole on a cleared screen.
func (s *Screen) Resize(w int) {
	s.mu.Lock()
	s.width, s.repaint = w, true
	s.mu.Unlock()
	s.poke()
}

func (s *Screen) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run writes frames until Close, then returns.
func (s *Screen) Run() {
	defer close(s.done)
	for range s.wake {
		s.mu.Lock()
		frame, full, width, closed := s.frame, s.repaint, s.width, s.closed
		s.repaint = false
		if frame == s.shown && !full {
			s.mu.Unlock()
			if closed {
				return
			}
			continue
		}
		s.shown = frame
		s.mu.Unlock()
		if b := s.paint(frame, width, full); len(b) > 0 {
			if _, err := s.out.Write(b); err != nil {
				// The terminal is gone; its owner hears of it from the
				// write itself (cmd's terminalFile) and ends the program.
				s.prev = nil
			}
		}
		if closed {
			return
		}
	}
}

// Close writes the newest frame if it is not yet shown and stops Run.
func (s *Screen) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.poke()
	<-s.done
}

// paint is what to write to turn the terminal's lines into frame's: each
// changed line from its first column (with synchronized output, so a
// terminal that knows mode 2026 shows the frame at once).
func (s *Screen) paint(frame string, cols int, full bool) []byte {
	lines := strings.Split(frame, "\n")
	if frame == "" {
		lines = nil
	}
	b := &s.buf
	b.Reset()
	b.WriteString("\x1b[?2026h")
	if full {
		b.WriteString("\x1b[0m\x1b[H\x1b[2J")
		s.prev = nil
	}
	wrote := full
	for i, l := range lines {
		if i < len(s.prev) && s.prev[i] == l {
			continue
		}
		wrote = true
		cup(b, i)
		b.WriteString("\x1b[0m")
		b.WriteString(l)
		b.WriteString("\x1b[0m")
		// A full line leaves the cursor at the margin: an erase there
		// would take the last character with it.
		if cols <= 0 || width(l) < cols {
			b.WriteString("\x1b[K")
		}
	}
	for i := len(lines); i < len(s.prev); i++ { // the frame got shorter
		wrote = true
		cup(b, i)
		b.WriteString("\x1b[2K")
	}
	b.WriteString("\x1b[?2026l")
	s.prev = lines
	if !wrote {
		return nil
	}
	return b.Bytes()
}

// cup moves the cursor to the first column of row i (0-based).
func cup(b *bytes.Buffer, i int) {
	b.WriteString("\x1b[")
	b.WriteString(strconv.Itoa(i + 1))
	b.WriteString(";1H")
}

// UseScreen makes the model hand its frames to s (see Options.Screen).
func (m *Model) UseScreen(s *Screen) { m.opts.Screen = s }
