package engine

import (
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	pmodel "github.com/prometheus/common/model"
)

// What parseProm mends after parsing: histograms served without their TYPE
// lines, duplicated series, and totals served beside their parts.

// untypedHistograms rebuilds the histograms of a body served without
// "# TYPE" lines (a proxy that drops metadata): the parser then sees
// untyped families X_bucket, X_sum and X_count. An untyped X_bucket whose
// every series has an le bound, beside untyped X_sum and X_count and no
// family X, is the histogram X: its series are grouped by their labels
// without le. A series whose sum or count is missing, or whose bound does
// not parse, leaves the whole family as it was served.
func untypedHistograms(fams map[string]*dto.MetricFamily) {
	for name, bf := range fams {
		base, ok := strings.CutSuffix(name, "_bucket")
		if !ok || base == "" || bf.GetType() != dto.MetricType_UNTYPED || fams[base] != nil {
			continue
		}
		sf, cf := fams[base+"_sum"], fams[base+"_count"]
		if sf == nil || cf == nil || sf.GetType() != dto.MetricType_UNTYPED || cf.GetType() != dto.MetricType_UNTYPED {
			continue
		}
		if h := histogramByShape(base, bf, sf, cf); h != nil {
			delete(fams, name)
			delete(fams, base+"_sum")
			delete(fams, base+"_count")
			fams[base] = h
		}
	}
}

// histogramByShape builds the histogram family base from its untyped
// parts, or returns nil when they do not fit together.
func histogramByShape(base string, bf, sf, cf *dto.MetricFamily) *dto.MetricFamily {
	sig := func(m *dto.Metric) uint64 {
		ls := map[string]string{}
		for _, l := range m.GetLabel() {
			if l.GetName() != "le" {
				ls[l.GetName()] = l.GetValue()
			}
		}
		return pmodel.LabelsToSignature(ls)
	}
	sums := map[uint64]float64{}
	for _, m := range sf.GetMetric() {
		sums[sig(m)] = scalar(m)
	}
	counts := map[uint64]float64{}
	for _, m := range cf.GetMetric() {
		counts[sig(m)] = scalar(m)
	}
	out := &dto.MetricFamily{Name: &base, Type: dto.MetricType_HISTOGRAM.Enum()}
	bySig := map[uint64]*dto.Histogram{}
	for _, m := range bf.GetMetric() {
		leStr := ""
		hasLE := false
		var lbls []*dto.LabelPair
		for _, l := range m.GetLabel() {
			if l.GetName() == "le" {
				leStr, hasLE = l.GetValue(), true
				continue
			}
			lbls = append(lbls, l)
		}
		le, err := strconv.ParseFloat(leStr, 64)
		if !hasLE || err != nil {
			return nil
		}
		k := sig(m)
		sum, okS := sums[k]
		cnt, okC := counts[k]
		if !okS || !okC {
			return nil
		}
		h := bySig[k]
		if h == nil {
			h = &dto.Histogram{SampleSum: &sum, SampleCountFloat: &cnt}
			bySig[k] = h
			out.Metric = append(out.Metric, &dto.Metric{Label: lbls, Histogram: h})
		}
		c := scalar(m)
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: &le, CumulativeCountFloat: &c})
	}
	if len(out.Metric) == 0 || len(sums) != len(bySig) || len(counts) != len(bySig) {
		return nil // a sum or count without buckets: not one histogram
	}
	return out
}

// dedupe keeps the last of several series with the same label set (and the
// last of duplicate histogram buckets), so a duplicated line is not counted
// twice when series are summed.
func dedupe(f *dto.MetricFamily) {
	if ms := f.GetMetric(); len(ms) > 1 {
		f.Metric = dedupeSeries(ms)
	}
	for _, m := range f.Metric {
		if h := m.GetHistogram(); h != nil && len(h.Bucket) > 1 && !increasing(h.Bucket) {
			byBound := make(map[float64]int, len(h.Bucket))
			out := h.Bucket[:0]
			for _, b := range h.Bucket {
				if i, ok := byBound[b.GetUpperBound()]; ok {
					out[i] = b
					continue
				}
				byBound[b.GetUpperBound()] = len(out)
				out = append(out, b)
			}
			h.Bucket = out
		}
	}
}

// dedupeSeries is ms without the series whose label set a later one
// repeats, in place. A family of a few series is compared pair by pair;
// a larger one by a hash of each label set, checked pair by pair where two
// hashes meet. Neither allocates per series.
func dedupeSeries(ms []*dto.Metric) []*dto.Metric {
	out := ms[:0]
	if len(ms) <= 16 {
	next:
		for _, m := range ms {
			for i, o := range out {
				if sameLabels(o, m) {
					out[i] = m
					continue next
				}
			}
			out = append(out, m)
		}
		return out
	}
	seen := make(map[uint64]int, len(ms))
	for _, m := range ms {
		sig := labelSig(m)
		if i, ok := seen[sig]; ok && sameLabels(out[i], m) {
			out[i] = m
			continue
		} else if !ok {
			seen[sig] = len(out)
		}
		out = append(out, m)
	}
	return out
}

// increasing reports whether the buckets' bounds strictly increase (so
// none repeats).
func increasing(bs []*dto.Bucket) bool {
	for i := 1; i < len(bs); i++ {
		if !(bs[i-1].GetUpperBound() < bs[i].GetUpperBound()) {
			return false
		}
	}
	return true
}

