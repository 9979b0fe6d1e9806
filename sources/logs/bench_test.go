package logs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// benchLines is a realistic busy vLLM log: mostly request lines, some
// stats, an occasional warning and error.
var benchLines = func() [][]byte {
	var out [][]byte
	for i := 0; i < 1000; i++ {
		var l string
		switch {
		case i%200 == 0:
			l = statsLine
		case i%500 == 7:
			l = "(EngineCore_DP0 pid=456) ERROR 08-14 12:00:05 [core.py:710] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free."
		case i%3 == 0:
			l = fmt.Sprintf("(APIServer pid=123) INFO 08-14 12:00:01 [logger.py:43] Received request chatcmpl-%08x: prompt: '', params: SamplingParams(n=1, temperature=0.7, max_tokens=256), prompt_token_ids: None", i)
		default:
			l = fmt.Sprintf("(APIServer pid=123) INFO:     127.0.0.1:%d - \"POST /v1/chat/completions HTTP/1.1\" 200 OK", 40000+i)
		}
		out = append(out, []byte(l))
	}
	return out
}()

// BenchmarkCatalogue: lines/s through the full catalogue (sanitize + match).
func BenchmarkCatalogue(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		DefaultMatcher.Match(model.SanitizeLine(benchLines[i%len(benchLines)]))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkSourceLine: the whole per-line path (sanitize, timestamp,
// catalogue, stats, queue) with a UI that takes everything.
func BenchmarkSourceLine(b *testing.B) {
	src := NewSource(Options{MaxLinesPerSec: 1 << 30, QueueLines: 1 << 30}, func(any) {})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		src.Line(benchLines[i%len(benchLines)])
		if len(src.queue) > 100000 {
			src.queue = src.queue[:0]
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkFollow5000LinesPerSec: CPU of this process (follower, source,
// delivery at the default 1000 lines/s cap) while a separate writer
// process appends 5 000 lines/s to a file for 5 s. Reported as % of one
// core.
func BenchmarkFollow5000LinesPerSec(b *testing.B) {
	for i := 0; i < b.N; i++ {
		path := filepath.Join(b.TempDir(), "flood.log")
		ctx, cancel := context.WithCancel(context.Background())
		var delivered atomic.Int64 // messages: a batch of lines is one
		src := NewSource(Options{}, func(any) { delivered.Add(1) })
		go src.Run(ctx)
		go FollowFile(ctx, path, FileOptions{}, src)

		w := exec.Command(os.Args[0], "-test.run=^$")
		w.Env = append(os.Environ(), "LLMTOP_LOG_WRITER="+path, "LLMTOP_LOG_RATE=5000", "LLMTOP_LOG_SECONDS=5")
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		start := time.Now()
		if err := w.Run(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the last poll
		wall := time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		cancel()
		cpu := tv(after.Utime) + tv(after.Stime) - tv(before.Utime) - tv(before.Stime)
		st := src.Stats()
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%core")
		written, _ := os.ReadFile(path)
		b.ReportMetric(float64(bytes.Count(written, []byte("\n"))), "written")
		b.ReportMetric(float64(st.Lines), "lines")
		b.ReportMetric(float64(st.Dropped), "dropped")
		b.ReportMetric(float64(delivered.Load())/wall.Seconds(), "msgs/s")
	}
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// TestMain doubles as the benchmark's writer process.
func TestMain(m *testing.M) {
	if path := os.Getenv("LLMTOP_LOG_WRITER"); path != "" {
		rate, _ := strconv.Atoi(os.Getenv("LLMTOP_LOG_RATE"))
		secs, _ := strconv.Atoi(os.Getenv("LLMTOP_LOG_SECONDS"))
		os.Exit(writeLog(path, rate, time.Duration(secs)*time.Second))
	}
	os.Exit(m.Run())
}

// writeLog appends rate lines/s, in 10 ms batches, for d.
func writeLog(path string, rate int, d time.Duration) int {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	perTick := rate / 100
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.Now().Add(d)
	n := 0
	buf := make([]byte, 0, 64<<10)
	for time.Now().Before(end) {
		<-tick.C
		buf = buf[:0]
		for j := 0; j < perTick; j++ {
			buf = append(buf, benchLines[n%len(benchLines)]...)
			buf = append(buf, '\n')
			n++
		}
		if _, err := f.Write(buf); err != nil {
			return 1
		}
	}
	return 0
}
