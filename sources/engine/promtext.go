package engine

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
)

// fastParse reads the Prometheus text format the way expfmt's TextParser
// does, for the shape every engine writes: plain metric and label names,
// quoted label values, HELP/TYPE before samples. It exists for the
// monitor's cost: expfmt allocates per byte token (about 12 000
// allocations and 1.7 ms for a vLLM scrape of 400 lines), and the monitor
// scrapes every second.
//
// It never decides anything expfmt would decide differently: at the first
// line outside that shape (a quoted name, a repeated HELP or TYPE, a
// sample without its bucket bound, a value expfmt would refuse…) it
// returns ok=false and the caller parses the body with expfmt, whose
// result and error messages then stand. TestFastParseMatchesExpfmt and
// FuzzFastParse hold the two to the same families.
func fastParse(body []byte) (map[string]*dto.MetricFamily, bool) {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return nil, false
	}
	p := textParser{
		fams:   map[string]*dto.MetricFamily{},
		byKey:  map[string]*dto.Metric{},
		strs:   map[string]*string{},
		floats: make([]float64, 0, 512),
	}
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		line := body[:i]
		body = body[i+1:]
		if !p.line(line) {
			return nil, false
		}
	}
	for k, f := range p.fams {
		if len(f.Metric) == 0 {
			delete(p.fams, k)
		}
	}
	for _, m := range p.hists {
		normalizeHistogram(m.Histogram)
	}
	return p.fams, true
}

type textParser struct {
	fams  map[string]*dto.MetricFamily
	byKey map[string]*dto.Metric // histogram and summary series by family and labels (expfmt's signature)
	hists []*dto.Metric
	strs  map[string]*string // each distinct name and label value once

	// Slabs: one allocation for many small values that all live as long
	// as the scrape.
	floats []float64
	pairs  []dto.LabelPair
	bucket []dto.Bucket
	key    []byte
	lbls   []*dto.LabelPair
	sorted []*dto.LabelPair
}

func (p *textParser) str(b []byte) *string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	p.strs[s] = &s
	return &s
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

func skipBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// name reads a plain metric (colon true) or label name; ok is false when
// the name is empty or runs into a quote (a UTF-8 name expfmt reads).
func readName(b []byte, colon bool) (name, rest []byte, ok bool) {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || colon && c == ':' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		if c == '"' {
			return nil, nil, false
		}
		break
	}
	return b[:i], b[i:], i > 0
}

// unescape undoes the text format's escapes: \\, \n and \" (label values
// and HELP). ok is false on any other escape.
func unescape(b []byte) ([]byte, bool) {
	if bytes.IndexByte(b, '\\') < 0 {
		return b, true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			out = append(out, b[i])
			continue
		}
		if i++; i == len(b) {
			return nil, false
		}
		switch b[i] {
		case '\\', '"':
			out = append(out, b[i])
		case 'n':
			out = append(out, '\n')
		default:
			return nil, false
		}
	}
	return out, true
}

