package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Issue 31, item 4: at the demo's long-prompts 0:35 ITL p99 was 229 ms and
// the top still read "INFO planned restart": a more severe condition on
// its way to opening leads the top line and the Diagnosis pane, said to be
// forming, above the open INFO.
func TestFormingConditionOutranksAnOpenInfo(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(60, healthy) {
		m.Update(s)
	}
	m.Update(model.LogLines{
		lifeLine(t0.Add(60*time.Second), "uvicorn_shutting_down", model.PhaseStopping, "INFO:     Shutting down", nil),
		lifeLine(t0.Add(61*time.Second), "uvicorn_shutdown_complete", model.PhaseStopped, "INFO:     Application shutdown complete.", nil),
		lifeLine(t0.Add(62*time.Second), "vllm_start", model.PhaseStart, "INFO 11-22 04:01:02 [api_server.py:1896] vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}),
		lifeLine(t0.Add(62*time.Second), "vllm_args", model.PhaseConfig, "INFO 11-22 04:01:02 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', 'enable_chunked_prefill': False}",
			map[string]string{"args": "{'model': 'Qwen/Qwen3-8B', 'enable_chunked_prefill': False}"}),
	})
	var last time.Time
	for _, s := range scrapes(8, stressed) { // the new run, slow from its first second
		s.Time = s.Time.Add(65 * time.Second)
		for i := range s.Samples {
			s.Samples[i].Time = s.Time
			s.Samples[i].Started = t0.Add(62 * time.Second)
		}
		m.Update(s)
		m.Update(tickMsg(s.Time))
		last = s.Time
	}
	m.Update(tickMsg(last.Add(time.Second)))
	rep := m.d.Core.Report()
	if len(rep.Findings) == 0 || rep.Findings[0].Severity != model.SevInfo || len(rep.Pending) == 0 || rep.Pending[0].Severity <= model.SevInfo {
		t.Fatalf("want an open INFO and a more severe condition forming: open %+v, pending %+v", rep.Findings, rep.Pending)
	}
	out := screen(t, m, 120, 40)
	ls := strings.Split(out, "\n")
	want := "forming: " + rep.Pending[0].Title
	if !strings.Contains(ls[2], rep.Pending[0].Severity.Tag()) || !strings.Contains(ls[2], want[:40]) {
		t.Errorf("the top line hides the forming %s under the open INFO: %q", rep.Pending[0].Severity.Tag(), ls[2])
	}
	m.Update(press("6"))
	out = screen(t, m, 120, 40)
	i := strings.Index(out, "6 Diagnosis")
	if i < 0 {
		t.Fatalf("no Diagnosis pane:\n%s", out)
	}
	body := strings.SplitN(out[i:], "\n", 3)
	if len(body) < 2 || !strings.Contains(body[1], "forming") {
		t.Errorf("the zoomed Diagnosis does not lead with the forming condition:\n%s", out)
	}
}
