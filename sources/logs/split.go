package logs

import "bytes"

// maxLine bounds one line kept for matching: longer lines are cut here (the
// rest is discarded up to the next newline) so a runaway writer cannot
// exhaust memory.
const maxLine = 1 << 20

// splitter cuts a byte stream into lines, holding a partial last line until
// its newline arrives.
type splitter struct {
	buf  []byte
	over bool // the current line passed maxLine; skip to its end
	max  int
}

func newSplitter() *splitter { return &splitter{max: maxLine} }

// write feeds p and calls emit for each complete line (without "\n"); the
// slice is only valid during the call.
func (s *splitter) write(p []byte, emit func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			return
		}
		if len(s.buf) == 0 && !s.over {
			emit(p[:i]) // common case: no copy
		} else {
			s.keep(p[:i])
			emit(s.buf)
			s.buf = s.buf[:0]
		}
		s.over = false
		p = p[i+1:]
	}
}

func (s *splitter) keep(p []byte) {
	if room := s.max - len(s.buf); len(p) > room {
		p = p[:room]
		s.over = true
	}
	s.buf = append(s.buf, p...)
}

// flush emits a pending partial line (the stream ended or was replaced).
func (s *splitter) flush(emit func([]byte)) {
	if len(s.buf) > 0 {
		emit(s.buf)
	}
	s.reset()
}

func (s *splitter) reset() {
	s.buf, s.over = s.buf[:0], false
	if cap(s.buf) > 64<<10 {
		s.buf = nil // give a huge line's buffer back
	}
}
