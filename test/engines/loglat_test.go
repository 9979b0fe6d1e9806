//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// Issue 20: engines without latency histograms time every request in their log. These tests load
// the real engines with the benchmark, read the engine's log with `llmtop snapshot --json --log`,
// and compare llmtop's log-derived percentiles with the client's.

// snapshotLog runs `llmtop snapshot --json --log logPath url`.
func snapshotLog(t *testing.T, url, logPath, interval string) model.EndpointJSON {
	t.Helper()
	out, stderr, code := runLLMTop(t, 60*time.Second, "snapshot", "--json", "--no-gpu", "--interval", interval, "--timeout", "10s", "--log", logPath, url)
	var doc model.SnapshotJSON
	if err := json.Unmarshal(out, &doc); err != nil || code != 0 || len(doc.Endpoints) != 1 || doc.Endpoints[0].Metrics == nil {
		t.Fatalf("snapshot --json --log: exit %d, %v; stderr %s; stdout %.800s", code, err, stderr, out)
	}
	return doc.Endpoints[0]
}

// countLines counts the lines of the file at path that re matches (the test's own reading of the
// engine's log, independent of llmtop's catalogue).
func countLines(t *testing.T, path string, re *regexp.Regexp) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return len(re.FindAll(b, -1))
}

var llamaTotalLine = regexp.MustCompile(`(?m)print_timing: id +\d+ \| task \d+ \| +total time = `)

func within(got, want, rel, abs float64) bool { return math.Abs(got-want) <= rel*math.Abs(want)+abs }

