package core

import (
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Throughput is an endpoint's token rates as every face shows them (the
// screen's Throughput pane, snapshot): the rates over the window, and the
// engine's own gauges apart, with which seconds those divide by.
type Throughput struct {
	// Prompt and Gen are tokens per second of the wall clock over the
	// window (a counter's rate, or a gauge the engine states over the
	// wall clock where no counter gives one).
	Prompt, Gen model.Opt
	// OwnPrompt and OwnGen are the engine's own gauges where they say
	// something the rates do not (model.State.EngineOwnTPS).
	OwnPrompt, OwnGen model.Opt
	// Busy: the engine's own divide by its slots' processing time, not
	// the wall clock (engines.BusyRate: llama.cpp's).
	Busy bool
}

// ThroughputOf is st's rates for an endpoint of engine e. A gauge stated
// over busy time never stands in for a window's rate: before llama.cpp's
// counters give a rate its prompt_tokens_seconds read "prompt 4548 tok/s"
// as the server's throughput; it is the engine's own, labelled, instead.
func ThroughputOf(st model.State, e model.Engine) Throughput {
	t := Throughput{Prompt: st.PromptTPS, Gen: st.GenTPS}
	t.OwnPrompt, t.OwnGen = st.EngineOwnTPS()
	for _, x := range []struct {
		gauge     model.Gauge
		own, rate model.Opt
		win, show *model.Opt
	}{
		{model.PromptTPSGauge, st.EnginePromptTPS, st.PromptTPS, &t.Prompt, &t.OwnPrompt},
		{model.GenTPSGauge, st.EngineGenTPS, st.GenTPS, &t.Gen, &t.OwnGen},
	} {
		if !engines.BusyRate(e, string(x.gauge)) {
			continue
		}
		if st.Source == model.FromScrape && x.own.OK && x.rate == x.own {
			*x.win, *x.show = model.None, x.own
		}
		t.Busy = t.Busy || x.show.OK
	}
	return t
}
