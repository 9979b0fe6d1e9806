package prometheus

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// decoder reads the answers of one query slot of the refresh, refresh
// after refresh: its rows are reused, and the label values
// it reads are interned, so a fleet whose targets and label sets did not
// change allocates no string for them. The answer is read in one pass as
// it arrives, through a window of the body's bytes kept from answer to
// answer (buf: the bytes of the series being read and what follows; the
// answer is never held whole), into only the labels llmtop reads
// (rowLabels); the rest of the JSON is checked and skipped. A decoder is
// used by one goroutine at a time.
type decoder struct {
	buf     []byte
	rows    []sampleRow
	strs    map[string]string
	scratch []byte
	open    []byte
	// memo holds the labels of each series kept, by the bytes of its
	// "metric" object as the answer wrote them: a series whose labels
	// are the same bytes as in an earlier answer is not parsed again (a
	// fleet's label sets rarely change; its values change every refresh,
	// and each is read anew). Its entries are read-only once made; gen
	// counts the answers read, and an entry not seen in the last one is
	// dropped when the stale ones outnumber half the live ones.
	memo map[string]*rowMemo
	gen  uint32
	// seq are the series of the last answer in its order, and next
	// this one's: an answer's series mostly come in the same order as the
	// last's, and the one after a series held is tried first, before the
	// memo's map.
	seq, next []*rowMemo
}

type rowMemo struct {
	labels rowLabels
	key    string // the bytes of its "metric" object
	seen   uint32 // the gen of the last answer that held the series
	pos    int32  // where it stood among that answer's rows
	// followed is the refreshLimits.ver under which it was a followed
	// target's (0: not known to be).
	followed uint64
	// plan is how the fleet read the series (fleet.go): made by the
	// fleet after the answer is read, never while it is.
	plan rowPlan
}

// maxInterned bounds a decoder's interned strings: past it the table
// starts again (a fleet whose label values churn must not grow it).
const maxInterned = 1 << 16

// maxHeld bounds the series a decoder holds (decoder.memo: about 400
// bytes each): those past it are read anew every time (a fleet of 2 000
// vLLM replicas answers 38 000 series to its largest query).
const maxHeld = 1 << 16

// maxDepth bounds the nesting of the JSON skipped (encoding/json's bound).
const maxDepth = 10000

func newDecoder() *decoder {
	return &decoder{strs: map[string]string{}, memo: map[string]*rowMemo{}}
}

// decodeAnswer reads one answer with a decoder of its own (tests; the
// source reuses one per query slot).
func decodeAnswer(r io.Reader, lim *refreshLimits, up bool) (apiAnswer, error) {
	return newDecoder().decode(r, lim, up)
}

// decode reads the API's JSON envelope
// ({"status","data":{"resultType","result":[...]},"warnings","infos","errorType","error"}),
// https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview.
// The rows it returns are the decoder's: they are good until its next
// decode.
func (d *decoder) decode(r io.Reader, lim *refreshLimits, up bool) (apiAnswer, error) {
	if d.buf == nil {
		d.buf = make([]byte, 0, windowSize)
	}
	p := scanner{b: d.buf[:0], r: r, d: d, lim: lim, up: up}
	a, err := p.answer()
	if err == nil {
		// What follows the JSON is read to the end (into the window,
		// under the refresh's bound): a body not read to its end closes
		// the connection instead of keeping it for the next query.
		for p.r != nil {
			p.b, p.i = p.b[:0], 0
			p.fill()
		}
	}
	if cap(p.b) <= maxWindow {
		d.buf = p.b[:0]
	} else {
		d.buf = nil // grown for an outsized series: not kept
	}
	if p.rerr != nil {
		var ce *cappedError
		if errors.As(p.rerr, &ce) {
			return apiAnswer{}, budgetError{ce.msg}
		}
		return apiAnswer{}, p.rerr
	}
	return a, err
}

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

