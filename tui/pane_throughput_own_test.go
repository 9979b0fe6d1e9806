package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// Issue 14 item 23: the engine's own throughput gauges are shown, labelled
// as the engine's. The values are the real llama-server recording's
// (testdata/engines/llamacpp-metrics.txt: prompt_tokens_seconds 4548.47,
// predicted_tokens_seconds 0) beside a window rate llmtop computed, read
// here as another engine's; TestLlamaOwnRatesAreBusyTime reads them as
// llama.cpp's.
func TestThroughputShowsTheEnginesOwnGauges(t *testing.T) {
	st := model.State{Source: model.FromScrape, PromptTPS: model.Some(120), GenTPS: model.Some(35),
		EnginePromptTPS: model.Some(4548.47), EngineGenTPS: model.Some(0)}
	got := engineOwn(core.ThroughputOf(st, model.VLLM))
	// Issue 31 item 27: llama.cpp's gauges average the requests finished
	// since the previous /metrics read; its 0 beside 35 tok/s measured
	// says none finished since, not "engine says gen 0 tok/s".
	if !strings.HasSuffix(got, "engine says prompt "+fmtNum(model.Some(4548.47))+" tok/s") || strings.Contains(got, "gen 0") {
		t.Errorf("got %q", got)
	}
	// With nothing measured either, the engine's 0 is said.
	st.GenTPS = model.None
	if got := engineOwn(core.ThroughputOf(st, model.VLLM)); !strings.Contains(got, "gen 0 tok/s") {
		t.Errorf("got %q", got)
	}
	st.GenTPS = model.Some(35)
	// The rate shown is the gauge itself (no counter): nothing twice.
	st.PromptTPS, st.GenTPS = st.EnginePromptTPS, st.EngineGenTPS
	if got := engineOwn(core.ThroughputOf(st, model.VLLM)); got != "" {
		t.Errorf("repeats the rate shown: %q", got)
	}
	// A log's averages are already labelled as the log's.
	st = model.State{Source: model.FromLog, EngineGenTPS: model.Some(50)}
	if got := engineOwn(core.ThroughputOf(st, model.VLLM)); got != "" {
		t.Errorf("log source: %q", got)
	}
}

// Seen on a real llama-server under load at 200x50: the throughput pane is
// 62 wide and its row "errors --/s · rates over 25s · engine says prompt
// 6842 tok/s, g…" lost the engine's generation figure. With a spare line
// the engine's figures get their own; nothing in the pane is clipped.
func TestThroughputEngineOwnFiguresAreNotClipped(t *testing.T) {
	m := newTestModel()
	ss := scrapes(60, healthy)
	for i := range ss {
		for j := range ss[i].Samples {
			ss[i].Samples[j].Gauges[model.PromptTPSGauge] = 6842.08
			ss[i].Samples[j].Gauges[model.GenTPSGauge] = 330.77
		}
		m.Update(ss[i])
	}
	got := ansi.Strip(throughputPane{}.View(m.Data(), 62, 20))
	for _, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 62 {
			t.Errorf("line wider than the pane (the frame clips it): %q", l)
		}
	}
	if !strings.Contains(got, "engine says prompt 6842 tok/s, gen 331 tok/s") {
		t.Fatalf("missing the engine's own figures:\n%s", got)
	}
	// No spare line: the row stays one line (clipped), the finish mix kept.
	got = ansi.Strip(throughputPane{}.View(m.Data(), 62, 6))
	if !strings.Contains(got, "finish") {
		t.Fatalf("the finish line was pushed out:\n%s", got)
	}
}

// llama.cpp states its throughput gauges over its slots' processing time
// (1e3 / t_prompt_processing × n_prompt_tokens_processed): 4548 tok/s of
// prompt beside 120 tok/s over the window is a slot's speed, not the
// server's throughput, and the pane says so.
func TestLlamaOwnRatesAreBusyTime(t *testing.T) {
	st := model.State{Source: model.FromScrape, PromptTPS: model.Some(120), GenTPS: model.Some(35),
		EnginePromptTPS: model.Some(4548.47), EngineGenTPS: model.Some(95.5)}
	want := " · engine over its busy time: prompt " + fmtNum(model.Some(4548.47)) + ", gen " + fmtNum(model.Some(95.5)) + " tok/s"
	if got := engineOwn(core.ThroughputOf(st, model.LlamaCpp)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Before llama.cpp's counters give a rate (its first scrape), the window's
// prompt rate fell back to prompt_tokens_seconds and the row read "prompt
// 4548 tok/s" as the server's throughput: it is the engine's own, over its
// busy time.
func TestLlamaBusyGaugeIsNotTheWindowsRate(t *testing.T) {
	st := model.State{Source: model.FromScrape, PromptTPS: model.Some(4548.47), EnginePromptTPS: model.Some(4548.47)}
	tp := core.ThroughputOf(st, model.LlamaCpp)
	if tp.Prompt.OK || tp.OwnPrompt.V != 4548.47 || !tp.Busy {
		t.Errorf("%+v: want no window rate and the engine's own over busy time", tp)
	}
	if got := engineOwn(tp); got != " · engine over its busy time: prompt "+fmtNum(model.Some(4548.47))+" tok/s" {
		t.Errorf("got %q", got)
	}
	// SGLang's gen_throughput is a wall-clock rate: it stands in.
	st = model.State{Source: model.FromScrape, GenTPS: model.Some(900), EngineGenTPS: model.Some(900)}
	if tp := core.ThroughputOf(st, model.SGLang); tp.Gen.V != 900 || tp.OwnGen.OK || tp.Busy {
		t.Errorf("sglang %+v: want its gauge as the window's rate", tp)
	}
}
