package recording

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Source hands out records in order: a *Reader, or Records over a slice.
type Source interface {
	Next() (Record, error)
}

// Records is a Source over records in memory.
func Records(recs []Record) Source { return &sliceSource{recs: recs} }

type sliceSource struct {
	recs []Record
	i    int
}

func (s *sliceSource) Next() (Record, error) {
	if s.i >= len(s.recs) {
		return Record{}, io.EOF
	}
	s.i++
	return s.recs[s.i-1], nil
}

// The export's bounds: its memory is one open spill file per family and
// the newest timestamp per series, whatever the recording's length.
const (
	maxFamilies = 500
	maxSeries   = 200_000
)

// OpenMetrics writes the recorded engine and GPU series in the OpenMetrics
// text format with their timestamps, so `promtool tsdb create-blocks-from
// openmetrics` can load a recording into Prometheus:
//
//	llmtop_<gauge>{endpoint,model,source}                 gauge
//	llmtop_<counter>_total{endpoint,model,source}         counter
//	llmtop_finished_requests_total{…,reason}              counter
//	llmtop_<latency>_seconds{…}                           histogram (summary when the engine gives sum and count only)
//	llmtop_scrape_up{endpoint}                            gauge: 1 when the scrape read metrics
//	llmtop_gpu_<field>{gpu,uuid,name}                     gauge (util_pct, mem_used_bytes, power_w, temp_c…)
//
// Values the engine or the GPU did not give are left out, never written as
// 0. Each series' points are in time order; a point at the same
// millisecond as the one before it is dropped (Prometheus keeps one).
//
// It streams: each family's points go to a spill file in a temporary
// directory as the records are read (a family is written whole, so the
// points wait there), and the families are then written one after the
// other; memory does not grow with the recording. It returns how many
// points it wrote.
func OpenMetrics(w io.Writer, src Source) (int, error) {
	dir, err := os.MkdirTemp(TempDir(), "llmtop-openmetrics-")
	if err != nil {
		return 0, fmt.Errorf("a directory for the export's spill files: %w", err)
	}
	defer os.RemoveAll(dir)
	om := &omWriter{dir: dir, fams: map[string]*omFamily{}, last: map[string]int64{}}
	defer om.close()
	for om.err == nil {
		r, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		switch m := r.Msg.(type) {
		case model.Scrape:
			up := 0.0
			if m.OK() {
				up = 1
			}
			om.gauge("llmtop_scrape_up", "1 when the scrape read the engine's metrics", labels("endpoint", m.Endpoint), orTime(m.Time, r.Time), up)
			for _, s := range m.Samples {
				om.sample(s, r.Time)
			}
		case model.Sample:
			om.sample(m, r.Time)
		case model.GPUSnapshot:
			for _, g := range m.GPUs {
				om.gpu(g, orTime(m.Time, r.Time))
			}
		}
	}
	if om.err != nil {
		return 0, om.err
	}
	return om.write(w)
}

func orTime(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}

type omFamily struct {
	name, typ, help string
	file            *os.File
	w               *bufio.Writer
	points          int
}

type omWriter struct {
	dir  string
	fams map[string]*omFamily
	// last is each series' newest millisecond (family and labels).
	last map[string]int64
	err  error
}

func (o *omWriter) family(name, typ, help string) *omFamily {
	f := o.fams[name]
	if f == nil && o.err == nil {
		if len(o.fams) >= maxFamilies {
			o.err = fmt.Errorf("the recording holds more than %d metric families: not what an engine publishes", maxFamilies)
			return nil
		}
		file, err := os.CreateTemp(o.dir, "family-")
		if err != nil {
			o.err = fmt.Errorf("a spill file for the export: %w", err)
			return nil
		}
		f = &omFamily{name: name, typ: typ, help: help, file: file, w: bufio.NewWriterSize(file, 16<<10)}
		o.fams[name] = f
	}
	return f
}

// add writes one point of the series lbl at t, unless the series has a
// point at or after its millisecond.
func (o *omWriter) add(f *omFamily, lbl string, t time.Time, v float64, h *model.Histogram) {
	if f == nil {
		return
	}
	key := f.name + "{" + lbl + "}"
	ms := t.UnixMilli()
	last, seen := o.last[key]
	if seen && ms <= last {
		return
	}
	if !seen && len(o.last) >= maxSeries {
		o.err = fmt.Errorf("the recording holds more than %d series: not what llmtop records", maxSeries)
		return
	}
	o.last[key] = ms
	ts := strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
	w := f.w
	switch f.typ {
	case "gauge":
		fmt.Fprintf(w, "%s{%s} %s %s\n", f.name, lbl, num64(v), ts)
	case "counter":
		fmt.Fprintf(w, "%s_total{%s} %s %s\n", f.name, lbl, num64(v), ts)
	case "histogram":
		for _, b := range h.Buckets {
			fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %s %s\n", f.name, lbl, num64(b.UpperBound), num64(b.Count), ts)
		}
		fmt.Fprintf(w, "%s_count{%s} %s %s\n%s_sum{%s} %s %s\n", f.name, lbl, num64(h.Count), ts, f.name, lbl, num64(h.Sum), ts)
	case "summary":
		fmt.Fprintf(w, "%s_count{%s} %s %s\n%s_sum{%s} %s %s\n", f.name, lbl, num64(h.Count), ts, f.name, lbl, num64(h.Sum), ts)
	}
	f.points++
}

func (o *omWriter) close() {
	for _, f := range o.fams {
		f.file.Close()
	}
}

