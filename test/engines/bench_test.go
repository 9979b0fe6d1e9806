//go:build engines

package engines

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// TestBenchAgainstLlamaServerClock runs the benchmark against llama-server and checks its numbers
// against the server's own: token counts against the counters, client TTFT against the server's
// prompt time (prompt_seconds_total moves by each request's timings.prompt_ms). The client cannot
// see the first token before the server has processed the prompt, and on loopback it sees it soon
// after; the bound is loose (a unit error is off by 1000×, not by a few ms).
func TestBenchAgainstLlamaServerClock(t *testing.T) {
	s := llama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	// A request first, so the server's first-request costs are not part of its means below.
	if _, err := chat(ctx, s.URL, "", "warm up", 4, false); err != nil {
		t.Fatal(err)
	}
	before, _ := rawMetrics(t, ctx, s)
	// One warmup: bench sends it (to learn whether ignore_eos is accepted) and does not count it,
	// but the engine does.
	const n, outLen, inLen, warmup = 8, 32, 128, 1
	res, err := bench.Run(ctx, bench.Config{
		URL: s.URL, Concurrency: 1, NumRequests: n, InputLen: inLen, OutputLen: outLen, Warmup: warmup, Timeout: time.Minute,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := rawMetrics(t, ctx, s)
	if res.Failed != 0 {
		t.Fatalf("bench: %d completed, %d failed (%v %v)", res.Completed, res.Failed, res.ErrorsByKind, res.ErrorSamples)
	}
	if res.Completed+res.Failed != n || res.Completed == 0 {
		t.Fatalf("bench: %d completed + %d failed, sent %d", res.Completed, res.Failed, n)
	}
	// Every request completed (checked above), so the engine generated for them and the warmup.
	dGen := after["llamacpp:tokens_predicted_total"] - before["llamacpp:tokens_predicted_total"]
	if res.TotalOutputTokens != res.Completed*outLen || float64((res.Completed+warmup)*outLen) != dGen || res.OutputTokensFromChunks != 0 {
		t.Errorf("bench counted %d output tokens (%d from chunks) for %d requests; engine generated %v incl. the warmup; asked %d each",
			res.TotalOutputTokens, res.OutputTokensFromChunks, res.Completed, dGen, outLen)
	}
	// Every prompt word is at least one token of the test vocabulary, plus the chat template's.
	if res.InputTokensFromTarget != 0 || res.TotalInputTokens < res.Completed*inLen {
		t.Errorf("bench counted %d input tokens (%d from targets) for %d prompts of %d words", res.TotalInputTokens, res.InputTokensFromTarget, res.Completed, inLen)
	}
	served := float64(res.Completed + warmup)
	serverPromptMS := (after["llamacpp:prompt_seconds_total"] - before["llamacpp:prompt_seconds_total"]) * 1000 / served
	if !res.MeanTTFT.OK {
		t.Fatal("bench reported no TTFT")
	}
	// Means over slightly different sets (the warmup is in the server's): a loose lower bound.
	if ttft := res.MeanTTFT.V; ttft < serverPromptMS*0.75 || ttft > serverPromptMS+1000 {
		t.Errorf("bench mean TTFT %.2f ms vs server's mean prompt time %.2f ms: must be about it or above, not far above", ttft, serverPromptMS)
	}
	serverTokMS := (after["llamacpp:tokens_predicted_seconds_total"] - before["llamacpp:tokens_predicted_seconds_total"]) * 1000 / dGen
	if !res.MeanTPOT.OK || res.MeanTPOT.V < serverTokMS*0.5 || res.MeanTPOT.V > serverTokMS*3+50 {
		t.Errorf("bench mean TPOT %v ms vs server's %.3f ms per generated token", res.MeanTPOT, serverTokMS)
	}
	t.Logf("bench: ttft %.2f ms (server prompt %.2f ms), tpot %.3f ms (server %.3f ms/token), %d in / %d out tokens",
		res.MeanTTFT.V, serverPromptMS, res.MeanTPOT.V, serverTokMS, res.TotalInputTokens, res.TotalOutputTokens)
}

// TestBenchAgainstOllama runs the benchmark over Ollama's native streaming API and its OpenAI API:
// every request completes and the token counts match what was asked.
func TestBenchAgainstOllama(t *testing.T) {
	s := ollama(t)
	for _, api := range []bench.API{bench.Chat, bench.OllamaGenerate, bench.OllamaChat} {
		t.Run(string(api), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			const n, outLen = 4, 16
			res, err := bench.Run(ctx, bench.Config{
				URL: s.URL, API: api, Concurrency: 1, NumRequests: n, InputLen: 32, OutputLen: outLen, Timeout: time.Minute,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != n || res.Failed != 0 {
				t.Fatalf("%d completed, %d failed (%v %v)", res.Completed, res.Failed, res.ErrorsByKind, res.ErrorSamples)
			}
			if res.TotalOutputTokens != n*outLen || res.OutputTokensFromChunks != 0 {
				t.Errorf("%d output tokens (%d from chunks), want %d from the engine's counts", res.TotalOutputTokens, res.OutputTokensFromChunks, n*outLen)
			}
			if res.ModelID != ollamaModel+":latest" && res.ModelID != ollamaModel {
				t.Errorf("model %q", res.ModelID)
			}
		})
	}
}

// TestBenchCLI runs `llmtop bench --json` against both engines: vllm's field names, counts from the
// engines' usage, and (llama-server) the server's own view attached.
func TestBenchCLI(t *testing.T) {
	for _, eng := range []string{"llama-server", "ollama"} {
		t.Run(eng, func(t *testing.T) {
			var s *server
			if eng == "ollama" {
				s = ollama(t)
			} else {
				s = llama(t)
			}
			out, stderr, code := runLLMTop(t, 2*time.Minute, "bench", s.URL, "--json", "--no-gpu", "--num-requests", "4",
				"--concurrency", "1", "--input-len", "32", "--output-len", "16", "--warmup", "1")
			var res report.Result
			if err := json.Unmarshal(out, &res); err != nil || code != 0 {
				t.Fatalf("bench --json: exit %d, %v; stderr %s; stdout %.400s", code, err, stderr, out)
			}
			if res.Completed != 4 || res.Failed != 0 {
				t.Fatalf("%d completed, %d failed: %v", res.Completed, res.Failed, res.ErrorSamples)
			}
			if res.TotalOutputTokens != res.Completed*16 || res.OutputTokensFromChunks != 0 || !res.MeanTTFT.OK || !res.MeanTPOT.OK {
				t.Errorf("output tokens %d (%d from chunks), ttft %v tpot %v", res.TotalOutputTokens, res.OutputTokensFromChunks, res.MeanTTFT, res.MeanTPOT)
			}
			if eng == "llama-server" && res.Server == nil {
				t.Errorf("no server view attached although llama-server serves /metrics")
			}
			// llama-server has no TTFT metric: the text says so instead
			// of a bare "-- / --"
			if eng == "llama-server" && res.Server != nil {
				txt := report.Text(res)
				if res.ServerEngine != "llama.cpp" || !strings.Contains(txt, "-- / -- (not reported by llama.cpp)") {
					t.Errorf("server engine %q; text:\n%s", res.ServerEngine, txt)
				}
			}
		})
	}
}