// intern returns s as a string, the same string for the same bytes while
// the table lasts.
func (d *decoder) intern(s []byte) string {
	if v, ok := d.strs[string(s)]; ok {
		return v
	}
	if len(s) > maxLabelLen {
		return string(s) // dropped as too long anyway: not kept
	}
	if len(d.strs) >= maxInterned {
		clear(d.strs)
	}
	v := string(s)
	d.strs[v] = v
	return v
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

func (p *scanner) answer() (apiAnswer, error) {
	var a apiAnswer
	err := p.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "status":
			a.Status, err = p.stringOrNull("status")
		case "errorType":
			a.ErrorType, err = p.stringOrNull("errorType")
		case "error":
			a.Error, err = p.stringOrNull("error")
		case "warnings", "infos":
			if p.peek() == 'n' {
				return p.literal("null")
			}
			err = p.array(func() error {
				w, err := p.stringOrNull("a warning")
				if err == nil && len(a.Warnings) < maxWarnings {
					a.Warnings = append(a.Warnings, truncate(w, 512))
				}
				return err
			})
		case "data":
			err = p.data(&a)
		default:
			err = p.skip()
		}
		return err
	})
	return a, err
}

func (p *scanner) data(a *apiAnswer) error {
	switch c := p.peek(); c {
	case 'n':
		return p.literal("null") // an error answer
	case '{':
	default:
		return p.fail("data is not an object")
	}
	return p.object(func(k []byte) error {
		var err error
		switch string(k) {
		case "resultType":
			a.ResultType, err = p.stringOrNull("resultType")
		case "result":
			err = p.result(a)
		default:
			err = p.skip()
		}
		return err
	})
}

func (p *scanner) result(a *apiAnswer) error {
	switch p.peek() {
	case '[':
	case '{':
		return p.fail("result is an object, want a list")
	default:
		// a scalar or string result ([time, "value"] is a list, this is
		// neither): refused by its resultType
		return p.skip()
	}
	var over, bad, long int
	a.Rows = p.d.rows[:0]
	d := p.d
	d.gen++
	d.next = d.next[:0]
	err := p.array(func() error {
		p.shift()
		if p.peek() != '{' {
			bad++ // not a series
			return p.skip()
		}
		var r rowRead
		if n := len(d.next); n > 0 {
			r.after = int(d.next[n-1].pos) + 1
		}
		ok, err := true, error(nil)
		if !p.heldRow(&r) {
			ok, err = p.row(&r)
		}
		ls := &r.labels
		if r.memo != nil {
			ls = &r.memo.labels
		}
		switch {
		case err != nil:
			return err
		case !ok:
			bad++ // the series was read whole; its value or a label was not what the API writes
		case len(a.Rows) >= p.lim.maxSeries:
			over++
		case r.memo == nil && ls.tooLong(): // a series held was not
			long++
		default:
			followed := r.memo != nil && r.memo.followed == p.lim.ver && p.lim.ver != 0
			if k := keyOf(ls); k != (tkey{}) && !followed {
				ok, known := p.lim.admit(k, p.up)
				if !ok {
					return nil
				}
				followed = known
			}
			m := r.memo
			if m == nil {
				m = &rowMemo{labels: r.labels}
				if r.key != nil && len(d.memo) < maxHeld {
					m.key = string(r.key)
					d.memo[m.key] = m
				}
			}
			if followed {
				m.followed = p.lim.ver
			}
			if m.seen != d.gen {
				m.seen, m.pos = d.gen, int32(len(d.next))
				d.next = append(d.next, m)
			}
			a.Rows = append(a.Rows, sampleRow{labels: &m.labels, plan: &m.plan, v: r.v})
		}
		return nil
	})
	if n := len(d.memo); n > len(a.Rows)+len(a.Rows)/2+256 {
		for k, m := range d.memo {
			if m.seen != d.gen {
				delete(d.memo, k) // rows that hold it keep it
			}
		}
	}
	clear(a.Rows[len(a.Rows):cap(a.Rows)]) // no labels kept alive by the slack
	clear(d.seq)
	d.seq, d.next = d.next, d.seq[:0]
	p.d.rows = a.Rows
	if n := len(a.Rows); cap(a.Rows)-n > n/4+64 {
		// grown by doubling: the next answer gets a slice of this one's
		// size rather than the slack kept for ever (a row is 224 bytes)
		p.d.rows = make([]sampleRow, 0, n+n/8)
	}
	p.lim.count(over, bad, long)
	return err
}

