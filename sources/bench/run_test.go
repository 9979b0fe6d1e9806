package bench

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

func quick(url string) Config {
	return Config{URL: url, Concurrency: 4, NumRequests: 12, InputLen: 8, OutputLen: 8, Timeout: 5 * time.Second}
}

func run(t *testing.T, cfg Config) report.Result {
	t.Helper()
	done := make(chan struct{})
	var res report.Result
	var err error
	go func() {
		defer close(done)
		res, err = Run(context.Background(), cfg, nil)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not finish")
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestRunHealthyStream(t *testing.T) {
	for _, api := range APIs {
		t.Run(string(api), func(t *testing.T) {
			f := &fakeEngine{tokens: 6, gap: time.Millisecond}
			s := newFake(t, f)
			cfg := quick(s.URL + "/v1/")
			cfg.API = api
			res := run(t, cfg)
			if res.Completed != 12 || res.Failed != 0 {
				t.Fatalf("completed=%d failed=%d errors=%v", res.Completed, res.Failed, res.ErrorsByKind)
			}
			if res.TotalOutputTokens != 12*6 || res.TotalInputTokens != 12*11 {
				t.Errorf("tokens in/out = %d/%d, want %d/%d from usage", res.TotalInputTokens, res.TotalOutputTokens, 12*11, 12*6)
			}
			if res.OutputTokensFromChunks != 0 || res.InputTokensFromTarget != 0 {
				t.Errorf("usage not read: %+v", res.Metrics)
			}
			wantModel := "fake-model"
			if api.ndjson() {
				wantModel = "llama3:8b"
			}
			if res.ModelID != wantModel || res.Endpoint != api.Path() {
				t.Errorf("model %q endpoint %q", res.ModelID, res.Endpoint)
			}
			// 5 gaps of ≥1 ms each: ITL and TPOT can't be below 1 ms.
			if !res.MedianITL.OK || res.MedianITL.V < 1 || !res.MeanTPOT.OK || res.MeanTPOT.V < 1 {
				t.Errorf("itl %v tpot %v", res.MedianITL, res.MeanTPOT)
			}
			if res.MaxConcurrent < 1 || res.MaxConcurrent > 4 || f.peak > 4 {
				t.Errorf("concurrency: client peak %d, server peak %d, cap 4", res.MaxConcurrent, f.peak)
			}
			if res.RequestGoodput.OK {
				t.Error("goodput must be null without SLOs")
			}
		})
	}
}

func TestTTFTSkipsRoleOnlyChunk(t *testing.T) {
	f := &fakeEngine{tokens: 3, roleDelay: 40 * time.Millisecond}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.NumRequests, cfg.Concurrency = 2, 1
	res := run(t, cfg)
	if !res.MedianTTFT.OK || res.MedianTTFT.V < 40 {
		t.Fatalf("TTFT %v ms: the role-only chunk 40 ms before content must not count", res.MedianTTFT)
	}
}

func TestBadAnswersEndWithCounts(t *testing.T) {
	cases := []struct {
		name string
		f    *fakeEngine
		kind string
		ok   int
	}{
		{"500", &fakeEngine{mode: "status", status: 500}, "http_500", 0},
		{"404", &fakeEngine{mode: "status", status: 404}, "http_404", 0},
		{"429 Retry-After", &fakeEngine{mode: "429"}, "rate_limited", 0},
		{"closed mid-stream", &fakeEngine{mode: "midclose"}, "disconnect", 0},
		{"ended without [DONE]", &fakeEngine{mode: "cleanclose"}, "disconnect", 0},
		{"malformed JSON", &fakeEngine{mode: "malformed"}, "malformed_stream", 0},
		{"not SSE", &fakeEngine{mode: "garbage"}, "malformed_stream", 0},
		{"error object", &fakeEngine{mode: "errobj"}, "stream_error", 0},
		{"no content", &fakeEngine{tokens: -1}, "empty_response", 0},
		{"no usage chunk", &fakeEngine{noUsage: true}, "", 12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			s := newFake(t, f)
			if f.tokens < 0 {
				f.tokens = 0
			}
			cfg := quick(s.URL)
			res := run(t, cfg)
			if res.Completed != tc.ok || res.Completed+res.Failed != 12 {
				t.Fatalf("completed=%d failed=%d (%v)", res.Completed, res.Failed, res.ErrorsByKind)
			}
			if tc.kind != "" && res.ErrorsByKind[tc.kind] != 12 {
				t.Fatalf("errors %v, want 12 × %s; samples %q", res.ErrorsByKind, tc.kind, res.ErrorSamples)
			}
			if tc.kind == "" && (res.OutputTokensFromChunks != 12 || res.TotalOutputTokens != 12*8) {
				t.Fatalf("without usage, output tokens come from chunks: %+v", res.Metrics)
			}
			if tc.kind == "rate_limited" && (!res.MaxRetryAfterS.OK || res.MaxRetryAfterS.V != 1) {
				t.Errorf("Retry-After %v, want 1 s", res.MaxRetryAfterS)
			}
			if tc.ok == 0 && (res.MeanTTFT.OK || res.P99E2EL.OK) {
				t.Errorf("no successful request, latencies must be null: %v %v", res.MeanTTFT, res.P99E2EL)
			}
		})
	}
}

func TestNeverAnswersTimesOut(t *testing.T) {
	f := &fakeEngine{mode: "hang"}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.NumRequests, cfg.Timeout = 4, 200*time.Millisecond
	res := run(t, cfg)
	if res.ErrorsByKind["timeout"] != 4 || res.Failed != 4 {
		t.Fatalf("errors %v", res.ErrorsByKind)
	}
}

func TestUnreachableHostStopsEarly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := quick("http://" + addr)
	cfg.Model, cfg.NumRequests, cfg.Duration = "m", 0, 20*time.Second
	start := time.Now()
	res := run(t, cfg)
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v: an unreachable endpoint must stop the run early", time.Since(start))
	}
	if res.ErrorsByKind["connect"] < refusedLimit || res.Completed != 0 {
		t.Fatalf("errors %v", res.ErrorsByKind)
	}
	if len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, " "), "refused") {
		t.Errorf("notes %q", res.Notes)
	}
	// Without --model the model list is asked for first: a clear error.
	cfg.Model = ""
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("err %v", err)
	}
}

