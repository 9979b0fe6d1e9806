package engine

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/llmtop/llmtop/model"
)

// promAccept asks for the classic text format: expfmt v0.72 has no real
// OpenMetrics parser (counters would come out untyped).
const promAccept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// families is one parsed Prometheus scrape, by family name.
type families map[string]*dto.MetricFamily

// parseProm parses the Prometheus text format. Metric names contain ':'
// (vllm:…), which the UTF-8 scheme accepts. A body that is HTML or JSON, or
// that was cut off mid-line, is an error: half a scrape would make counters
// look reset and histograms look re-bucketed.
func parseProm(body []byte) (families, error) {
	return parsePromSkip(body, nil)
}

// parsePromSkip is parseProm without the families skip says llmtop reads
// nowhere (engines.Unread): their samples are not parsed, and they are
// not in the result whichever parser read the body. A malformed line in
// one of them no longer fails the scrape: nothing of it would be read.
func parsePromSkip(body []byte, skip func(string) bool) (families, error) {
	return parsePromIn(body, skip, nil)
}

// parsePromIn is parsePromSkip taking the fast parser's strings from in
// (a session's, so a steady scrape reuses the last one's; nil: fresh).
func parsePromIn(body []byte, skip func(string) bool, in *interner) (families, error) {
	if err := notPromText(body); err != nil {
		return nil, err
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		// The exposition format ends every line with a newline; a body
		// without one was cut off (its last sample may be a prefix of
		// the real value).
		return nil, fmt.Errorf("scrape truncated: body does not end with a newline")
	}
	fams, err := parseTextIn(body, skip, in)
	if err != nil && (strings.Contains(err.Error(), "second HELP line") || strings.Contains(err.Error(), "second TYPE line")) {
		// A family written in two blocks (two registries, a proxy
		// concatenating exporters): its samples are fine, only the
		// repeated HELP/TYPE lines upset the parser.
		fams, err = parseText(dropRepeatedMeta(body), skip)
	}
	if err != nil {
		return nil, fmt.Errorf("not valid Prometheus text: %v", firstLine(err.Error()))
	}
	if skip != nil {
		for name := range fams { // what expfmt read when the fast parser fell back
			if skip(name) {
				delete(fams, name)
			}
		}
	}
	untypedHistograms(fams)
	for _, f := range fams {
		dedupe(f)
		dropTotals(f)
	}
	return families(fams), nil
}

// parseText is fastParse where the body has the common shape, else
// expfmt, whose families and errors are the reference.
func parseText(body []byte, skip func(string) bool) (map[string]*dto.MetricFamily, error) {
	return parseTextIn(body, skip, nil)
}

func parseTextIn(body []byte, skip func(string) bool, in *interner) (map[string]*dto.MetricFamily, error) {
	if fams, ok := fastParseIn(body, skip, in); ok {
		return fams, nil
	}
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// dropRepeatedMeta removes HELP and TYPE lines for a family already
// described earlier in the body.
func dropRepeatedMeta(body []byte) []byte {
	seen := map[string]bool{}
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i+1], body[i+1:]
		} else {
			body = nil
		}
		if f := bytes.Fields(line); len(f) >= 3 && string(f[0]) == "#" && (string(f[1]) == "HELP" || string(f[1]) == "TYPE") {
			key := string(f[1]) + " " + string(f[2])
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		out = append(out, line...)
	}
	return out
}