// rowRead is one series as row read it: its labels are memo's when the
// bytes of its "metric" object are a series' the decoder holds, else
// labels, read from key (nil when they cannot be held: a row with two
// "metric" objects).
type rowRead struct {
	memo   *rowMemo
	labels rowLabels
	key    []byte
	v      float64
	// after is where the series is likely among the last answer's
	// (decoder.seq): the one after the last series read.
	after int
}

// row reads one series; ok is false when it is JSON but not a series
// (a label that is not a string, a value that is not [time, "float"]).
func (p *scanner) row(r *rowRead) (ok bool, err error) {
	ok = true
	seen, metric := false, false
	err = p.object(func(k []byte) error {
		switch string(k) {
		case "metric":
			if p.peek() == 'n' {
				return p.literal("null")
			}
			if p.peek() != '{' {
				ok = false
				return p.skip()
			}
			first := !metric && r.memo == nil
			metric = true
			if first {
				if r.memo = p.held(r.after); r.memo != nil {
					return nil
				}
			} else if r.memo != nil {
				// a second "metric": read over the first, as encoding/json
				// does, into a copy (the held labels are never written)
				r.labels, r.memo = r.memo.labels, nil
				if rare := r.labels.rare; rare != nil {
					c := *rare
					r.labels.rare = &c
				}
			}
			start := p.i
			err := p.object(func(name []byte) error {
				to := r.labels.field(name)
				if to == nil {
					return p.skip()
				}
				switch p.peek() {
				case 'n':
					return p.literal("null")
				case '"':
					v, err := p.str()
					if err == nil {
						*to = p.d.intern(v)
					}
					return err
				}
				ok = false
				return p.skip()
			})
			if first {
				r.key = p.b[start:p.i]
			} else {
				r.key = nil
			}
			return err
		case "value":
			seen = true
			v, good, err := p.value()
			r.v, ok = v, ok && good
			return err
		default:
			return p.skip() // "histogram" (a native histogram's sample) and what else comes
		}
	})
	return ok && seen, err
}

// held is the series held whose "metric" object is the one at the cursor,
// read past it; nil when none is. The same bytes as a series already read
// are the same labels (they were checked as JSON then): the object ends
// where those bytes end. The series after the last one read (after) is
// tried first.
func (p *scanner) held(after int) *rowMemo {
	if seq := p.d.seq; after < len(seq) {
		if m := seq[after]; m.key != "" && p.ensure(len(m.key)) && string(p.b[p.i:p.i+len(m.key)]) == m.key {
			p.i += len(m.key)
			return m
		}
	}
	if end := p.objectEnd(); end > 0 {
		if m := p.d.memo[string(p.b[p.i:end])]; m != nil {
			p.i = end
			return m
		}
	}
	return nil
}

// heldRow reads a series of labels held, written as Prometheus writes it
// ({"metric":{...},"value":[time,"value"]}, no white space); false, the
// cursor where it was, for anything else (row reads it the long way).
func (p *scanner) heldRow(r *rowRead) bool {
	const metric, value = `{"metric":`, `,"value":`
	i := p.i
	if !p.ensure(len(metric)) || string(p.b[i:i+len(metric)]) != metric {
		return false
	}
	p.i += len(metric)
	if r.memo = p.held(r.after); r.memo == nil {
		p.i = i
		return false
	}
	if p.ensure(len(value)) && string(p.b[p.i:p.i+len(value)]) == value {
		p.i += len(value)
		if v, good, ok := p.plainValue(); ok && good && p.has(p.i) && p.b[p.i] == '}' {
			p.i++
			r.v = v
			return true
		}
	}
	p.i, r.memo = i, nil
	return false
}

