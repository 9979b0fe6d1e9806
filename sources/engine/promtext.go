package engine

import (
	"bytes"
	"math"
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
	return fastParseSkip(body, nil)
}

// fastParseSkip is fastParse that reads no sample of the families skip
// names (nil: none): their lines are resolved to their family and passed
// over, neither parsed nor checked, and the families are left out.
func fastParseSkip(body []byte, skip func(string) bool) (map[string]*dto.MetricFamily, bool) {
	return fastParseIn(body, skip, nil)
}

// fastParseIn is fastParseSkip taking its strings from in (nil: a fresh
// interner).
func fastParseIn(body []byte, skip func(string) bool, in *interner) (map[string]*dto.MetricFamily, bool) {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return nil, false
	}
	if in == nil {
		in = newInterner()
	}
	in.next()
	last := in.last
	p := textParser{
		skip:        skip,
		fams:        make(map[string]*dto.MetricFamily, last.families),
		byKey:       make(map[string]*dto.Metric, last.series),
		strs:        in,
		floats:      sized[float64](last.floats, 256),
		counts:      sized[uint64](last.counts, 128),
		pairs:       sized[dto.LabelPair](last.pairs, 128),
		bucket:      sized[dto.Bucket](last.buckets, 128),
		famSlab:     sized[dto.MetricFamily](last.fams, 32),
		metrics:     sized[dto.Metric](last.metrics, 64),
		counters:    sized[dto.Counter](last.counters, 32),
		gauges:      sized[dto.Gauge](last.gauges, 32),
		untyped:     sized[dto.Untyped](last.untyped, 16),
		histos:      sized[dto.Histogram](last.h, 16),
		mptrs:       carved[dto.Metric](last.mptrs),
		lptrs:       carved[dto.LabelPair](last.lptrs),
		bptrs:       carved[dto.Bucket](last.bptrs),
		lastBuckets: 16,
		hists:       make([]*dto.Metric, 0, last.hists),
		key:         in.key[:0],
		lbls:        in.lbls[:0],
		sorted:      in.sorted[:0],
	}
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		line := body[:i]
		body = body[i+1:]
		if !p.line(line) {
			return nil, false
		}
	}
	families := len(p.fams)
	for k, f := range p.fams {
		if len(f.Metric) == 0 {
			delete(p.fams, k)
		}
	}
	for _, m := range p.hists {
		normalizeHistogram(m.Histogram)
	}
	in.key, in.lbls, in.sorted = p.key, p.lbls, p.sorted
	in.last = parseSizes{
		families: families, series: len(p.byKey), hists: len(p.hists),
		floats: p.floats.used, counts: p.counts.used, pairs: p.pairs.used, buckets: p.bucket.used,
		fams: p.famSlab.used, metrics: p.metrics.used, counters: p.counters.used, gauges: p.gauges.used,
		untyped: p.untyped.used, h: p.histos.used,
		mptrs: p.mptrs.used, lptrs: p.lptrs.used, bptrs: p.bptrs.used,
	}
	return p.fams, true
}

// metricTypes are the families' types, pointed to instead of allocated
// one a family a scrape.
var metricTypes = [...]dto.MetricType{0, 1, 2, 3, 4, 5}

type textParser struct {
	skip  func(string) bool // families whose samples are passed over
	fams  map[string]*dto.MetricFamily
	byKey map[string]*dto.Metric // histogram and summary series by family and labels (expfmt's signature)
	hists []*dto.Metric
	strs  *interner // each distinct name, label value and help once

	// Slabs: one allocation for many small values that all live as long
	// as the scrape.
	floats   slab[float64]
	counts   slab[uint64]
	pairs    slab[dto.LabelPair]
	bucket   slab[dto.Bucket]
	famSlab  slab[dto.MetricFamily]
	metrics  slab[dto.Metric]
	counters slab[dto.Counter]
	gauges   slab[dto.Gauge]
	untyped  slab[dto.Untyped]
	histos   slab[dto.Histogram]
	// and the slices of pointers: a family's series, a series' labels,
	// a histogram's buckets
	mptrs carve[dto.Metric]
	lptrs carve[dto.LabelPair]
	bptrs carve[dto.Bucket]
	// lastBuckets is the most buckets a histogram series of this parse
	// has had: the room a new one's slice is carved with.
	lastBuckets int

	key    []byte
	lbls   []*dto.LabelPair
	sorted []*dto.LabelPair
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
		if found, _, _ := p.resolve(name); found != nil {
			return false // HELP for X_count of a histogram X: expfmt's corner
		}
		f = p.family(name)
	}
	rest = skipBlank(rest)
	if len(rest) == 0 {
		return true
	}
	if kw == "HELP" {
		if p.skip != nil && p.skip(*f.Name) {
			return true // never read: its HELP is not kept either
		}
		if f.Help != nil {
			return false
		}
		h, ok := unescape(rest)
		if !ok {
			return false
		}
		f.Help = p.str(h)
		return true
	}
	if f.Type != nil {
		return false
	}
	t, ok := metricType(rest)
	if !ok {
		return false
	}
	f.Type = &metricTypes[t] // shared, read-only, as the strings are
	return true
}