// notPromText recognises the common wrong bodies so the error says what
// answered instead of a parser position.
func notPromText(body []byte) error {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return nil
	}
	switch {
	case b[0] == '{' || b[0] == '[':
		return fmt.Errorf("got JSON where Prometheus text was expected (wrong --metrics-path?)")
	case b[0] == '<':
		return fmt.Errorf("got HTML/XML where Prometheus text was expected (a proxy or login page?)")
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// label returns a series' label value ("" when absent).
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// scalar is a gauge, counter or untyped sample's value.
func scalar(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// view is the part of a scrape that belongs to one model (byModel splits a
// scrape into them).
type view struct {
	fams families
	// skip drops series before they are read (SGLang's non-zero pp ranks).
	skip func(*dto.Metric) bool
}

func (v view) series(name string) []*dto.Metric {
	f := v.fams[name]
	if f == nil {
		return nil
	}
	if v.skip == nil {
		return f.Metric
	}
	var out []*dto.Metric
	for _, m := range f.Metric {
		if v.skip(m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// has reports whether any series of the family is in the view.
func (v view) has(name string) bool { return len(v.series(name)) > 0 }

// sum adds a gauge or counter over every series in the view (data-parallel
// engines, streaming/non-streaming splits). NaN and ±Inf samples are
// skipped; no finite sample means the value is not exposed.
func (v view) sum(name string) (float64, bool) {
	return v.sumWhere(name, "", "")
}

// sumWhere is sum over the series whose label lbl equals val.
func (v view) sumWhere(name, lbl, val string) (float64, bool) {
	var s float64
	ok := false
	for _, m := range v.series(name) {
		if lbl != "" && label(m, lbl) != val {
			continue
		}
		if x := scalar(m); finite(x) {
			s += x
			ok = true
		}
	}
	return s, ok
}

// mean averages a gauge over the series in the view (a fraction such as KV
// usage must not be summed over data-parallel engines). It also returns how
// many series were averaged.
func (v view) mean(name string) (float64, int) {
	var s float64
	n := 0
	for _, m := range v.series(name) {
		if x := scalar(m); finite(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return s / float64(n), n
}

// first returns the first of several names the view has (new names first,
// old names as fallbacks).
func (v view) first(names ...string) string {
	for _, n := range names {
		if v.has(n) {
			return n
		}
	}
	return ""
}

// byLabel sums a family per value of one label (finish reasons).
func (v view) byLabel(name, lbl string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range v.series(name) {
		if x := scalar(m); finite(x) {
			out[label(m, lbl)] += x
		}
	}
	return out
}

// values lists the distinct values of a label over a family, sorted.
func (v view) values(name, lbl string) []string {
	seen := map[string]bool{}
	for _, m := range v.series(name) {
		seen[label(m, lbl)] = true
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// hist merges a histogram family's series in the view into one cumulative
// histogram (buckets added by upper bound). Series whose numbers are not
// finite are skipped; a family with no usable series is not exposed.
func (v view) hist(name string) (model.Histogram, bool) {
	return v.histWhere(name, "", "")
}

// histWhere is hist over the series whose label lbl equals val.
func (v view) histWhere(name, lbl, val string) (model.Histogram, bool) {
	var h model.Histogram
	ok := false
	var idx map[float64]int
	for _, m := range v.series(name) {
		if lbl != "" && label(m, lbl) != val {
			continue
		}
		ph := m.GetHistogram()
		if ph == nil {
			continue
		}
		cnt := histCount(ph)
		sum := ph.GetSampleSum()
		if !finite(cnt) || !finite(sum) || !bucketsFinite(ph) {
			continue
		}
		if h.Buckets == nil {
			h.Buckets = make([]model.Bucket, 0, len(ph.GetBucket())+1)
		}
		h.Sum += sum
		h.Count += cnt
		sawInf := false
		for i, b := range ph.GetBucket() {
			ub := b.GetUpperBound()
			if math.IsInf(ub, 1) {
				sawInf = true
			}
			idx = addBucket(&h, idx, i, ub, bucketCount(b))
		}
		if !sawInf {
			// prometheus_client always writes +Inf; other exporters may
			// not. The count is the +Inf bucket.
			idx = addBucket(&h, idx, len(ph.GetBucket()), math.Inf(1), cnt)
		}
		ok = true
	}
	if !ok {
		return model.Histogram{}, false
	}
	model.SortBuckets(h.Buckets)
	return h, true
}

// addBucket adds c to h's bucket bounded ub, or adds that bucket. It looks
// at position at first (series of one family share their bounds, so the
// i-th bucket of one is the i-th of the merge), then along the buckets, and
// past a few dozen by the index idx it builds (an exporter's thousands of
// distinct bounds must not cost their square); it returns the index.
func addBucket(h *model.Histogram, idx map[float64]int, at int, ub, c float64) map[float64]int {
	if at < len(h.Buckets) && h.Buckets[at].UpperBound == ub {
		h.Buckets[at].Count += c
		return idx
	}
	const scan = 64
	if idx == nil && len(h.Buckets) > scan {
		idx = make(map[float64]int, 2*len(h.Buckets))
		for i, b := range h.Buckets {
			idx[b.UpperBound] = i
		}
	}
	if idx != nil {
		if i, ok := idx[ub]; ok {
			h.Buckets[i].Count += c
			return idx
		}
		idx[ub] = len(h.Buckets)
	} else {
		for i := range h.Buckets {
			if h.Buckets[i].UpperBound == ub {
				h.Buckets[i].Count += c
				return idx
			}
		}
	}
	h.Buckets = append(h.Buckets, model.Bucket{UpperBound: ub, Count: c})
	return idx
}

func histCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

func bucketCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

func bucketsFinite(h *dto.Histogram) bool {
	for _, b := range h.GetBucket() {
		if math.IsNaN(b.GetUpperBound()) || !finite(bucketCount(b)) {
			return false
		}
	}
	return true
}

// meanOnly builds a mean-only histogram from two cumulative counters (a
// duration total and an event count), e.g. llama.cpp's seconds/tokens.
func meanOnly(sum, count float64, approx string) model.Histogram {
	return model.Histogram{Sum: sum, Count: count, Approx: approx}
}