// textFloat is expfmt's parseFloat.
func textFloat(b []byte) (float64, bool) {
	if len(b) == 0 || bytes.ContainsAny(b, "pP_") {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	return v, err == nil
}

func (p *textParser) line(l []byte) bool {
	l = skipBlank(l)
	switch {
	case len(l) == 0:
		return true
	case l[0] == '#':
		return p.comment(skipBlank(l[1:]))
	default:
		return p.sample(l)
	}
}

func (p *textParser) comment(l []byte) bool {
	end := bytes.IndexAny(l, " \t")
	if end < 0 {
		return true // a lone word: a plain comment
	}
	kw := string(l[:end])
	if kw != "HELP" && kw != "TYPE" {
		return true
	}
	name, rest, ok := readName(skipBlank(l[end:]), true)
	if !ok || len(rest) == 0 || rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	f := p.fams[string(name)]
	if f == nil {
		if _, _, _, found := p.resolve(string(name)); found != nil {
			return false // HELP for X_count of a histogram X: expfmt's corner
		}
		f = &dto.MetricFamily{Name: p.str(name)}
		p.fams[*f.Name] = f
	}
	rest = skipBlank(rest)
	if len(rest) == 0 {
		return true
	}
	if kw == "HELP" {
		if f.Help != nil {
			return false
		}
		h, ok := unescape(rest)
		if !ok {
			return false
		}
		s := string(h)
		f.Help = &s
		return true
	}
	if f.Type != nil {
		return false
	}
	t, ok := dto.MetricType_value[strings.ToUpper(string(rest))]
	if !ok {
		if strings.ToUpper(string(rest)) != "GAUGEHISTOGRAM" {
			return false
		}
		t = int32(dto.MetricType_GAUGE_HISTOGRAM)
	}
	f.Type = dto.MetricType(t).Enum()
	return true
}

// sampleRole is which part of a histogram or summary a sample is.
type sampleRole int

const (
	roleValue sampleRole = iota
	roleCount
	roleSum
)

// resolve finds the family a sample name belongs to, as expfmt does: its
// own, else the summary or histogram it is the _sum, _count or _bucket of.
func (p *textParser) resolve(name string) (f *dto.MetricFamily, role sampleRole, bucket bool, found *dto.MetricFamily) {
	if f = p.fams[name]; f != nil {
		return f, roleValue, false, nil
	}
	role = roleValue
	switch {
	case len(name) > 6 && strings.HasSuffix(name, "_count"):
		role = roleCount
	case len(name) > 4 && strings.HasSuffix(name, "_sum"):
		role = roleSum
	}
	if role != roleValue {
		base := name[:len(name)-len("_sum")]
		if role == roleCount {
			base = name[:len(name)-len("_count")]
		}
		if s := p.fams[base]; s != nil && s.GetType() == dto.MetricType_SUMMARY {
			return s, role, false, s
		}
		if h := p.fams[base]; h != nil && isHist(h) {
			return h, role, false, h
		}
		return nil, roleValue, false, nil
	}
	if len(name) > 7 && strings.HasSuffix(name, "_bucket") {
		if h := p.fams[name[:len(name)-7]]; h != nil && isHist(h) {
			return h, roleValue, true, h
		}
	}
	return nil, roleValue, false, nil
}

func isHist(f *dto.MetricFamily) bool {
	t := f.GetType()
	return t == dto.MetricType_HISTOGRAM || t == dto.MetricType_GAUGE_HISTOGRAM
}

func (p *textParser) sample(l []byte) bool {
	name, rest, ok := readName(l, true)
	if !ok || len(rest) == 0 || rest[0] != ' ' && rest[0] != '\t' && rest[0] != '{' {
		return false
	}
	f, role, isBucket, _ := p.resolve(string(name))
	if f == nil {
		f = &dto.MetricFamily{Name: p.str(name)}
		p.fams[*f.Name] = f
	}
	if f.Type == nil {
		f.Type = dto.MetricType_UNTYPED.Enum()
	}
	typ := f.GetType()
	hist, summ := isHist(f), typ == dto.MetricType_SUMMARY
	special := ""
	switch {
	case hist:
		special = "le"
	case summ:
		special = "quantile"
	}
	// The labels, with le or quantile set apart.
	p.lbls = p.lbls[:0]
	specialVal, haveSpecial := 0.0, false
	rest = skipBlank(rest)
	if len(rest) > 0 && rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = skipBlank(rest)
			if len(rest) == 0 {
				return false
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			var ln []byte
			if ln, rest, ok = readName(rest, false); !ok {
				return false
			}
			rest = skipBlank(rest)
			if len(rest) == 0 || rest[0] != '=' {
				return false
			}
			rest = skipBlank(rest[1:])
			if len(rest) == 0 || rest[0] != '"' {
				return false
			}
			end := closingQuote(rest[1:])
			if end < 0 {
				return false
			}
			raw := rest[1 : 1+end]
			rest = rest[2+end:]
			val, ok := unescape(raw)
			if !ok || !utf8.Valid(val) || string(ln) == "__name__" {
				return false
			}
			if special != "" && string(ln) == special {
				if haveSpecial {
					return false
				}
				v, ok := textFloat(val)
				if !ok || math.IsNaN(v) {
					return false // expfmt keeps no bucket or quantile for NaN
				}
				specialVal, haveSpecial = v, true
			} else {
				for _, o := range p.lbls {
					if *o.Name == string(ln) {
						return false // duplicate label names
					}
				}
				p.lbls = append(p.lbls, p.pair(p.str(ln), p.str(val)))
			}
			rest = skipBlank(rest)
			if len(rest) > 0 && rest[0] == ',' {
				rest = rest[1:]
				continue
			}
			if len(rest) == 0 || rest[0] != '}' {
				return false
			}
		}
		rest = skipBlank(rest)
	}
	// The value, and an optional integer timestamp.
	end := bytes.IndexAny(rest, " \t")
	tok := rest
	var ts []byte
	if end >= 0 {
		tok = rest[:end]
		ts = skipBlank(rest[end:])
		if len(ts) == 0 || bytes.ContainsAny(ts, " \t") {
			return false
		}
	}
	v, ok := textFloat(tok)
	if !ok {
		return false
	}
	var m *dto.Metric
	if hist || summ {
		if role == roleValue && (!isBucket || !haveSpecial) && !(summ && haveSpecial) {
			return false // a sample expfmt would keep without a value
		}
		if isBucket && !hist || role != roleValue && haveSpecial {
			return false
		}
		m = p.series(f)
	} else {
		m = &dto.Metric{}
		f.Metric = append(f.Metric, m)
	}
	if m.Label == nil && len(p.lbls) > 0 {
		m.Label = slices.Clone(p.lbls)
	}
	if ts != nil {
		t, err := strconv.ParseInt(string(ts), 10, 64)
		if err != nil {
			return false
		}
		m.TimestampMs = &t
	}
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
			c := uint64(v)
			m.Summary.SampleCount = &c
		case roleSum:
			m.Summary.SampleSum = p.float(v)
		default:
			m.Summary.Quantile = append(m.Summary.Quantile, &dto.Quantile{Quantile: p.float(specialVal), Value: p.float(v)})
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
				c := uint64(v)
				h.SampleCount = &c
			} else {
				h.SampleCountFloat = p.float(v)
			}
			return true
		}
		b := p.newBucket(specialVal)
		if whole {
			c := uint64(v)
			b.CumulativeCount = &c
		} else {
			b.CumulativeCountFloat = p.float(v)
		}
		h.Bucket = append(h.Bucket, b)
	}
	return true
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

// closingQuote is the index of the quote that ends a label value (escapes
// skipped), or -1.
func closingQuote(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
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
