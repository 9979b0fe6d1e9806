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
}

func newInterner() *interner {
	return &interner{cur: map[string]*string{}, prev: map[string]*string{}}
}

// next starts a parse: this one's strings become the last one's.
func (in *interner) next() {
	in.prev, in.cur = in.cur, in.prev
	clear(in.cur)
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

// count is a whole count in a slab, as float is a value.
func (p *textParser) count(v float64) *uint64 {
	if len(p.counts) == cap(p.counts) {
		p.counts = make([]uint64, 0, 256)
	}
	p.counts = append(p.counts, uint64(v))
	return &p.counts[len(p.counts)-1]
}

func (p *textParser) float(v float64) *float64 {
	if len(p.floats) == cap(p.floats) {
		p.floats = make([]float64, 0, 512)
	}
	p.floats = append(p.floats, v)
	return &p.floats[len(p.floats)-1]
}

func (p *textParser) pair(name, value *string) *dto.LabelPair {
	if len(p.pairs) == cap(p.pairs) {
		p.pairs = make([]dto.LabelPair, 0, 256)
	}
	p.pairs = p.pairs[:len(p.pairs)+1]
	lp := &p.pairs[len(p.pairs)-1]
	lp.Name, lp.Value = name, value
	return lp
}

func (p *textParser) newBucket(ub float64) *dto.Bucket {
	if len(p.bucket) == cap(p.bucket) {
		p.bucket = make([]dto.Bucket, 0, 256)
	}
	p.bucket = p.bucket[:len(p.bucket)+1]
	b := &p.bucket[len(p.bucket)-1]
	b.UpperBound = p.float(ub)
	return b
}

// series is the histogram or summary series of the labels just read:
// expfmt groups a family's samples by their labels without le/quantile,
// wherever they stand in the body, and keeps the labels of the first.
func (p *textParser) series(f *dto.MetricFamily) *dto.Metric {
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
	if m, ok := p.byKey[string(p.key)]; ok {
		return m
	}
	m := &dto.Metric{}
	p.byKey[string(p.key)] = m
	f.Metric = append(f.Metric, m)
	if isHist(f) {
		p.hists = append(p.hists, m)
	}
	return m
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
		m.Counter = &dto.Counter{Value: p.float(v)}
	case dto.MetricType_GAUGE:
		m.Gauge = &dto.Gauge{Value: p.float(v)}
	case dto.MetricType_UNTYPED:
		m.Untyped = &dto.Untyped{Value: p.float(v)}
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
			m.Histogram = &dto.Histogram{}
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
	}
	return true
}