// sameLabels reports whether two series have the same label set, in any
// order (a series' label names are distinct).
func sameLabels(a, b *dto.Metric) bool {
	if len(a.GetLabel()) != len(b.GetLabel()) {
		return false
	}
	for _, l := range a.GetLabel() {
		found := false
		for _, o := range b.GetLabel() {
			if o.GetName() == l.GetName() {
				found = o.GetValue() == l.GetValue()
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sameShape reports whether two series have the same label names.
func sameShape(a, b *dto.Metric) bool {
	if len(a.GetLabel()) != len(b.GetLabel()) {
		return false
	}
	for _, l := range a.GetLabel() {
		if !hasLabel(b, l.GetName()) {
			return false
		}
	}
	return true
}

func hasLabel(m *dto.Metric, name string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return true
		}
	}
	return false
}

// dropTotals removes a series that is the total of other series in its
// family: one whose labels are a strict subset of another series' labels,
// with the same values (request_success_total{model_name="m"} beside
// request_success_total{model_name="m",finished_reason="stop"}). Summing
// both would count every request twice; the parts say more, so they are
// kept where they add up to the total. Where no shape of parts adds up to
// it (an exporter that tags only some requests), the total is the number
// and its parts are dropped instead. A total without parts stays. Series
// are grouped by their label names, so a family of one shape (the usual
// case) costs one pass.
func dropTotals(f *dto.MetricFamily) {
	ms := f.GetMetric()
	if len(ms) < 2 {
		return
	}
	if !slices.ContainsFunc(ms[1:], func(m *dto.Metric) bool { return !sameShape(ms[0], m) }) {
		return // one shape (the usual family): no series is another's total
	}
	shapeOf := func(m *dto.Metric) string {
		names := make([]string, 0, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			names = append(names, l.GetName())
		}
		sort.Strings(names)
		return strings.Join(names, "\xff")
	}
	shapes := map[string][]string{} // shape → its label names
	shape := make([]string, len(ms))
	for i, m := range ms {
		shape[i] = shapeOf(m)
		if _, ok := shapes[shape[i]]; !ok {
			if shape[i] == "" {
				shapes[shape[i]] = nil
			} else {
				shapes[shape[i]] = strings.Split(shape[i], "\xff")
			}
		}
	}
	if len(shapes) < 2 {
		return
	}
	project := func(m *dto.Metric, names []string) uint64 {
		ls := make(map[string]string, len(names))
		for _, n := range names {
			ls[n] = label(m, n)
		}
		return pmodel.LabelsToSignature(ls)
	}
	// For each pair (total shape, parts shape) where the first is a strict
	// subset of the second: the parts' sum per total signature.
	type pair struct{ small, big string }
	sums := map[pair]map[uint64]float64{}
	for small, sn := range shapes {
		for big, bn := range shapes {
			if len(bn) <= len(sn) || !subset(sn, bn) {
				continue
			}
			set := map[uint64]float64{}
			for i, m := range ms {
				if shape[i] == big {
					set[project(m, sn)] += amount(m)
				}
			}
			sums[pair{small, big}] = set
		}
	}
	if len(sums) == 0 {
		return
	}
	drop := make([]bool, len(ms))
	for i, m := range ms {
		sn := shapes[shape[i]]
		sig := project(m, sn)
		total := amount(m)
		var partsOf []string // the shapes holding parts of this series
		addsUp := false
		for p, set := range sums {
			sum, ok := set[sig]
			if p.small != shape[i] || !ok {
				continue
			}
			partsOf = append(partsOf, p.big)
			if sameAmount(sum, total) {
				addsUp = true
			}
		}
		switch {
		case len(partsOf) == 0:
		case addsUp:
			drop[i] = true
		default:
			for j, o := range ms {
				if slices.Contains(partsOf, shape[j]) && project(o, sn) == sig {
					drop[j] = true
				}
			}
		}
	}
	out := ms[:0]
	for i, m := range ms {
		if !drop[i] {
			out = append(out, m)
		}
	}
	for i := len(out); i < len(ms); i++ {
		ms[i] = nil
	}
	f.Metric = out
}

// amount is what a series counts: a scalar's value, a histogram's or
// summary's sample count.
func amount(m *dto.Metric) float64 {
	switch {
	case m.Histogram != nil:
		return histCount(m.Histogram)
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	}
	return scalar(m)
}

// sameAmount reports whether parts summed to sum make up total: equal
// but for float rounding (the parts and the total are written in one
// exposition, so a real total matches its parts).
func sameAmount(sum, total float64) bool {
	if !finite(sum) || !finite(total) {
		return false
	}
	return math.Abs(sum-total) <= 1e-9*math.Max(1, math.Abs(total))
}

// subset reports whether every name in a is in b.
func subset(a, b []string) bool {
	in := make(map[string]bool, len(b))
	for _, n := range b {
		in[n] = true
	}
	for _, n := range a {
		if !in[n] {
			return false
		}
	}
	return true
}

// labelSig hashes a series' label set whatever its order: the sum of
// each pair's hash, nothing allocated. Two sets may share one; dedupe
// compares them where they do.
func labelSig(m *dto.Metric) uint64 {
	var sig uint64
	for _, l := range m.GetLabel() {
		var h maphash.Hash
		h.SetSeed(sigSeed)
		h.WriteString(l.GetName())
		h.WriteByte(0xff)
		h.WriteString(l.GetValue())
		sig += h.Sum64()
	}
	return sig
}

var sigSeed = maphash.MakeSeed()
