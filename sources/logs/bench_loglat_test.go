package logs

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// timingLines is a worst case for the per-request parsers: the real
// llama-server log of testdata/loglat (slot lines, three print_timing
// lines per request) and TGI's real Success lines, every line a request's.
func timingLines(b *testing.B) [][]byte {
	var out [][]byte
	for _, f := range []string{"testdata/loglat/llama-server-2slots-6streams.log", "testdata/loglat/tgi-success.log"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			if bytes.Contains(l, []byte("time")) {
				out = append(out, l)
			}
		}
	}
	return out
}

// BenchmarkSourceTimingLines: the whole per-line path (sanitize,
// timestamp, catalogue, the per-request parsers, the observation) on
// timing lines only. At 5000 lines/s the log source's budget is 5 % of a
// core: ns/line × 5000 lines/s is reported as %core@5k.
func BenchmarkSourceTimingLines(b *testing.B) {
	lines := timingLines(b)
	t := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	src := NewSource(Options{MaxLinesPerSec: 1 << 30, QueueLines: 1 << 30, Now: func() time.Time { t = t.Add(time.Microsecond); return t }}, func(any) {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src.Line(lines[i%len(lines)])
		if len(src.queue) > 100000 {
			src.queue = src.queue[:0]
		}
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/line")
	b.ReportMetric(ns*5000/1e9*100, "%core@5k")
}

// BenchmarkTimingParsers: the per-request parsers alone (the catalogue
// match done beforehand), i.e. what issue 20 adds per timing line.
func BenchmarkTimingParsers(b *testing.B) {
	lines := timingLines(b)
	matches := make([]Match, len(lines))
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = string(l)
		matches[i], _ = DefaultMatcher.Match(texts[i])
	}
	st := newStatsState("http://e", "")
	t := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(lines)
		if matches[j].Pattern != nil {
			st.feed(matches[j], texts[j], t)
		}
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/line")
	b.ReportMetric(ns*5000/1e9*100, "%core@5k")
}
