package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// flushRecorder is a ResponseWriter that streams into nothing.
type flushRecorder struct{ h http.Header }

func (f *flushRecorder) Header() http.Header         { return f.h }
func (f *flushRecorder) Write(p []byte) (int, error) { return len(p), nil }
func (f *flushRecorder) WriteHeader(int)             {}
func (f *flushRecorder) Flush()                      {}

// 10k clients stream at once (through the handler, without sockets: the
// machine's file limit would not hold 20k): the queue holds them, the sim
// starts no goroutine of its own per request, and memory per waiting
// request stays small. Reports heap bytes and goroutines beyond the
// clients' own, per request.
func BenchmarkTenThousandConcurrentStreams(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		s := newDriven(b, Config{MaxNumSeqs: 256})
		h := s.Handler()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for j := 0; j < n; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"prompt":"hello there","max_tokens":100000,"ignore_eos":true,"stream":true}`)).WithContext(ctx)
				h.ServeHTTP(&flushRecorder{h: http.Header{}}, req)
			}()
		}
		for {
			f := families(b, s)
			if value(f, "vllm:num_requests_waiting", "", "")+value(f, "vllm:num_requests_running", "", "") == n {
				break
			}
			time.Sleep(time.Millisecond)
		}
		_ = s.Advance(time.Second)
		runtime.GC()
		var during runtime.MemStats
		runtime.ReadMemStats(&during)
		extra := runtime.NumGoroutine() - g0 - n
		cancel()
		wg.Wait()
		if a := value(families(b, s), "vllm:request_success_total", "finished_reason", "abort"); a != n {
			b.Fatalf("%v aborted, want %d", a, n)
		}
		b.ReportMetric(float64(during.HeapAlloc-before.HeapAlloc)/n, "heap-B/stream")
		b.ReportMetric(float64(extra), "sim-goroutines")
	}
}
