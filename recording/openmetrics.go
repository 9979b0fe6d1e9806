package recording

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
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
// It returns how many points it wrote.
func OpenMetrics(w io.Writer, recs []Record) (int, error) {
	om := newOMWriter()
	for _, r := range recs {
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
	return om.write(w)
}

func orTime(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}

type omPoint struct {
	ms int64
	v  float64
	h  *model.Histogram
}

type omSeries struct {
	labels string
	points []omPoint
}

type omFamily struct {
	name, typ, help string
	series          map[string]*omSeries
}

type omWriter struct {
	fams map[string]*omFamily
}

func newOMWriter() *omWriter { return &omWriter{fams: map[string]*omFamily{}} }

func (o *omWriter) family(name, typ, help string) *omFamily {
	f := o.fams[name]
	if f == nil {
		f = &omFamily{name: name, typ: typ, help: help, series: map[string]*omSeries{}}
		o.fams[name] = f
	}
	return f
}

func (f *omFamily) add(lbl string, t time.Time, p omPoint) {
	s := f.series[lbl]
	if s == nil {
		s = &omSeries{labels: lbl}
		f.series[lbl] = s
	}
	p.ms = t.UnixMilli()
	if n := len(s.points); n > 0 && p.ms <= s.points[n-1].ms {
		return
	}
	s.points = append(s.points, p)
}

func (o *omWriter) gauge(name, help, lbl string, t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	o.family(name, "gauge", help).add(lbl, t, omPoint{v: v})
}

func (o *omWriter) counter(name, help, lbl string, t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return
	}
	o.family(name, "counter", help).add(lbl, t, omPoint{v: v})
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
			o.family(name, "histogram", "the engine's "+string(l)+" distribution, "+unit).add(base, t, omPoint{h: &h})
		} else if h.Count >= 0 && !math.IsNaN(h.Sum) && !math.IsInf(h.Sum, 0) && len(h.Parts) == 0 {
			o.family(name, "summary", "the engine's "+string(l)+" sum and count, "+unit).add(base, t, omPoint{h: &model.Histogram{Sum: h.Sum, Count: h.Count}})
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
		fmt.Fprintf(w, "# TYPE %s %s\n# HELP %s %s\n", f.name, f.typ, f.name, escapeHelp(f.help))
		keys := make([]string, 0, len(f.series))
		for k := range f.series {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, p := range f.series[k].points {
				ts := strconv.FormatFloat(float64(p.ms)/1000, 'f', 3, 64)
				switch f.typ {
				case "gauge":
					fmt.Fprintf(w, "%s{%s} %s %s\n", f.name, k, num64(p.v), ts)
				case "counter":
					fmt.Fprintf(w, "%s_total{%s} %s %s\n", f.name, k, num64(p.v), ts)
				case "histogram":
					for _, b := range p.h.Buckets {
						fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %s %s\n", f.name, k, num64(b.UpperBound), num64(b.Count), ts)
					}
					fmt.Fprintf(w, "%s_count{%s} %s %s\n%s_sum{%s} %s %s\n", f.name, k, num64(p.h.Count), ts, f.name, k, num64(p.h.Sum), ts)
				case "summary":
					fmt.Fprintf(w, "%s_count{%s} %s %s\n%s_sum{%s} %s %s\n", f.name, k, num64(p.h.Count), ts, f.name, k, num64(p.h.Sum), ts)
				}
				points++
			}
		}
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
