package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/sources/gpu"
)

// countingWriter counts what reaches the file.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkRecordingSize records one simulated hour of one endpoint at a
// 1 s refresh: the vLLM simulator through its scenarios (scraped through
// the real adapter, its log through the real log source, a simulated GPU),
// flushed once a second as the Recorder does. "busy-log" adds ten uvicorn
// access lines a second, as vLLM prints them for ten requests a second.
// The budget (issue 18) is 5 MB an hour per endpoint.
//
//	go test ./cmd/llmtop -run '^$' -bench RecordingSize -benchtime 1x
func BenchmarkRecordingSize(b *testing.B) {
	for _, access := range []int{0, 10} {
		name := "sim-log"
		if access > 0 {
			name = fmt.Sprintf("busy-log-%d-lines-per-s", access)
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				n, recs := recordSimHour(b, access)
				b.ReportMetric(float64(n)/1e6, "MB/hour/endpoint")
				b.ReportMetric(float64(recs), "records/hour")
				if n > 5e6 {
					b.Errorf("%.2f MB an hour: over the 5 MB budget", float64(n)/1e6)
				}
			}
		})
	}
}

// BenchmarkReplaySeekHour is what a seek to the end of an hour costs the
// replayer: the nearest checkpoint of the core decoded and the records
// after it fed in (one simulated hour as BenchmarkRecordingSize records
// it, busy log). The index's one pass over the file, in the background
// while the replay plays, is reported as index_s.
//
//	go test ./cmd/llmtop -run '^$' -bench ReplaySeekHour -benchtime 5x
func BenchmarkReplaySeekHour(b *testing.B) {
	var file bytes.Buffer
	recordSimHourTo(b, &file, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	rp, _ := replayerOn(b, ctx, file.Bytes(), replayOptions{Speed: 1}, time.Time{})
	last, _, err, _ := rp.x.waitDone(ctx.Done())
	if err != nil {
		b.Fatal(err)
	}
	index := time.Since(start)
	b.ResetTimer()
	for range b.N {
		if _, err := rp.seekTo(last); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(index.Seconds(), "index_s")
}

func recordSimHour(b *testing.B, accessPerSec int) (int64, int64) {
	var out countingWriter
	recs := recordSimHourTo(b, &out, accessPerSec)
	return out.n, recs
}

func recordSimHourTo(b testing.TB, out io.Writer, accessPerSec int) int64 {
	ss := newSimSession(b, "healthy:10m,queue-buildup:10m,kv-pressure:10m,long-prompts:10m,decode-bound:10m,crash-restart:5m,healthy")
	w, err := recording.NewWriter(out, recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url},
		Interval: recording.Duration(time.Second), Window: recording.Duration(time.Minute), Simulated: true})
	if err != nil {
		b.Fatal(err)
	}
	gpus := gpu.NewSimulated(gpu.Config{Now: ss.clk.Now, Filter: gpu.NewFilter(nil, "", false)}, 1, func() gpu.SimLoad {
		l := ss.s.Load()
		return gpu.SimLoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
	})
	defer gpus.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3600 {
		for range accessPerSec {
			fmt.Fprintf(ss.log, "INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", 30000+rng.IntN(30000))
		}
		at, msgs := ss.step(b)
		snap, evs := gpus.Refresh()
		msgs = append(msgs, snap)
		for _, e := range evs {
			msgs = append(msgs, e)
		}
		for _, m := range msgs {
			if _, err := w.Write(at, m); err != nil {
				b.Fatal(err)
			}
		}
		w.Write(at, recording.Tick{})
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	recs := w.Records()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return recs
}