func (o *omWriter) gauge(name, help, lbl string, t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	o.add(o.family(name, "gauge", help), lbl, t, v, nil)
}

func (o *omWriter) counter(name, help, lbl string, t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return
	}
	o.add(o.family(name, "counter", help), lbl, t, v, nil)
}

func (o *omWriter) sample(s model.Sample, recorded time.Time) {
	t := orTime(s.Time, recorded)
	src := string(s.Source)
	if src == "" {
		src = string(model.FromScrape)
	}
	base := labels("endpoint", s.Endpoint, "model", s.Model, "source", src)
	for g, v := range s.Gauges {
		o.gauge("llmtop_"+metricName(string(g)), "the engine's "+string(g)+" (llmtop's name for it)", base, t, v)
	}
	for c, v := range s.Counters {
		o.counter("llmtop_"+metricName(string(c)), "the engine's cumulative "+string(c), base, t, v)
	}
	for reason, v := range s.FinishReasons {
		o.counter("llmtop_finished_requests", "finished requests by finish reason", base+","+labels("reason", reason), t, v)
	}
	for l, h := range s.Latencies {
		h := h
		unit := "seconds"
		if l.Tokens() {
			unit = "tokens"
		}
		name := "llmtop_" + metricName(string(l)) + "_" + unit
		if validBuckets(h) {
			o.add(o.family(name, "histogram", "the engine's "+string(l)+" distribution, "+unit), base, t, 0, &h)
		} else if h.Count >= 0 && !math.IsNaN(h.Sum) && !math.IsInf(h.Sum, 0) && len(h.Parts) == 0 {
			o.add(o.family(name, "summary", "the engine's "+string(l)+" sum and count, "+unit), base, t, 0, &model.Histogram{Sum: h.Sum, Count: h.Count})
		}
	}
}

// validBuckets: cumulative, ending at +Inf with the count.
func validBuckets(h model.Histogram) bool {
	if len(h.Buckets) == 0 || !math.IsInf(h.Buckets[len(h.Buckets)-1].UpperBound, 1) || math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) {
		return false
	}
	prev := 0.0
	for _, b := range h.Buckets {
		if b.Count < prev || math.IsNaN(b.UpperBound) {
			return false
		}
		prev = b.Count
	}
	return h.Buckets[len(h.Buckets)-1].Count == h.Count
}

// gpuFields are the GPU readings exported, by their JSON names.
var gpuFields = []struct {
	name string
	get  func(g model.GPU) model.Opt
}{
	{model.GPUFieldUtil, func(g model.GPU) model.Opt { return g.Util }},
	{model.GPUFieldMemUtil, func(g model.GPU) model.Opt { return g.MemUtil }},
	{model.GPUFieldMemUsed, func(g model.GPU) model.Opt { return g.MemUsed }},
	{model.GPUFieldMemTotal, func(g model.GPU) model.Opt { return g.MemTotal }},
	{model.GPUFieldPower, func(g model.GPU) model.Opt { return g.Power }},
	{model.GPUFieldPowerLimit, func(g model.GPU) model.Opt { return g.PowerLimit }},
	{model.GPUFieldTemp, func(g model.GPU) model.Opt { return g.Temp }},
	{model.GPUFieldSMClock, func(g model.GPU) model.Opt { return g.SMClock }},
	{model.GPUFieldMemClock, func(g model.GPU) model.Opt { return g.MemClock }},
	{model.GPUFieldFan, func(g model.GPU) model.Opt { return g.Fan }},
	{model.GPUFieldPCIeRx, func(g model.GPU) model.Opt { return g.PCIeRx }},
	{model.GPUFieldPCIeTx, func(g model.GPU) model.Opt { return g.PCIeTx }},
	{model.GPUFieldECC, func(g model.GPU) model.Opt { return g.ECCVolatile }},
}

func (o *omWriter) gpu(g model.GPU, t time.Time) {
	lbl := labels("gpu", strconv.Itoa(g.Index), "uuid", g.UUID, "name", g.Name)
	for _, f := range gpuFields {
		if v := f.get(g); v.OK {
			o.gauge("llmtop_gpu_"+f.name, "the GPU's "+f.name, lbl, t, v.V)
		}
	}
}

// write writes the families in name order, each from its spill file.
func (o *omWriter) write(out io.Writer) (int, error) {
	w := bufio.NewWriterSize(out, 256<<10)
	names := make([]string, 0, len(o.fams))
	for n := range o.fams {
		names = append(names, n)
	}
	sort.Strings(names)
	points := 0
	for _, n := range names {
		f := o.fams[n]
		if err := f.w.Flush(); err != nil {
			return points, fmt.Errorf("the export's spill file: %w", err)
		}
		if _, err := f.file.Seek(0, io.SeekStart); err != nil {
			return points, err
		}
		fmt.Fprintf(w, "# TYPE %s %s\n# HELP %s %s\n", f.name, f.typ, f.name, escapeHelp(f.help))
		if _, err := io.Copy(w, f.file); err != nil {
			return points, err
		}
		points += f.points
	}
	fmt.Fprint(w, "# EOF\n")
	return points, w.Flush()
}

func num64(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	if a := math.Abs(v); a == 0 || a >= 1e-4 && a < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64) // counters read whole, not 1.23e+11
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// labels renders name="value" pairs, escaped; empty values are left out.
func labels(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1]))
		b.WriteByte('"')
	}
	return b.String()
}

func escapeHelp(s string) string { return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s) }

// metricName keeps [a-zA-Z0-9_:], the rest becomes _.
func metricName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
