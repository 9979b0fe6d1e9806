package prometheus

import (
	"bytes"
	"errors"
	"io"
	"strconv"
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
	// ts is the text of the timestamp of the last value read in full
	// (heldValue): an answer's values share one.
	ts []byte
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
	// vtext is the text of the series' last value as written, and v and
	// good what it read as (heldValue): a steady fleet's values are the
	// same text refresh after refresh. vlen 0: none kept.
	vtext [24]byte
	vlen  uint8
	vgood bool
	v     float64
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
		if v, good, ok := p.heldValue(r.memo); ok && good && p.has(p.i) && p.b[p.i] == '}' {
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

// heldValue is plainValue for series m: a timestamp written as the last
// one read in full is not read again (its text was a number then), and a
// value written as m's last reads as it did, without parsing it. Equal to
// plainValue (TestHeldValuesReadAsPlainValues).
func (p *scanner) heldValue(m *rowMemo) (v float64, good, ok bool) {
	p.ensure(96) // as plainValue
	b, i := p.b, p.i
	ts := p.d.ts
	j := i + 1 + len(ts)
	if len(ts) == 0 || j+1 >= len(b) || b[i] != '[' || string(b[i+1:j]) != string(ts) || b[j] != ',' || b[j+1] != '"' {
		v, good, ok = p.plainValue()
		if ok {
			// the timestamp read in full, kept for the next series
			t := p.b[i+1 : p.i]
			if c := bytes.IndexByte(t, ','); c > 0 {
				p.d.ts = append(p.d.ts[:0], t[:c]...)
			}
			m.vlen = 0
		}
		return v, good, ok
	}
	k := j + 2
	for k < len(b) && plain[b[k]] {
		k++
	}
	if k+1 >= len(b) || b[k] != '"' || b[k+1] != ']' {
		return p.plainValue() // not as Prometheus writes it: read the long way
	}
	text := b[j+2 : k]
	p.i = k + 2
	if n := int(m.vlen); n > 0 && n == len(text) && string(m.vtext[:n]) == string(text) {
		return m.v, m.vgood, true
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if len(text) > 0 && len(text) <= len(m.vtext) {
		m.vlen = uint8(copy(m.vtext[:], text))
		m.v, m.vgood = f, err == nil
	} else {
		m.vlen = 0
	}
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
