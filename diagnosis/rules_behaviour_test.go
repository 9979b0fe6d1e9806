package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func finishes(counts map[string]float64) func(*Endpoint) {
	return func(e *Endpoint) {
		var n float64
		for _, c := range counts {
			n += c
		}
		e.State.FinishCount, e.State.FinishShare = counts, map[string]float64{}
		for r, c := range counts {
			e.State.FinishShare[r] = c / n
		}
	}
}

func bench(mut func(b *Bench)) Input {
	in := input(ep(nil))
	b := &Bench{URL: url, Start: t0.Add(-30 * time.Second), End: t0, Completed: 100,
		TTFTp50: model.Some(60), ITLp50: model.Some(16), ServerTTFTp50: model.Some(50), ServerITLp50: model.Some(15)}
	if mut != nil {
		mut(b)
	}
	in.Bench = b
	return in
}

// own marks n of the window's finished requests as llmtop's own ignore_eos
// benchmark's.
func own(in Input, n float64) Input {
	in.OwnLength = map[string]float64{url: n}
	return in
}

func TestBehaviourRules(t *testing.T) {
	runCases(t, []ruleCase{
		// llmtop's own benchmark (tune's load) asks ignore_eos: its requests
		// finishing with reason length say nothing of the clients' caps.
		{name: "length share of llmtop's own benchmark left out", in: own(input(ep(finishes(map[string]float64{"stop": 60, "length": 40}))), 30), none: "finish_length"},
		{name: "length share high besides llmtop's own benchmark", in: own(input(ep(finishes(map[string]float64{"stop": 60, "length": 60}))), 30), want: "finish_length",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "33 % of 90 requests finished with reason length, leaving out the 30 of llmtop's own benchmark") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "too few besides llmtop's own benchmark", in: own(input(ep(finishes(map[string]float64{"stop": 5, "length": 40}))), 30), none: "finish_length"},
		{name: "length share high", in: input(ep(finishes(map[string]float64{"stop": 60, "length": 40}))), want: "finish_length",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "40 % of 100 requests") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "length share at 30 % counts", in: input(ep(finishes(map[string]float64{"stop": 70, "length": 30}))), want: "finish_length"},
		{name: "length share under", in: input(ep(finishes(map[string]float64{"stop": 71, "length": 29}))), none: "finish_length"},
		{name: "too few requests to judge", in: input(ep(finishes(map[string]float64{"stop": 5, "length": 10}))), none: "finish_length"},
		{name: "aborts warn", in: input(ep(finishes(map[string]float64{"stop": 90, "abort": 10}))), want: "finish_errors",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevWarn {
					t.Errorf("%v", f.Severity)
				}
			}},
		{name: "errors are critical", in: input(ep(finishes(map[string]float64{"stop": 90, "error": 10}))), want: "finish_errors",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit {
					t.Errorf("%v", f.Severity)
				}
			}},
		{name: "bad outputs", in: bench(func(b *Bench) { b.Empty, b.Repetitive = 8, 4 }), want: "bench_bad_output",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "8 empty, 0 echoing the prompt, 4 repetitive of 108 answers") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "few bad outputs", in: bench(func(b *Bench) { b.Empty = 11 }), none: "bench_bad_output"},
		{name: "bad outputs at 10 %", in: bench(func(b *Bench) { b.Repetitive = 10 }), want: "bench_bad_output"},
		{name: "echoed and blank answers", in: bench(func(b *Bench) { b.Echoed, b.Blank = 7, 3 }), want: "bench_bad_output",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "3 empty, 7 echoing the prompt, 0 repetitive of 100 answers") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "echoed just under 10 %", in: bench(func(b *Bench) { b.Echoed = 9 }), none: "bench_bad_output"},
		{name: "client close to server", in: bench(nil), none: "client_server_gap"},
		{name: "client TTFT far above server", in: bench(func(b *Bench) { b.TTFTp50 = model.Some(400) }), want: "client_server_gap",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "TTFT p50 client 400 ms vs server ≈50 ms") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "bursty stream: client ITL above server", in: bench(func(b *Bench) { b.ITLp50 = model.Some(40) }), want: "client_server_gap",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "proxy_buffering off") {
					t.Errorf("%+v", f.Actions)
				}
			}},
		// Issue 31, item 5: the demo's `b` beside its own background
		// traffic — the server's window held three times the benchmark's
		// requests, with shorter prompts — read as a proxy that is not there.
		{name: "server numbers mixed with other traffic", in: bench(func(b *Bench) {
			b.TTFTp50, b.ServerRequests = model.Some(400), model.Some(3*float64(b.Completed))
		}), none: "client_server_gap", lacks: "other traffic is mixed into the server's numbers"},
		{name: "server window holds the benchmark's own requests", in: bench(func(b *Bench) {
			b.TTFTp50, b.ServerRequests = model.Some(400), model.Some(float64(b.Completed)+3)
		}), want: "client_server_gap"},
		{name: "a stopped run is not compared", in: bench(func(b *Bench) { b.TTFTp50, b.Cancelled = model.Some(400), 16 }),
			none: "client_server_gap", lacks: "stopped early"},
		{name: "ratio met but gap tiny", in: bench(func(b *Bench) { b.TTFTp50, b.ServerTTFTp50 = model.Some(20), model.Some(5) }), none: "client_server_gap"},
	})
}
