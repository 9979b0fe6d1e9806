package engine

import (
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Where fastParse keeps what it read: values in slabs (one allocation for
// many), names and label values once, histogram and summary series by
// their labels, as expfmt groups them.

func (p *textParser) str(b []byte) *string { return p.strs.get(b) }

// interner holds each distinct name, label value and help text of a
// parse once, and across a session's scrapes those of the last parse too:
// a steady scrape's strings are the last one's, so they are not allocated
// again. The families share them read-only (nothing writes through a
// family's *string). Only the last parse's strings are kept, so a series
// that went away is forgotten a scrape later.
type interner struct {
	cur, prev map[string]*string
	// lines and prevLines remember sample lines, this parse's and the
	// last one's, as cur and prev do strings.
	lines, prevLines map[string]*lineMemo
	// last is what the last parse used.
	last parseSizes
	// the parser's scratch, kept for the next parse
	key          []byte
	lbls, sorted []*dto.LabelPair
}

func newInterner() *interner {
	return &interner{cur: map[string]*string{}, prev: map[string]*string{},
		lines: map[string]*lineMemo{}, prevLines: map[string]*lineMemo{}}
}

// next starts a parse: this one's strings become the last one's.
func (in *interner) next() {
	in.prev, in.cur = in.cur, in.prev
	clear(in.cur)
	in.prevLines, in.lines = in.lines, in.prevLines
	clear(in.lines)
}

func (in *interner) get(b []byte) *string {
	if s, ok := in.cur[string(b)]; ok {
		return s
	}
	if s, ok := in.prev[string(b)]; ok {
		in.cur[*s] = s
		return s
	}
	s := string(b)
	in.cur[s] = &s
	return &s
}

// slab hands out zeroed values of T from chunks: one allocation for many
// small values that all live as long as the parse. The first chunk is as
// large as the last parse needed (a steady parse allocates one), the
// others n.
type slab[T any] struct {
	s    []T
	n    int
	used int
}

func (s *slab[T]) next() *T {
	if len(s.s) == cap(s.s) {
		s.s = make([]T, 0, max(s.n, 16))
	}
	s.used++
	s.s = s.s[:len(s.s)+1]
	return &s.s[len(s.s)-1]
}

// sized starts a slab whose first chunk holds last values.
func sized[T any](last, n int) slab[T] {
	if last == 0 {
		return slab[T]{n: n}
	}
	return slab[T]{s: make([]T, 0, last), n: n}
}

// carve hands out an empty slice of *T with room for n from a shared
// chunk. Its capacity is n: an append past it copies, so it never writes
// into the next slice carved.
type carve[T any] struct {
	s    []*T
	used int
}

func (c *carve[T]) of(n int) []*T {
	if cap(c.s)-len(c.s) < n {
		c.s = make([]*T, 0, max(n, 256, c.used/2))
	}
	c.used += n
	i := len(c.s)
	c.s = c.s[:i+n]
	return c.s[i : i : i+n]
}

// carved starts a carve whose first chunk holds last pointers.
func carved[T any](last int) carve[T] {
	return carve[T]{s: make([]*T, 0, last)}
}

// parseSizes is how much of each a parse used: the next parse of a
// session starts its maps and slabs that size instead of growing them.
type parseSizes struct {
	families, series                            int
	floats, counts, pairs, buckets              int
	fams, metrics, counters, gauges, untyped, h int
	mptrs, lptrs, bptrs, hists                  int
}

// count is a whole count in a slab, as float is a value.
func (p *textParser) count(v float64) *uint64 {
	c := p.counts.next()
	*c = uint64(v)
	return c
}

func (p *textParser) float(v float64) *float64 {
	f := p.floats.next()
	*f = v
	return f
}

func (p *textParser) pair(name, value *string) *dto.LabelPair {
	lp := p.pairs.next()
	lp.Name, lp.Value = name, value
	return lp
}

func (p *textParser) newBucket(ub float64) *dto.Bucket {
	b := p.bucket.next()
	b.UpperBound = p.float(ub)
	return b
}

// family starts the family name (the string interned) in the parse.
func (p *textParser) family(name []byte) *dto.MetricFamily {
	f := p.famSlab.next()
	f.Name = p.str(name)
	p.fams[*f.Name] = f
	return f
}

// metric adds a series to f, its labels those just read.
func (p *textParser) metric(f *dto.MetricFamily) *dto.Metric {
	m := p.metrics.next()
	if f.Metric == nil {
		f.Metric = p.mptrs.of(4) // most families have a few series
	}
	f.Metric = append(f.Metric, m)
	if len(p.lbls) > 0 {
		m.Label = append(p.lptrs.of(len(p.lbls)), p.lbls...)
	}
	return m
}

// series is the histogram or summary series of the labels just read, and
// its key: expfmt groups a family's samples by their labels without
// le/quantile, wherever they stand in the body, and keeps the labels of the
// first.
func (p *textParser) series(f *dto.MetricFamily) (*dto.Metric, *string) {
	p.key = append(p.key[:0], *f.Name...)
	p.sorted = append(p.sorted[:0], p.lbls...)
	sorted := p.sorted
	slices.SortFunc(sorted, func(a, b *dto.LabelPair) int { return strings.Compare(*a.Name, *b.Name) })
	for _, l := range sorted {
		p.key = append(p.key, 0xff)
		p.key = append(p.key, *l.Name...)
		p.key = append(p.key, 0xfe)
		p.key = append(p.key, *l.Value...)
	}
	key := p.str(p.key) // interned: a steady parse's are the last one's
	if m, ok := p.byKey[*key]; ok {
		return m, key
	}
	m := p.metric(f)
	p.byKey[*key] = m
	if isHist(f) {
		p.hists = append(p.hists, m)
	}
	return m, key
}

// metricLabels adds a series to f whose labels are a remembered line's
// (shared read-only, as the strings are: nothing writes a series' labels).
func (p *textParser) metricLabels(f *dto.MetricFamily, labels []*dto.LabelPair) *dto.Metric {
	m := p.metrics.next()
	if f.Metric == nil {
		f.Metric = p.mptrs.of(4)
	}
	f.Metric = append(f.Metric, m)
	m.Label = labels
	return m
}

// lineMemo is what the full reading of a sample line found, for the next
// line with the same name and labels (see remembered).
type lineMemo struct {
	head        string // the line up to its value, the memo's key
	nameLen     int
	fam         *string // the family it resolved to
	special     string  // the label set apart ("le", "quantile", "") for that family's type
	labels      []*dto.LabelPair
	specialVal  float64
	haveSpecial bool
	key         *string // a histogram's or summary's series
}

// maxLines bounds the lines a session remembers (a scrape of a hundred
// thousand series is read in full).
const maxLines = 20_000

// line is the memo of a line head, this parse's or the last one's.
func (in *interner) line(head []byte) *lineMemo {
	if e, ok := in.lines[string(head)]; ok {
		return e
	}
	if e, ok := in.prevLines[string(head)]; ok && len(in.lines) < maxLines {
		in.lines[e.head] = e
		return e
	}
	return nil
}

// remember keeps e for the line head (trailing blanks cut).
func (in *interner) remember(head []byte, e *lineMemo) {
	for len(head) > 0 && (head[len(head)-1] == ' ' || head[len(head)-1] == '\t') {
		head = head[:len(head)-1]
	}
	if len(in.lines) >= maxLines {
		return
	}
	if _, ok := in.lines[string(head)]; ok {
		return
	}
	e.head = string(head)
	in.lines[e.head] = e
}

// normalizeHistogram is expfmt's: a histogram with any fractional count
// has all its counts as floats.
func normalizeHistogram(h *dto.Histogram) {
	if h == nil {
		return
	}
	anyFloats := h.GetSampleCountFloat() != 0
	for _, b := range h.GetBucket() {
		anyFloats = anyFloats || b.GetCumulativeCountFloat() != 0
	}
	if !anyFloats {
		return
	}
	if h.GetSampleCountFloat() == 0 {
		c := float64(h.GetSampleCount())
		h.SampleCountFloat, h.SampleCount = &c, nil
	}
	for _, b := range h.GetBucket() {
		if b.GetCumulativeCountFloat() == 0 {
			c := float64(b.GetCumulativeCount())
			b.CumulativeCountFloat, b.CumulativeCount = &c, nil
		}
	}
}

// store puts value v of a sample into its series m as the family's type
// and the sample's role say; false where expfmt would not take it as is.
func (p *textParser) store(m *dto.Metric, typ dto.MetricType, role sampleRole, special, v float64) bool {
	switch typ {
	case dto.MetricType_COUNTER:
		m.Counter = p.counters.next()
		m.Counter.Value = p.float(v)
	case dto.MetricType_GAUGE:
		m.Gauge = p.gauges.next()
		m.Gauge.Value = p.float(v)
	case dto.MetricType_UNTYPED:
		m.Untyped = p.untyped.next()
		m.Untyped.Value = p.float(v)
	case dto.MetricType_SUMMARY:
		if m.Summary == nil {
			m.Summary = &dto.Summary{}
		}
		switch role {
		case roleCount:
			if !(v >= 0 && v < 1<<63) {
				return false
			}
			m.Summary.SampleCount = p.count(v)
		case roleSum:
			m.Summary.SampleSum = p.float(v)
		default:
			m.Summary.Quantile = append(m.Summary.Quantile, &dto.Quantile{Quantile: p.float(special), Value: p.float(v)})
		}
	default: // histograms
		if m.Histogram == nil {
			m.Histogram = p.histos.next()
			// room for as many buckets as the longest series so far
			m.Histogram.Bucket = p.bptrs.of(p.lastBuckets)
		}
		h := m.Histogram
		if role == roleSum {
			h.SampleSum = p.float(v)
			return true
		}
		if !(v >= 0 && v < 1<<63) {
			return false
		}
		whole := v == float64(uint64(v))
		if role == roleCount {
			if whole {
				h.SampleCount = p.count(v)
			} else {
				h.SampleCountFloat = p.float(v)
			}
			return true
		}
		b := p.newBucket(special)
		if whole {
			b.CumulativeCount = p.count(v)
		} else {
			b.CumulativeCountFloat = p.float(v)
		}
		h.Bucket = append(h.Bucket, b)
		p.lastBuckets = max(p.lastBuckets, len(h.Bucket))
	}
	return true
}
