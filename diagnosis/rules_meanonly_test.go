package diagnosis

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Seen against a real llama-server under 3 streams for 60 s: its log gave
// a TTFT mean of 126 ms (no percentiles) while the client measured a p99
// of 540 ms, and the diagnosis listed "TTFT p99 within the SLO" as checked
// with the 200 ms SLO. A mean within the SLO does not bound the p99: the
// rule says it could not judge, naming why. A mean over the SLO still
// raises the finding (the p99 is over it too).
func TestMeanOnlyLatencyIsNotCheckedAgainstAP99SLO(t *testing.T) {
	meanOnly := func(mean float64) model.Dist {
		return model.Dist{Mean: model.Some(mean), Count: 358, Exposed: true, Source: model.FromLog}
	}
	under := ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		e.State.Latency = map[model.Latency]model.Dist{model.TTFT: meanOnly(0.126), model.TPOT: meanOnly(0.0034)}
	})
	rep := Evaluate(input(under), DefaultConfig())
	for _, c := range rep.Checked {
		if strings.Contains(c, "TTFT p99") || strings.Contains(c, "ITL/TPOT p99") {
			t.Errorf("checked %q on a mean alone", c)
		}
	}
	for _, want := range []string{"TTFT p99 against the SLO (only a mean is known", "TPOT p99 against the SLO (only a mean is known"} {
		if !slices.ContainsFunc(rep.Missing, func(m string) bool { return strings.Contains(m, want) }) {
			t.Errorf("not checked %q: want a line with %q", rep.Missing, want)
		}
	}

	over := ep(func(e *Endpoint) {
		e.Identity.Engine = model.LlamaCpp
		e.State.Latency = map[model.Latency]model.Dist{model.TTFT: meanOnly(0.9), model.TPOT: meanOnly(0.0034)}
	})
	rep = Evaluate(input(over), DefaultConfig())
	if !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return strings.HasPrefix(f.ID, "ttft") }) {
		t.Errorf("a TTFT mean of 900 ms over the 200 ms SLO raised no TTFT finding: %v", ids(rep.Findings))
	}
}

// The mean-only line is built per latency (meanOnly), out of the static
// scan TestEveryLackHasAReason makes: its reason code is checked here.
func TestMeanOnlyLackHasAReason(t *testing.T) {
	for _, what := range []string{"TTFT", "TPOT", "ITL"} {
		if got := MissingReason("http://10.0.0.1:8000: " + meanOnly(what)); got != "not_exposed" {
			t.Errorf("%s: reason %q, want not_exposed (the engine gives no p99)", what, got)
		}
	}
}
