package tui

import (
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// The benchmark's newest result feeds the client-vs-server and bad-output
// rules: the root files it with the core as the run ends (whichever panes
// are shown), before the bench overlay shows it.

// fileBench hands a finished benchmark to the core.
func (m *Model) fileBench(msg benchDoneMsg) {
	recordBench(m.d, msg.o)
}

// recordBench hands a finished benchmark to the core (the rules, and the
// run it measured, with the load it offered) through the root's Input,
// which records it.
func recordBench(d *Data, o BenchOutcome) {
	b := benchInput(d, o)
	if b == nil {
		return
	}
	rb := model.RunBench{Time: b.Start, Completed: b.Completed, Failed: b.Failed,
		TTFTp99ms: b.TTFTp99, TPOTp99ms: tpotP99(o), OutputTPS: outputTPS(o), Load: loadOf(o)}
	d.Input(model.BenchDone{Bench: *b, Run: rb})
}

// loadOf is the load a single run offered (a sweep offers many: nil).
func loadOf(o BenchOutcome) *model.BenchLoad {
	if o.Result == nil || o.Sweep != nil || o.Spec.Streams <= 0 {
		return nil
	}
	sp := o.Spec
	return &model.BenchLoad{Preset: sp.Preset, Streams: sp.Streams, DurationS: sp.Duration.Seconds(), InputLen: sp.InputLen, OutputLen: sp.OutputLen}
}

// benchInput turns an outcome into the rules' client-side numbers, with
// the server's view over the same window from the monitor's scrapes. A
// sweep contributes its last level.
func benchInput(d *Data, o BenchOutcome) *diagnosis.Bench {
	r := benchResult(o)
	if r == nil || r.Completed+r.ErrorsByKind[string(report.ErrEmpty)] == 0 {
		return nil
	}
	b := &diagnosis.Bench{URL: o.Spec.URL, Start: r.StartTime, End: r.EndTime, Completed: r.Completed, Failed: r.Failed,
		TTFTp50: r.MedianTTFT, TTFTp99: r.P99TTFT, ITLp50: r.MedianITL, ITLp99: r.P99ITL, TPOTp50: r.MedianTPOT,
		Empty: r.ErrorsByKind[string(report.ErrEmpty)], Blank: r.BlankResponses, Echoed: r.EchoedResponses, Cancelled: r.Cancelled}
	// With ignore_eos the engine generates past the model's own end, where
	// loops are expected of a healthy model: they say nothing about it.
	if !r.IgnoreEOS {
		b.Repetitive = r.RepetitiveResponses
	}
	if b.URL == "" {
		b.URL = r.BaseURL
	}
	server := r.Server
	if server == nil {
		server = serverView(d, b.URL, BenchOutcome{Result: r})
	}
	if server != nil {
		b.ServerTTFTp50, b.ServerITLp50, b.ServerRequests = server.TTFTms.P50, server.ITLms.P50, server.TTFTms.Count
	}
	return b
}

func benchResult(o BenchOutcome) *report.Result {
	if o.Result != nil {
		return o.Result
	}
	if o.Sweep != nil && len(o.Sweep.Steps) > 0 {
		return &o.Sweep.Steps[len(o.Sweep.Steps)-1].Result
	}
	return nil
}

func tpotP99(o BenchOutcome) model.Opt {
	if r := benchResult(o); r != nil {
		return r.P99TPOT
	}
	return model.None
}

func outputTPS(o BenchOutcome) model.Opt {
	if r := benchResult(o); r != nil && r.OutputThroughput > 0 {
		return model.Some(r.OutputThroughput)
	}
	return model.None
}
