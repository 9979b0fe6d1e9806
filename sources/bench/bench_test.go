package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// BenchmarkFidelity compares the client's chunk arrival times with the true
// emit times a streaming server recorded (when its Flush returned), at 1, 64
// and 256 streams: the median and p99 absolute error of TTFT and of ITL, in
// microseconds. Server and client share this machine's cores, the worst
// case for the client's timing.
func BenchmarkFidelity(b *testing.B) {
	for _, streams := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			url := startServer(b, 32, 5*time.Millisecond, 10*time.Millisecond, true)
			var ttftErr, itlErr []float64
			for b.Loop() {
				cfg := Config{URL: url, Model: "m", Concurrency: streams, NumRequests: 2 * streams,
					InputLen: 16, OutputLen: 32, Warmup: streams, NoExtras: true}
				recs := runRecords(b, cfg)
				flushes := remoteFlushes(b, url)
				for _, r := range recs {
					flushed := flushes["llmtop-bench-"+fmt.Sprint(r.Index)]
					if !r.OK || len(flushed) != r.Chunks {
						b.Fatalf("request %d: ok=%v chunks %d, server flushed %d", r.Index, r.OK, r.Chunks, len(flushed))
					}
					arrived := r.Start.UnixNano() + int64(r.TTFT)
					ttftErr = append(ttftErr, math.Abs(float64(arrived-flushed[0])/1e3))
					for k, g := range r.ITL {
						truth := flushed[k+1] - flushed[k]
						itlErr = append(itlErr, math.Abs(float64(int64(g)-truth)/1e3))
					}
				}
			}
			sort.Float64s(ttftErr)
			sort.Float64s(itlErr)
			b.ReportMetric(report.Percentile(ttftErr, 50), "ttft-err-p50-µs")
			b.ReportMetric(report.Percentile(ttftErr, 99), "ttft-err-p99-µs")
			b.ReportMetric(report.Percentile(itlErr, 50), "itl-err-p50-µs")
			b.ReportMetric(report.Percentile(itlErr, 99), "itl-err-p99-µs")
		})
	}
}

// runRecords runs cfg and returns its raw records (the probe and warmup
// excluded).
func runRecords(b *testing.B, cfg Config) []report.Record {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	r := &runState{cfg: &cfg, model: cfg.Model,
		q: &requester{client: newClient(cfg.Concurrency), url: cfg.BaseURL() + cfg.API.Path(), api: cfg.API, timeout: cfg.Timeout}}
	ctx := context.Background()
	if cfg.Warmup > 0 {
		r.closedLoop(ctx, ctx, cfg.Concurrency, cfg.Warmup, warmupBase, time.Time{})
	}
	r.recs = nil
	r.closedLoop(ctx, ctx, cfg.Concurrency, cfg.NumRequests, 0, time.Time{})
	return r.recs
}

// BenchmarkCapacity drives a zero-latency streaming server (this test
// binary in another process, so CPU is measured for the client alone) with
// 64 streams of 512-token answers and reports the streamed tokens per
// second the client sustained and its CPU time per 1000 tokens.
func BenchmarkCapacity(b *testing.B) {
	const tokens = 512
	url := startServer(b, tokens, 0, 0, false)
	for _, streams := range []int{16, 64} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			var toks int
			var wall, cpu time.Duration
			for b.Loop() {
				cfg := Config{URL: url, Model: "m", Concurrency: streams, Duration: 3 * time.Second,
					InputLen: 16, OutputLen: tokens, Warmup: streams, NoExtras: true}
				c0 := cpuTime()
				res, err := Run(context.Background(), cfg, nil)
				cpu += cpuTime() - c0
				if err != nil || res.Failed > 0 {
					b.Fatalf("err %v, failures %v", err, res.ErrorsByKind)
				}
				toks += res.TotalOutputTokens
				wall += time.Duration(res.Duration * float64(time.Second))
			}
			b.ReportMetric(float64(toks)/wall.Seconds(), "tok/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(toks), "cpu-ms/1000tok")
		})
	}
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStreamLine is the per-chunk cost of the hot path: timestamp,
// SSE framing, the framing check and the one-pass field scan. It must not allocate.
func BenchmarkStreamLine(b *testing.B) {
	line := sseTok[:len(sseTok)-2]
	rec := report.Record{Start: time.Now(), ITL: make([]time.Duration, 0, 1<<20)}
	st := streamState{api: Chat, rec: &rec}
	b.ReportAllocs()
	for b.Loop() {
		if len(rec.ITL) == cap(rec.ITL) {
			rec.ITL = rec.ITL[:0]
		}
		st.line(line, time.Now())
	}
}
