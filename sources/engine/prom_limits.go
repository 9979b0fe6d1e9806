package engine

// Hostile or huge scrapes: caps on series and label values, the per-model
// split in one pass, and values no engine can mean, each dropped with a note.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Caps on one scrape, so that an endpoint serving a million series or a
// hundred thousand models costs bounded time and memory (its body is
// already capped at MaxBodyBytes): series past maxSeries, and series that
// bring a label past maxLabelValues distinct values, are dropped with a
// note. le and quantile label a histogram's or summary's own buckets.
const (
	maxSeries      = 100_000
	maxLabelValues = 1_000
)

// limitSeries applies the caps in a fixed order (families by name, series
// as served) and returns the notes that say what was left out.
func limitSeries(f families, maxSeries, maxValues int) []string {
	total := 0
	for _, fam := range f {
		total += len(fam.Metric)
	}
	if total <= min(maxSeries, maxValues) {
		return nil // no label can have more values than there are series
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]map[string]bool{} // label → distinct values kept
	over := map[string]map[string]bool{} // label → values left out
	kept := 0
	for _, n := range names {
		fam := f[n]
		out := fam.Metric[:0]
	series:
		for _, m := range fam.Metric {
			if kept >= maxSeries {
				break
			}
			for _, l := range m.GetLabel() {
				ln := l.GetName()
				if ln == "le" || ln == "quantile" {
					continue
				}
				vals := seen[ln]
				if vals == nil {
					vals = map[string]bool{}
					seen[ln] = vals
				}
				if !vals[l.GetValue()] && len(vals) >= maxValues {
					if over[ln] == nil {
						over[ln] = map[string]bool{}
					}
					over[ln][l.GetValue()] = true
					continue series
				}
			}
			for _, l := range m.GetLabel() {
				if ln := l.GetName(); ln != "le" && ln != "quantile" {
					seen[ln][l.GetValue()] = true
				}
			}
			out = append(out, m)
			kept++
		}
		// Nil the tail so the dropped series can be collected.
		for i := len(out); i < len(fam.Metric); i++ {
			fam.Metric[i] = nil
		}
		fam.Metric = out
		if len(out) == 0 {
			delete(f, n)
		}
	}
	var notes []string
	if total > maxSeries {
		notes = append(notes, fmt.Sprintf("truncated: %s series, showing the first %s", groupThousands(total), groupThousands(maxSeries)))
	}
	lbls := make([]string, 0, len(over))
	for ln := range over {
		lbls = append(lbls, ln)
	}
	sort.Strings(lbls)
	for _, ln := range lbls {
		notes = append(notes, fmt.Sprintf("truncated: %s distinct %s values, showing the first %s",
			groupThousands(len(seen[ln])+len(over[ln])), ln, groupThousands(maxValues)))
	}
	return notes
}

// groupThousands writes n as "100 000".
func groupThousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// byModel splits a scrape by the value of one label in a single pass, so
// that mapping a scrape costs time linear in its series however many models
// it names (a view filtering every family once per model was quadratic:
// 8 000 models took 3 s). Series without the label are in parts[""]. A
// family whose series all name one model is that model's as it is (the
// parts only read families, so they share them): one engine serving one
// model splits without a copy.
func byModel(f families, lbl string) map[string]families {
	parts := map[string]families{}
	part := func(v string) families {
		p := parts[v]
		if p == nil {
			p = families{}
			parts[v] = p
		}
		return p
	}
	for n, fam := range f {
		if v, one := oneValue(fam.Metric, lbl); one {
			part(v)[n] = fam
			continue
		}
		for _, m := range fam.Metric {
			p := part(label(m, lbl))
			pf := p[n]
			if pf == nil {
				pf = &dto.MetricFamily{Name: fam.Name, Help: fam.Help, Type: fam.Type}
				p[n] = pf
			}
			pf.Metric = append(pf.Metric, m)
		}
	}
	return parts
}

// oneValue is the value of label lbl that every series has ("" where they
// lack it), and whether they all have the same.
func oneValue(ms []*dto.Metric, lbl string) (string, bool) {
	if len(ms) == 0 {
		return "", false
	}
	v := label(ms[0], lbl)
	for _, m := range ms[1:] {
		if label(m, lbl) != v {
			return "", false
		}
	}
	return v, true
}

// modelView is the view of one model's series from byModel's parts; the
// empty name is the whole scrape.
func modelView(f families, parts map[string]families, name string) view {
	if name == "" {
		return view{fams: f}
	}
	return view{fams: parts[name]}
}

// rejectImplausible drops every series whose value no engine can mean —
// a negative, NaN or infinite gauge or counter, a histogram or summary
// with a negative or non-finite sum, count or bucket — before the adapters
// sum series (one engine's "-5 waiting" would otherwise hide in a total).
// It returns a note naming what it dropped (a few examples and a count).
func rejectImplausible(f families) []string {
	var examples []string
	n, unset := 0, 0
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	sort.Strings(names) // the same examples every scrape
	for _, name := range names {
		fam := f[name]
		out := fam.Metric[:0]
		for _, m := range fam.Metric {
			if v, ok := implausible(m); ok {
				if m.Gauge != nil && engines.Unset(name, scalar(m)) {
					unset++ // the engine's "no value": unknown, not a bad reading
					continue
				}
				n++
				if len(examples) < 3 {
					examples = append(examples, name+seriesLabels(m)+" = "+v)
				}
				continue
			}
			out = append(out, m)
		}
		for i := len(out); i < len(fam.Metric); i++ {
			fam.Metric[i] = nil
		}
		fam.Metric = out
	}
	var notes []string
	if unset > 0 {
		notes = append(notes, engines.VLLMHitRateNote)
	}
	if n == 0 {
		return notes
	}
	more := ""
	if n > len(examples) {
		more = fmt.Sprintf(" and %d more", n-len(examples))
	}
	return append(notes, fmt.Sprintf("rejected %d series with values no engine can mean (negative, NaN or infinite): %s%s",
		n, strings.Join(examples, ", "), more))
}

// implausible says whether m holds a value no engine can mean, and which.
func implausible(m *dto.Metric) (string, bool) {
	bad := func(v float64) bool { return !model.Plausible(v) }
	switch {
	case m.Gauge != nil || m.Counter != nil || m.Untyped != nil:
		if v := scalar(m); bad(v) {
			return fmt.Sprint(v), true
		}
	case m.Histogram != nil:
		h := m.Histogram
		if bad(h.GetSampleSum()) || bad(histCount(h)) {
			return fmt.Sprintf("sum %g count %g", h.GetSampleSum(), histCount(h)), true
		}
		for _, b := range h.GetBucket() {
			if bad(bucketCount(b)) || math.IsNaN(b.GetUpperBound()) {
				return fmt.Sprintf("bucket le=%g count %g", b.GetUpperBound(), bucketCount(b)), true
			}
		}
	case m.Summary != nil:
		s := m.Summary
		if bad(s.GetSampleSum()) || bad(float64(s.GetSampleCount())) {
			return fmt.Sprintf("sum %g count %d", s.GetSampleSum(), s.GetSampleCount()), true
		}
	}
	return "", false
}

// seriesLabels writes a series' labels as {a="b",…} (le aside).
func seriesLabels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
