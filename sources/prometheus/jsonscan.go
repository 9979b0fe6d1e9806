package prometheus

// The JSON lexer under the query API decoder (scan.go): a cursor over a
// window of the answer's bytes that is refilled as the answer arrives,
// reading strings, numbers, literals, objects and arrays, and skipping
// what the decoder does not read. Errors carry their byte offset.

import (
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// windowSize is the window's size to start with; it grows for a series
// longer than half of it, and is not kept past maxWindow.
const (
	windowSize = 8 << 10
	maxWindow  = 1 << 20
)

// fill reads more of the answer after the window's end; false at its end
// (or at a read error, kept in rerr). The bytes before the cursor stay
// where they are: slices of them stay good.
func (p *scanner) fill() bool {
	if p.r == nil {
		return false
	}
	if len(p.b) == cap(p.b) {
		p.b = append(p.b, 0)[:len(p.b)]
	}
	for {
		n, err := p.r.Read(p.b[len(p.b):cap(p.b)])
		p.b = p.b[:len(p.b)+n]
		if err != nil {
			if err != io.EOF {
				p.rerr = err
			}
			p.r = nil
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// ensure reports whether n bytes from the cursor are in the window,
// reading more as needed.
func (p *scanner) ensure(n int) bool {
	for len(p.b)-p.i < n {
		if !p.fill() {
			return false
		}
	}
	return true
}

// has reports whether the byte at i (at or after the cursor) is in the
// window, reading more as needed.
func (p *scanner) has(i int) bool { return i < len(p.b) || p.ensure(i-p.i+1) }

// shift drops the bytes read from the window, between two series (where
// nothing holds a slice of them), once they are half of it.
func (p *scanner) shift() {
	if p.i < windowSize/2 || p.i < len(p.b)/2 {
		return
	}
	n := copy(p.b, p.b[p.i:])
	p.b = p.b[:n]
	p.base += p.i
	p.i = 0
}

// scanner is one pass over an answer's bytes.
type scanner struct {
	b []byte // the window: the answer's bytes from base on, read so far
	i int
	// r reads the rest of the answer (nil: read whole, or ended); rerr
	// is the read error that ended it early.
	r    io.Reader
	rerr error
	base int
	d    *decoder
	lim  *refreshLimits
	up   bool
}

// syntaxError is JSON that is not JSON, with the offset it breaks at.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

func (p *scanner) fail(format string, args ...any) error {
	return &syntaxError{fmt.Sprintf(format, args...), p.base + p.i}
}

func (p *scanner) ws() {
	for p.has(p.i) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (p *scanner) peek() byte {
	p.ws()
	if !p.has(p.i) {
		return 0
	}
	return p.b[p.i]
}

func (p *scanner) expect(c byte) error {
	if got := p.peek(); got != c {
		if got == 0 {
			return p.fail("unexpected end of the answer, want %q", c)
		}
		return p.fail("want %q, got %q", c, got)
	}
	p.i++
	return nil
}

// more reads the separator after a member or element: true for a comma,
// false for the closing bracket.
func (p *scanner) more(end byte) (bool, error) {
	switch c := p.peek(); c {
	case ',':
		p.i++
		return true, nil
	case end:
		p.i++
		return false, nil
	case 0:
		return false, p.fail("unexpected end of the answer, want ',' or %q", end)
	default:
		return false, p.fail("want ',' or %q, got %q", end, c)
	}
}

// object calls member for each key of the object at the cursor, the
// cursor then on the key's value; member must read that value.
func (p *scanner) object(member func(key []byte) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.peek() == '}' {
		p.i++
		return nil
	}
	for {
		if p.peek() != '"' {
			return p.fail("want an object key")
		}
		k, err := p.str()
		if err != nil {
			return err
		}
		if err := p.expect(':'); err != nil {
			return err
		}
		p.ws()
		if err := member(k); err != nil {
			return err
		}
		if more, err := p.more('}'); err != nil || !more {
			return err
		}
	}
}

// array calls elem for each element of the array at the cursor.
func (p *scanner) array(elem func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	if p.peek() == ']' {
		p.i++
		return nil
	}
	for {
		p.ws()
		if err := elem(); err != nil {
			return err
		}
		if more, err := p.more(']'); err != nil || !more {
			return err
		}
	}
}

// str reads the string at the cursor and returns its text, unescaped
// (invalid UTF-8 and lone surrogates as U+FFFD, as encoding/json reads
// them). The bytes are the answer's own or the decoder's scratch: good
// until the next str.
func (p *scanner) str() ([]byte, error) {
	if p.peek() != '"' {
		return nil, p.fail("want a string")
	}
	p.i++
	start := p.i
	i := p.i
	for {
		b := p.b
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i < len(b) || !p.fill() {
			break
		}
	}
	b := p.b
	p.i = i
	switch {
	case i == len(b):
		return nil, p.fail("unterminated string")
	case b[i] == '"':
		p.i++
		return b[start:i], nil
	case b[i] < 0x20:
		return nil, p.fail("control character %#x in a string", b[i])
	}
	return p.slowStr(start) // an escape or UTF-8
}

// plain are the bytes a string holds as they are: not its end, an escape,
// a control character or a byte of a multi-byte rune.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// slowStr unescapes a string that holds an escape or a non-ASCII byte.
func (p *scanner) slowStr(start int) ([]byte, error) {
	out := append(p.d.scratch[:0], p.b[start:p.i]...)
	for p.has(p.i) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			p.d.scratch = out
			return out, nil
		case c < 0x20:
			return nil, p.fail("control character %#x in a string", c)
		case c >= utf8.RuneSelf:
			p.ensure(utf8.UTFMax)
			r, n := utf8.DecodeRune(p.b[p.i:])
			p.i += n
			out = utf8.AppendRune(out, r) // RuneError for an invalid byte
		case c != '\\':
			out = append(out, c)
			p.i++
		default:
			if !p.ensure(2) {
				return nil, p.fail("unterminated string")
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return nil, p.fail("bad \\u escape")
				}
				if utf16.IsSurrogate(r) {
					// a pair is one rune; a lone half is U+FFFD and the
					// escape after it stands on its own
					save := p.i
					dec := utf8.RuneError
					if p.ensure(2) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						p.i += 2
						if r2, ok := p.hex4(); ok {
							dec = utf16.DecodeRune(r, r2)
						}
					}
					if dec == utf8.RuneError {
						p.i = save
					}
					r = dec
				}
				out = utf8.AppendRune(out, r)
			default:
				return nil, p.fail("bad escape \\%c", e)
			}
		}
	}
	return nil, p.fail("unterminated string")
}

// hex4 reads the four hex digits of a \u escape.
func (p *scanner) hex4() (rune, bool) {
	if !p.ensure(4) {
		return 0, false
	}
	r, ok := hexRune(p.b[p.i : p.i+4])
	p.i += 4
	return r, ok
}

func hexRune(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// number reads a JSON number (RFC 8259's grammar).
func (p *scanner) number() error {
	p.ensure(32) // most numbers: the loops below then run in the window
	i := p.i
	b := p.b
	// at reports whether the byte at i is in the window, reading more (and
	// taking the grown window) only at its end.
	at := func() bool {
		if i < len(b) {
			return true
		}
		ok := p.has(i)
		b = p.b
		return ok
	}
	digits := func() int {
		n := 0
		for at() && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if at() && b[i] == '-' {
		i++
	}
	switch {
	case at() && b[i] == '0':
		i++
	case digits() == 0:
		return p.fail("bad number")
	}
	if at() && b[i] == '.' {
		i++
		if digits() == 0 {
			return p.fail("bad number")
		}
	}
	if at() && (b[i] == 'e' || b[i] == 'E') {
		i++
		if at() && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return p.fail("bad number")
		}
	}
	p.i = i
	return nil
}

// literal reads true, false or null.
func (p *scanner) literal(word string) error {
	if !p.ensure(len(word)) || string(p.b[p.i:p.i+len(word)]) != word {
		return p.fail("bad literal")
	}
	p.i += len(word)
	return nil
}

// skip reads any value and checks it is JSON, without building it (no
// recursion: a deeply nested answer cannot exhaust the stack).
func (p *scanner) skip() error {
	open := p.d.open[:0] // the closing bracket of each container open
	defer func() { p.d.open = open[:0] }()
	for {
		// a value at the cursor
		switch c := p.peek(); c {
		case '{', '[':
			if len(open) >= maxDepth {
				return p.fail("nested too deep")
			}
			p.i++
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if p.peek() == end {
				p.i++
				break // empty: a value read
			}
			open = append(open, end)
			if end == '}' {
				if err := p.key(); err != nil {
					return err
				}
			}
			continue // its first value
		case '"':
			if _, err := p.str(); err != nil {
				return err
			}
		case 't':
			if err := p.literal("true"); err != nil {
				return err
			}
		case 'f':
			if err := p.literal("false"); err != nil {
				return err
			}
		case 'n':
			if err := p.literal("null"); err != nil {
				return err
			}
		case 0:
			return p.fail("unexpected end of the answer")
		default:
			if c != '-' && (c < '0' || c > '9') {
				return p.fail("unexpected %q", c)
			}
			if err := p.number(); err != nil {
				return err
			}
		}
		// a value was read: its separator, or the containers it ends
		for {
			if len(open) == 0 {
				return nil
			}
			end := open[len(open)-1]
			c := p.peek()
			if c == ',' {
				p.i++
				if end == '}' {
					if err := p.key(); err != nil {
						return err
					}
				}
				break
			}
			if c != end {
				return p.fail("want ',' or %q, got %q", end, c)
			}
			p.i++
			open = open[:len(open)-1]
		}
	}
}

// key reads an object key and its colon.
func (p *scanner) key() error {
	if p.peek() != '"' {
		return p.fail("want an object key")
	}
	if _, err := p.str(); err != nil {
		return err
	}
	return p.expect(':')
}

// stringOrNull reads a string ("" for null).
func (p *scanner) stringOrNull(what string) (string, error) {
	switch p.peek() {
	case 'n':
		return "", p.literal("null")
	case '"':
		s, err := p.str()
		return string(s), err
	}
	return "", p.fail("%s is not a string", what)
}