// objectEnd is the offset just past the object at the cursor, found by
// its brackets and strings alone (not checked as JSON); 0 when the answer
// ends first.
func (p *scanner) objectEnd() int {
	depth := 0
	for i := p.i; p.has(i); i++ {
		switch p.b[i] {
		case '"':
			for i++; p.has(i) && p.b[i] != '"'; i++ {
				if p.b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// value reads an instant sample's [time, "value"]: good is false when it
// is JSON of another shape or the text is no float64 ("1e400", "x").
// "NaN", "+Inf" and "-Inf" are values.
func (p *scanner) value() (v float64, good bool, err error) {
	if v, good, ok := p.plainValue(); ok {
		return v, good, nil
	}
	if p.peek() != '[' {
		return 0, false, p.skip()
	}
	n := 0
	err = p.array(func() error {
		n++
		switch {
		case n == 2 && p.peek() == '"':
			start := p.i + 1
			if _, err := p.str(); err != nil {
				return err
			}
			// the text as written: a number has no escapes
			f, perr := strconv.ParseFloat(string(p.b[start:p.i-1]), 64)
			if perr == nil {
				v, good = f, true
			}
			return nil
		case n == 1 && (p.peek() == '-' || p.peek() >= '0' && p.peek() <= '9'):
			return p.number()
		}
		good = false
		n = 3 // not [time, "value"]: whatever follows does not mend it
		return p.skip()
	})
	return v, good && n == 2, err
}

// plainValue reads [time,"value"] as Prometheus writes it, without white
// space or escapes; ok is false, the cursor where it was, for anything
// else (value reads it the long way).
func (p *scanner) plainValue() (v float64, good, ok bool) {
	p.ensure(96) // a timestamp and a float's text, as written
	b, i := p.b, p.i
	if i >= len(b) || b[i] != '[' {
		return 0, false, false
	}
	p.i = i + 1
	if p.i >= len(b) || b[p.i] != '-' && (b[p.i] < '0' || b[p.i] > '9') || p.number() != nil {
		p.i = i
		return 0, false, false
	}
	b = p.b
	j := p.i
	if j+1 >= len(b) || b[j] != ',' || b[j+1] != '"' {
		p.i = i
		return 0, false, false
	}
	k := j + 2
	for k < len(b) && plain[b[k]] {
		k++
	}
	if k+1 >= len(b) || b[k] != '"' || b[k+1] != ']' {
		p.i = i
		return 0, false, false
	}
	p.i = k + 2
	f, err := strconv.ParseFloat(string(b[j+2:k]), 64)
	return f, err == nil, true
}

// field is where the label of that name goes (nil: a label llmtop does not
// read).
func (l *rowLabels) field(name []byte) *string {
	switch string(name) {
	case "job":
		return &l.Job
	case "instance":
		return &l.Instance
	case "model_name":
		return &l.Model
	case conceptLabel:
		return &l.Concept
	case fromLabel:
		return &l.From
	}
	var to func(r *rareLabels) *string
	switch string(name) {
	case "pod":
		to = func(r *rareLabels) *string { return &r.Pod }
	case "namespace":
		to = func(r *rareLabels) *string { return &r.Namespace }
	case "kubernetes_pod_name":
		to = func(r *rareLabels) *string { return &r.KPod }
	case "kubernetes_namespace":
		to = func(r *rareLabels) *string { return &r.KNs }
	case "engine_type":
		to = func(r *rareLabels) *string { return &r.EngineType }
	case "llm_isvc_role":
		to = func(r *rareLabels) *string { return &r.ISvcRole }
	case "worker_type":
		to = func(r *rareLabels) *string { return &r.WorkerType }
	case "disaggregation_mode":
		to = func(r *rareLabels) *string { return &r.DisaggMode }
	case "server":
		to = func(r *rareLabels) *string { return &r.Server }
	default:
		return nil
	}
	if l.rare == nil {
		l.rare = &rareLabels{}
	}
	return to(l.rare)
}
