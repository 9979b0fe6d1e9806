package diagnosis

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// tgiEP is a TGI endpoint whose window finished requests with counts (the
// adapter's finish reasons: "success" and tgi_request_failure's err labels).
func tgiEP(counts map[string]float64) Endpoint {
	return ep(func(e *Endpoint) {
		e.Identity.Engine, e.Identity.Version = model.TGI, "3.3.6"
		e.State.Info = map[string]string{}
		finishes(counts)(e)
	})
}

// Issue 14 items 17 and 19: TGI's failures count as errors, its 429s as
// rejections naming --max-concurrent-requests; --max-batch-size (a flag
// for hardware without unpadded inference) is never TGI's batch knob.
func TestTGIErrorsAndRejections(t *testing.T) {
	runCases(t, []ruleCase{
		// shared/fixtures/metrics/tgi.txt's shape: validation 7, generation 2
		// of 821; here generation failures are 10 %.
		{name: "generation failures are errors", in: input(tgiEP(map[string]float64{"success": 180, "generation": 20})), want: "finish_errors",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit || !hasEvidence(f, "error 10 %") {
					t.Errorf("%v %+v", f.Severity, f.Evidence)
				}
			}},
		{name: "the fixture's 1 % failures are not a finding", in: input(tgiEP(map[string]float64{"success": 812, "validation": 7, "generation": 2})), none: "finish_errors"},
		{name: "429 overloaded", in: input(tgiEP(map[string]float64{"success": 190, "overloaded": 10})), want: "api_rejections",
			check: func(t *testing.T, f *Finding) {
				if !hasAction(f, "--max-concurrent-requests higher (default 128)") || !strings.Contains(f.Cause, "HTTP 429") {
					t.Errorf("%s %+v", f.Cause, f.Actions)
				}
				if !hasEvidence(f, "10 of 200 requests rejected as overloaded") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
		{name: "overloaded is not an engine error", in: input(tgiEP(map[string]float64{"success": 190, "overloaded": 10})), none: "finish_errors"},
	})
	for _, n := range []int{0, 16} {
		if c := capChange(model.TGI, n); strings.Contains(c, "--max-batch-size") || !strings.Contains(c, "--max-batch-total-tokens") {
			t.Errorf("TGI cap %q", c)
		}
	}
}
