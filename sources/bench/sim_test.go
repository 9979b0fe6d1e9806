package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// BenchmarkSimFidelity runs the load generator against the simulator (the
// default model and GPU, real clock, in this process) at 1, 64 and 256
// streams and compares, per request, the client's TTFT and every ITL with
// the sim's own record of when it emitted each token: the median and p99
// absolute error in µs. The sim and the client share this machine's cores.
func BenchmarkSimFidelity(b *testing.B) {
	for _, streams := range []int{1, 64, 256} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			s, err := sim.New(sim.Config{Seed: 1, StartupTime: time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s.Start(ctx)
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			waitHealthy(b, srv.URL)
			c := newClient(streams)
			mdl, err := discoverModel(ctx, c, &Config{URL: srv.URL, API: Chat})
			if err != nil {
				b.Fatal(err)
			}
			var ttftErr, itlErr []float64
			unmatched := 0
			for b.Loop() {
				// At most 256 requests: the sim keeps the last 256 records.
				cfg := Config{URL: srv.URL, Model: mdl, Concurrency: streams, NumRequests: streams,
					InputLen: 64, OutputLen: 48}
				for _, r := range runRecords(b, cfg) {
					_, tokens, ok := s.TokenTimes(r.ResponseID)
					if !r.OK || !ok || len(tokens) != r.Chunks {
						unmatched++
						continue
					}
					arrived := r.Start.Add(r.TTFT)
					ttftErr = append(ttftErr, math.Abs(float64(arrived.Sub(tokens[0]))/1e3))
					for k, g := range r.ITL {
						itlErr = append(itlErr, math.Abs(float64(g-tokens[k+1].Sub(tokens[k]))/1e3))
					}
				}
			}
			if len(ttftErr) == 0 {
				b.Fatalf("no request matched the sim's record (%d unmatched)", unmatched)
			}
			sort.Float64s(ttftErr)
			sort.Float64s(itlErr)
			b.ReportMetric(report.Percentile(ttftErr, 50), "ttft-err-p50-µs")
			b.ReportMetric(report.Percentile(ttftErr, 99), "ttft-err-p99-µs")
			b.ReportMetric(report.Percentile(itlErr, 50), "itl-err-p50-µs")
			b.ReportMetric(report.Percentile(itlErr, 99), "itl-err-p99-µs")
			b.ReportMetric(float64(unmatched), "unmatched")
		})
	}
}

func waitHealthy(b testing.TB, url string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	b.Fatal("the sim did not become healthy")
}

// The simulator runs at most --max-num-seqs requests at once; the sweep
// must put the knee there: throughput flat and TTFT climbing beyond it.
func TestSweepFindsSimKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~10 s of load against the simulator")
	}
	s, err := sim.New(sim.Config{Seed: 1, StartupTime: time.Millisecond, MaxNumSeqs: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	waitHealthy(t, srv.URL)
	sc := SweepConfig{Base: Config{URL: srv.URL, InputLen: 64, OutputLen: 24, Warmup: 1}, Max: 32, Step: time.Second}
	sw, err := Sweep(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sw.Steps {
		t.Logf("%g streams: %.0f tok/s, TTFT p50 %.1f ms", st.Load, st.Result.OutputThroughput, st.Result.MedianTTFT.V)
	}
	if sw.Knee < 0 || sw.Steps[sw.Knee].Load != 4 {
		t.Fatalf("knee %d (%s), want 4 streams (the sim's --max-num-seqs)", sw.Knee, sw.KneeRule)
	}
}