func TestCancelAbortsInFlightKeepsPartial(t *testing.T) {
	f := &fakeEngine{tokens: 50, gap: 20 * time.Millisecond}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.NumRequests, cfg.Duration, cfg.Concurrency, cfg.NoExtras = 0, time.Minute, 3, true
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var last Progress
	start := time.Now()
	res, err := Run(ctx, cfg, func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("cancel took %v", time.Since(start))
	}
	if res.Cancelled != 3 || res.Failed != 0 {
		t.Fatalf("cancelled=%d failed=%d %v", res.Cancelled, res.Failed, res.ErrorsByKind)
	}
	if last.InFlight != 0 {
		t.Errorf("final progress has %d in flight", last.InFlight)
	}
}

func TestRefusedExtrasAreDropped(t *testing.T) {
	f := &fakeEngine{refuseExtras: true}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.Warmup = 1 // the warmup's first request probes the extras
	res := run(t, cfg)
	if res.Completed != 12 || res.IgnoreEOS {
		t.Fatalf("completed=%d ignore_eos=%v errors=%v", res.Completed, res.IgnoreEOS, res.ErrorsByKind)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "ignore_eos") {
		t.Errorf("notes %q", res.Notes)
	}
}

func TestOpenLoopRespectsCap(t *testing.T) {
	f := &fakeEngine{tokens: 4, gap: 10 * time.Millisecond}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.Rate, cfg.Concurrency, cfg.NumRequests = 200, 2, 10
	res := run(t, cfg)
	if res.Completed != 10 || f.peak > 2 {
		t.Fatalf("completed=%d server peak=%d (cap 2)", res.Completed, f.peak)
	}
	if res.RequestRate != 200 {
		t.Errorf("rate %v", res.RequestRate)
	}
}

func TestSLOGoodput(t *testing.T) {
	f := &fakeEngine{tokens: 4, first: 30 * time.Millisecond}
	s := newFake(t, f)
	cfg := quick(s.URL)
	cfg.SLO = report.SLO{TTFT: 10 * time.Millisecond}
	res := run(t, cfg)
	if !res.RequestGoodput.OK || res.RequestGoodput.V != 0 {
		t.Fatalf("goodput %v: every TTFT ≥ 30 ms misses a 10 ms SLO", res.RequestGoodput)
	}
	cfg.SLO = report.SLO{TTFT: 5 * time.Second}
	res = run(t, cfg)
	if !res.RequestGoodput.OK || res.RequestGoodput.V != res.RequestThroughput {
		t.Fatalf("goodput %v throughput %v", res.RequestGoodput, res.RequestThroughput)
	}
}