// TestLogLatencyLlamaServerUnderQueue: llama-server with 2 slots under 6 streams (4 requests wait for
// a slot at any time), its log attached.
//
// What must agree, and why within these bounds:
//   - prefill: llama-server's prompt eval time excludes the wait for a slot; the client's TTFT is
//     queue + prefill + loopback. So the log's prefill p50 is at most the client's TTFT p50, and
//     the gap is the queueing the client saw.
//   - TTFT (mean): llmtop's estimate is Little's law's queue (mean waiting ÷ mean running × time in
//     a slot, from two scrapes 2 s apart while the load runs) + the log's mean prefill. The client's
//     mean TTFT over the whole run must be within a factor of 2 of it: two gauge readings of a
//     closed loop whose waiting count swings 0–4 as requests finish and the next arrive.
//   - TPOT: both exclude the first token (eval time ÷ (tokens − 1); client (E2E − TTFT) ÷
//     (tokens − 1)); the client's adds chunk delivery over loopback: p50 within 25 % + 0.3 ms.
//   - E2E (mean): llama-server's total time has no slot wait, so E2E is estimated as the queue, prefill
//     and decode means: within a factor 2 of the client's mean E2E, as TTFT.
//   - count: every print_timing total line of the run, counted here with the test's own regex.
func TestLogLatencyLlamaServerUnderQueue(t *testing.T) {
	bin := engineBin(t, "LLMTOP_LLAMA_SERVER")
	modelPath := writeModel(t, llamaShape)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := startPrivateLlama(t, bin, modelPath, port, "loglat", "-np", "2", "-c", "8192", "--slots", "-tb", "1")
	defer p.stop()
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	const streams, n, warmup, inLen, outLen = 6, 48, 2, 256, 64
	type result struct {
		res report.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := bench.Run(ctx, bench.Config{URL: url, Concurrency: streams, NumRequests: n, InputLen: inLen, OutputLen: outLen,
			Warmup: warmup, Timeout: time.Minute}, nil)
		done <- result{res, err}
	}()
	// Mid-run: once a third of the requests are done the queue is in its steady state.
	for countLines(t, p.logPath, llamaTotalLine) < warmup+n/3 {
		select {
		case r := <-done:
			t.Fatalf("bench ended before a third of its requests were logged: %v", r.err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	mid := snapshotLog(t, url, p.logPath, "2s")
	r := <-done
	if r.err != nil || r.res.Failed != 0 || r.res.Completed != n {
		t.Fatalf("bench: %v, %d completed, %d failed (%v)", r.err, r.res.Completed, r.res.Failed, r.res.ErrorSamples)
	}
	res := r.res
	final := snapshotLog(t, url, p.logPath, "1s")
	m, mm := final.Metrics, mid.Metrics

	logged := countLines(t, p.logPath, llamaTotalLine)
	for name, d := range map[string]model.DistJSON{"prefill": m.Prefillms, "tpot": m.TPOTms, "decode": m.Decodems} {
		if d.Source != model.FromLog || d.Estimate || !d.Count.OK || int(d.Count.V) != logged || !d.P50.OK || !d.P99.OK {
			t.Errorf("%s: %+v; want exact percentiles from the log over its %d requests", name, d, logged)
		}
	}
	if logged != n+warmup {
		t.Errorf("the log holds %d finished tasks; the bench sent %d + %d warmups", logged, n, warmup)
	}
	// Prefill is TTFT without the wait for a slot (and the loopback).
	if m.Prefillms.P50.V > res.MedianTTFT.V {
		t.Errorf("log prefill p50 %.1f ms above the client's TTFT p50 %.1f ms: the client cannot see its first token before the prompt is done",
			m.Prefillms.P50.V, res.MedianTTFT.V)
	}
	queued := res.MeanTTFT.V - m.Prefillms.Mean.V
	// TTFT estimated while loaded: queue (Little's law) + prefill.
	q, tt := mm.Queuems, mm.TTFTms
	if !q.Mean.OK || q.Approx != model.LittleApprox || q.P50.OK || !tt.Mean.OK || tt.Source != model.FromLog {
		t.Fatalf("mid-run queue %+v / ttft %+v: want the Little's law estimate and TTFT = queue + prefill, means only", q, tt)
	}
	if tt.Mean.V < res.MeanTTFT.V/2 || tt.Mean.V > res.MeanTTFT.V*2 {
		t.Errorf("llmtop's TTFT estimate %.0f ms (queue %.0f + prefill) vs the client's mean TTFT %.0f ms: more than a factor 2 apart",
			tt.Mean.V, q.Mean.V, res.MeanTTFT.V)
	}
	if !within(m.TPOTms.P50.V, res.MedianTPOT.V, 0.25, 0.3) {
		t.Errorf("log TPOT p50 %.3f ms vs the client's %.3f ms: more than 25 %% + 0.3 ms apart", m.TPOTms.P50.V, res.MedianTPOT.V)
	}
	// llama-server's total time leaves the slot wait out: E2E is estimated like TTFT (queue + prefill
	// + decode means), with the same bound and for the same reason.
	if e := mm.E2Ems; !e.Mean.OK || e.P50.OK || e.Mean.V < res.MeanE2EL.V/2 || e.Mean.V > res.MeanE2EL.V*2 {
		t.Errorf("mid-run E2E %+v vs the client's mean %.0f ms: want a mean within a factor 2", e, res.MeanE2EL.V)
	}
	t.Logf("client: TTFT mean %.0f p50 %.0f p99 %.0f ms, TPOT p50 %.3f p99 %.3f ms, E2E mean %.0f ms", res.MeanTTFT.V, res.MedianTTFT.V,
		res.P99TTFT.V, res.MedianTPOT.V, res.P99TPOT.V, res.MeanE2EL.V)
	t.Logf("log (n=%d): prefill mean %.0f p50 %.0f p99 %.0f ms, TPOT p50 %.3f p99 %.3f ms; client TTFT − log prefill = %.0f ms queued",
		logged, m.Prefillms.Mean.V, m.Prefillms.P50.V, m.Prefillms.P99.V, m.TPOTms.P50.V, m.TPOTms.P99.V, queued)
	t.Logf("mid-run (running %v, waiting %v): queue estimate %.0f ms, TTFT estimate %.0f ms, E2E estimate %.0f ms", mm.Running, mm.Waiting,
		q.Mean.V, tt.Mean.V, mm.E2Ems.Mean.V)
}

var ollamaInferenceLine = regexp.MustCompile(`(?m)^\[GIN\] .*\| 200 \|.*"/api/chat"`)

// TestLogLatencyOllama: Ollama with one parallel slot under 3 streams, its log attached. Ollama's log
// times each request (the gin access line: the whole request as its server handled it, including
// the wait for the runner); at its default level it logs no prompt or eval timing, so E2E is what
// the log allows. Against the client's E2E: the same requests from either end of a loopback
// connection, p50 within 20 % + 50 ms (the client also parses the NDJSON stream).
func TestLogLatencyOllama(t *testing.T) {
	bin := engineBin(t, "LLMTOP_OLLAMA")
	modelPath := writeModel(t, gguf.Tiny)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startOllamaWith(bin, modelPath, port, "ollama-loglat", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Proc.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const streams, n, warmup, outLen = 3, 15, 1, 16
	res, err := bench.Run(ctx, bench.Config{URL: s.URL, API: bench.OllamaChat, Concurrency: streams, NumRequests: n, InputLen: 32,
		OutputLen: outLen, Warmup: warmup, Timeout: time.Minute}, nil)
	if err != nil || res.Completed != n || res.Failed != 0 {
		t.Fatalf("bench: %v, %d completed, %d failed (%v)", err, res.Completed, res.Failed, res.ErrorSamples)
	}
	ep := snapshotLog(t, s.URL, s.Proc.logPath, "1s")
	e := ep.Metrics.E2Ems
	logged := countLines(t, s.Proc.logPath, ollamaInferenceLine)
	if e.Source != model.FromLog || e.Estimate || !e.Count.OK || int(e.Count.V) != logged || logged != n+warmup {
		t.Fatalf("e2e %+v: want exact percentiles from the log over its %d /api/chat lines (%d requests + %d warmup sent)", e, logged, n, warmup)
	}
	if !within(e.P50.V, res.MedianE2EL.V, 0.2, 50) {
		t.Errorf("log E2E p50 %.1f ms vs the client's %.1f ms: more than 20 %% + 50 ms apart", e.P50.V, res.MedianE2EL.V)
	}
	for name, d := range map[string]model.DistJSON{"prefill": ep.Metrics.Prefillms, "ttft": ep.Metrics.TTFTms, "queue": ep.Metrics.Queuems} {
		if d.Count.OK || d.P50.OK || d.Mean.OK {
			t.Errorf("%s: %+v; Ollama's log does not time it, so it must be null", name, d)
		}
	}
	t.Logf("client E2E p50 %.0f p99 %.0f ms; log (n=%d) p50 %.0f p99 %.0f ms", res.MedianE2EL.V, res.P99E2EL.V, logged, e.P50.V, e.P99.V)
}
