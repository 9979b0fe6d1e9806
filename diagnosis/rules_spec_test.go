package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 27 item 5: speculative decoding, by draft position and against the
// run before it. The per-position shares are those of the vLLM fixture
// (sources/engine/testdata/vllm.txt: 142000, 96000 and 63000 accepted over
// 180000 drafts).
func TestSpeculativeDecodingPayoff(t *testing.T) {
	speculating := func(accept float64, tpotS float64, reqs float64) func(*Endpoint) {
		return func(e *Endpoint) {
			e.State.SpecAccept = model.Some(accept)
			e.State.SpecAcceptPos = []model.Opt{model.Some(142000.0 / 180000), model.Some(96000.0 / 180000), model.Some(63000.0 / 180000)}
			e.State.Latency[model.TPOT] = dist(tpotS, tpotS*1.2, tpotS*1.5, tpotS)
			e.State.RequestsPS = model.Some(reqs)
			e.Runs = []model.Run{
				{N: 1, Started: t0.Add(-2 * time.Hour), Summary: model.RunSummary{Samples: 600, TPOTp50ms: model.Some(20), RequestsPS: model.Some(2)}},
				{N: 2, Started: t0.Add(-time.Hour), Summary: model.RunSummary{Samples: 600, SpecAccept: model.Some(accept)}},
			}
		}
	}
	runCases(t, []ruleCase{
		{name: "low acceptance, by position", in: input(ep(speculating(0.3, 0.019, 2))), want: "spec_accept_low", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "accepted by draft position (share of drafts) 1: 79 %, 2: 53 %, 3: 35 %") || !hasAction(f, `"num_speculative_tokens": 2`) {
				t.Errorf("%+v %+v", f.Evidence, f.Actions)
			}
		}},
		{name: "no faster than the run before", in: input(ep(speculating(0.56, 0.0195, 2.2))), want: "spec_no_gain", check: func(t *testing.T, f *Finding) {
			if f.Title != "speculative decoding does not pay off: TPOT 19.5 ms with it, 20.0 ms without (run 1)" || !hasEvidence(f, "load 2.2 req/s now, 2 req/s then") {
				t.Errorf("%q %+v", f.Title, f.Evidence)
			}
		}},
		{name: "faster", in: input(ep(speculating(0.56, 0.012, 2))), none: "spec_no_gain"},
		{name: "another load", in: input(ep(speculating(0.56, 0.0195, 6))), none: "spec_no_gain", lacks: "not the same load"},
		{name: "the run before speculated too", in: input(ep(func(e *Endpoint) {
			speculating(0.56, 0.0195, 2)(e)
			e.Runs[0].Summary.SpecAccept = model.Some(0.6)
		})), none: "spec_no_gain"},
	})
}

// llama-server without its speculative counters: the log's per-request
// tallies (ggml-org/llama.cpp#24536's line, twice).
func TestSpeculativeAcceptanceFromTheLlamaLog(t *testing.T) {
	line := "0.06.896.015 I slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 accepted /   259 generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)"
	x := model.Event{Time: t0.Add(-time.Minute), Endpoint: url, Source: "log", Kind: "llamacpp_draft_acceptance", Line: line,
		Fields: map[string]string{"accepted": "167", "drafted": "259", "per_pos": "0.805, 0.632, 0.483"}}
	poor := x
	poor.Time, poor.Fields = t0.Add(-30*time.Second), map[string]string{"accepted": "20", "drafted": "300"}
	llama := func(e *Endpoint) { e.Identity.Engine = model.LlamaCpp }
	in := input(ep(llama))
	in.LogsOn, in.Events = true, []model.Event{x, poor}
	good := input(ep(llama))
	good.LogsOn, good.Events = true, []model.Event{x}
	runCases(t, []ruleCase{
		{name: "two requests, 187 of 559", in: in, want: "spec_accept_low", check: func(t *testing.T, f *Finding) {
			if f.Title != "speculative decoding acceptance low (33 %)" || !hasEvidence(f, "187 of 559 draft tokens accepted over 2 request(s); by position, the newest: 0.805, 0.632, 0.483") ||
				f.Evidence[0].Source != "log: llama-server's draft acceptance lines" {
				t.Errorf("%q %+v", f.Title, f.Evidence)
			}
		}},
		{name: "one good request", in: good, none: "spec_accept_low"},
	})
}
