package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Issue 14 item 23: the engine's own throughput gauges are shown, labelled
// as the engine's. The values are the real llama-server recording's
// (testdata/engines/llamacpp-metrics.txt: prompt_tokens_seconds 4548.47,
// predicted_tokens_seconds 0) beside a window rate llmtop computed.
func TestThroughputShowsTheEnginesOwnGauges(t *testing.T) {
	st := model.State{Source: model.FromScrape, PromptTPS: model.Some(120), GenTPS: model.Some(35),
		EnginePromptTPS: model.Some(4548.47), EngineGenTPS: model.Some(0)}
	got := engineOwn(st)
	// Issue 31 item 27: llama.cpp's gauges average the requests finished
	// since the previous /metrics read; its 0 beside 35 tok/s measured
	// says none finished since, not "engine says gen 0 tok/s".
	if !strings.HasSuffix(got, "engine says prompt "+fmtNum(model.Some(4548.47))+" tok/s") || strings.Contains(got, "gen 0") {
		t.Errorf("got %q", got)
	}
	// With nothing measured either, the engine's 0 is said.
	st.GenTPS = model.None
	if got := engineOwn(st); !strings.Contains(got, "gen 0 tok/s") {
		t.Errorf("got %q", got)
	}
	st.GenTPS = model.Some(35)
	// The rate shown is the gauge itself (no counter): nothing twice.
	st.PromptTPS, st.GenTPS = st.EnginePromptTPS, st.EngineGenTPS
	if got := engineOwn(st); got != "" {
		t.Errorf("repeats the rate shown: %q", got)
	}
	// A log's averages are already labelled as the log's.
	st = model.State{Source: model.FromLog, EngineGenTPS: model.Some(50)}
	if got := engineOwn(st); got != "" {
		t.Errorf("log source: %q", got)
	}
}