// metricType is a TYPE line's type as expfmt reads it: its word
// upper-cased (strings.ToUpper, Unicode and all) among dto's names, or
// GAUGEHISTOGRAM. An ASCII word is upper-cased in place, without a string.
func metricType(word []byte) (int32, bool) {
	var buf [len("GAUGE_HISTOGRAM")]byte
	up := buf[:0]
	for _, c := range word {
		if c >= utf8.RuneSelf || len(up) == len(buf) {
			up = []byte(strings.ToUpper(string(word)))
			break
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = append(up, c)
	}
	if t, ok := dto.MetricType_value[string(up)]; ok {
		return t, true
	}
	if string(up) == "GAUGEHISTOGRAM" {
		return int32(dto.MetricType_GAUGE_HISTOGRAM), true
	}
	return 0, false
}

// sampleRole is which part of a histogram or summary a sample is.
type sampleRole int

const (
	roleValue sampleRole = iota
	roleCount
	roleSum
)

// resolve finds the family a sample name belongs to, as expfmt does: its
// own, else the summary or histogram it is the _sum, _count or _bucket of
// (role and bucket say which part).
func (p *textParser) resolve(name []byte) (f *dto.MetricFamily, role sampleRole, bucket bool) {
	// name stays bytes: a map read with string(b) allocates nothing
	if f = p.fams[string(name)]; f != nil {
		return f, roleValue, false
	}
	var base []byte
	switch {
	case len(name) > 6 && bytes.HasSuffix(name, []byte("_count")):
		base, role = name[:len(name)-6], roleCount
	case len(name) > 4 && bytes.HasSuffix(name, []byte("_sum")):
		base, role = name[:len(name)-4], roleSum
	case len(name) > 7 && bytes.HasSuffix(name, []byte("_bucket")):
		base, bucket = name[:len(name)-7], true
	default:
		return nil, roleValue, false
	}
	f = p.fams[string(base)]
	switch {
	case f == nil:
	case f.GetType() == dto.MetricType_SUMMARY && !bucket, isHist(f):
		return f, role, bucket
	}
	return nil, roleValue, false
}

// kindOf is a family's type, whether it is a histogram or a summary, and
// the label its samples set apart: a histogram's bound, a summary's
// quantile.
func kindOf(f *dto.MetricFamily) (typ dto.MetricType, hist, summ bool, special string) {
	typ = f.GetType()
	hist, summ = isHist(f), typ == dto.MetricType_SUMMARY
	switch {
	case hist:
		special = "le"
	case summ:
		special = "quantile"
	}
	return typ, hist, summ, special
}

func isHist(f *dto.MetricFamily) bool {
	t := f.GetType()
	return t == dto.MetricType_HISTOGRAM || t == dto.MetricType_GAUGE_HISTOGRAM
}

func (p *textParser) sample(l []byte) bool {
	if done, ok := p.remembered(l); done {
		return ok
	}
	name, rest, ok := readName(l, true)
	if !ok || len(rest) == 0 || rest[0] != ' ' && rest[0] != '\t' && rest[0] != '{' {
		return false
	}
	f, role, isBucket := p.resolve(name)
	if p.skip != nil && (f != nil && p.skip(*f.Name) || f == nil && p.skip(string(name))) {
		return true
	}
	if f == nil {
		f = p.family(name)
	}
	if f.Type == nil {
		f.Type = dto.MetricType_UNTYPED.Enum()
	}
	typ, hist, summ, special := kindOf(f)
	rest, specialVal, haveSpecial, ok := p.labels(skipBlank(rest), special)
	if !ok {
		return false
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
	var key *string
	if hist || summ {
		if !partOK(hist, summ, role, isBucket, haveSpecial) {
			return false
		}
		m, key = p.series(f)
	} else {
		m = p.metric(f)
	}
	if ts != nil {
		t, err := strconv.ParseInt(string(ts), 10, 64)
		if err != nil {
			return false
		}
		m.TimestampMs = &t
	}
	if !p.store(m, typ, role, specialVal, v) {
		return false
	}
	if ts == nil {
		labels := m.Label
		if hist || summ { // the series' labels are its first line's
			labels = append(p.lptrs.of(len(p.lbls)), p.lbls...)
		}
		p.strs.remember(l[:len(l)-len(tok)], &lineMemo{nameLen: len(name), fam: f.Name, special: special,
			labels: labels, specialVal: specialVal, haveSpecial: haveSpecial, key: key})
	}
	return true
}

// partOK says whether a histogram's or summary's sample line is one expfmt
// keeps as it is: a bucket with its bound, a quantile, a _sum or _count
// without either.
func partOK(hist, summ bool, role sampleRole, isBucket, haveSpecial bool) bool {
	if role == roleValue && (!isBucket || !haveSpecial) && !(summ && haveSpecial) {
		return false // a sample expfmt would keep without a value
	}
	return !(isBucket && !hist || role != roleValue && haveSpecial)
}

// remembered reads a sample line whose name and labels a parse of this
// session read before (the last one's or this one's lines): its labels,
// bound and series are the memo's, so only its value is read. It reports
// done=false where the line is not remembered, has a timestamp or now
// resolves to another family or type: the full reading takes it (and
// remembers it).
func (p *textParser) remembered(l []byte) (done, ok bool) {
	i := bytes.LastIndexAny(l, " \t")
	if i <= 0 || i == len(l)-1 {
		return false, false
	}
	head := l[:i]
	for len(head) > 0 && (head[len(head)-1] == ' ' || head[len(head)-1] == '\t') {
		head = head[:len(head)-1]
	}
	e := p.strs.line(head)
	if e == nil {
		return false, false
	}
	name := head[:e.nameLen]
	f, role, isBucket := p.resolve(name)
	if p.skip != nil && (f != nil && p.skip(*f.Name) || f == nil && p.skip(string(name))) {
		return true, true
	}
	if f == nil || f.Type == nil || *f.Name != *e.fam {
		return false, false
	}
	typ, hist, summ, special := kindOf(f)
	if special != e.special {
		return false, false
	}
	v, ok := textFloat(l[i+1:])
	if !ok {
		return true, false
	}
	var m *dto.Metric
	if hist || summ {
		if !partOK(hist, summ, role, isBucket, e.haveSpecial) {
			return true, false
		}
		if m = p.byKey[*e.key]; m == nil {
			m = p.metricLabels(f, e.labels)
			p.byKey[*e.key] = m
			if hist {
				p.hists = append(p.hists, m)
			}
		}
	} else {
		m = p.metricLabels(f, e.labels)
	}
	return true, p.store(m, typ, role, e.specialVal, v)
}

// labels reads a sample's label set (rest starts at its '{', or has none)
// into p.lbls, with the bound or quantile named special set apart.
func (p *textParser) labels(rest []byte, special string) (_ []byte, specialVal float64, haveSpecial, ok bool) {
	p.lbls = p.lbls[:0]
	if len(rest) == 0 || rest[0] != '{' {
		return rest, 0, false, true
	}
	rest = rest[1:]
	for {
		rest = skipBlank(rest)
		if len(rest) == 0 {
			return nil, 0, false, false
		}
		if rest[0] == '}' {
			return skipBlank(rest[1:]), specialVal, haveSpecial, true
		}
		var ln []byte
		if ln, rest, ok = readName(rest, false); !ok {
			return nil, 0, false, false
		}
		rest = skipBlank(rest)
		if len(rest) == 0 || rest[0] != '=' {
			return nil, 0, false, false
		}
		rest = skipBlank(rest[1:])
		if len(rest) == 0 || rest[0] != '"' {
			return nil, 0, false, false
		}
		end := closingQuote(rest[1:])
		if end < 0 {
			return nil, 0, false, false
		}
		raw := rest[1 : 1+end]
		rest = rest[2+end:]
		val, ok := unescape(raw)
		if !ok || !utf8.Valid(val) || string(ln) == "__name__" {
			return nil, 0, false, false
		}
		if special != "" && string(ln) == special {
			v, ok := textFloat(val)
			if haveSpecial || !ok || math.IsNaN(v) {
				return nil, 0, false, false // (expfmt keeps no bucket or quantile for NaN)
			}
			specialVal, haveSpecial = v, true
		} else {
			for _, o := range p.lbls {
				if *o.Name == string(ln) {
					return nil, 0, false, false // duplicate label names
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
			return nil, 0, false, false
		}
	}
}
