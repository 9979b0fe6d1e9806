package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Issue 14 item 8: `e` names the metric the adapter read for the selected
// endpoint (an older vLLM's ITL), beside each engine's usual source.
func TestExplainNamesTheMetricRead(t *testing.T) {
	st := model.State{From: map[string]string{"itl": "vllm:time_per_output_token_seconds", "kv_cache_usage_ratio": "vllm:gpu_cache_usage_perc"}}
	got := map[string]string{}
	for _, ex := range explanations {
		got[ex.Name] = ex.readNow(st)
	}
	if got["ITL"] != "vllm:time_per_output_token_seconds" || got["KV cache"] != "vllm:gpu_cache_usage_perc" || got["TTFT"] != "" {
		t.Errorf("read now: %v", got)
	}
}

// A real llama-server's Scheduler pane read "prefix-cache hit 2.7%" (from
// llamacpp:prompt_tokens_cached_total) while `e` said of the same row
// "not exposed: shown as --".
func TestExplainLlamaCppPrefixCacheHasASource(t *testing.T) {
	for _, ex := range explanations {
		if ex.Name != "prefix-cache hit" {
			continue
		}
		from := strings.Join(ex.from(model.LlamaCpp), " ")
		if !strings.Contains(from, "llamacpp:prompt_tokens_cached_total") {
			t.Fatalf("llama.cpp prefix-cache hit from %q", from)
		}
		return
	}
	t.Fatal("no prefix-cache row")
}

// With llama-server's log attached the Latency pane showed "TTFT mean
// 344ms (approx.) log n=185" while `e` said only "from: not exposed": the
// row now says the value on screen is read from the log.
func TestExplainSaysALatencyIsReadFromTheLog(t *testing.T) {
	st := model.State{Latency: map[model.Latency]model.Dist{
		model.TTFT: {Source: model.FromLog, Count: 185},
		model.ITL:  {Source: model.FromScrape, Count: 10},
	}}
	got := map[string]bool{}
	for _, ex := range explanations {
		got[ex.Name] = ex.fromLog(st)
	}
	if !got["TTFT"] || got["ITL"] || got["E2E"] {
		t.Fatalf("from the log: %v", got)
	}
}
