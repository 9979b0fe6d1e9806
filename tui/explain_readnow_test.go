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
