package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func lifeLine(at time.Time, kind, phase, text string, fields map[string]string) model.LogLine {
	f := map[string]string{"phase": phase}
	for k, v := range fields {
		f[k] = v
	}
	return model.LogLine{Time: at, Text: text, Event: &model.Event{Time: at, Source: "log", Kind: kind, Severity: model.SevInfo,
		Category: model.CategoryLifecycle, Title: text, Line: text, Fields: f}}
}

// A restart with a changed flag under load: the header says RESTARTED, the
// windows say they cover the new run, and r compares the two runs with the
// configuration diff and a verdict.
func TestRunsViewComparesAPlannedRestart(t *testing.T) {
	m := newTestModel()
	args := func(n string) string { return "{'model': 'Qwen/Qwen3-8B', 'max_num_seqs': " + n + "}" }
	m.Update(model.LogLines{
		lifeLine(t0.Add(-10*time.Second), "vllm_start", model.PhaseStart, "vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}),
		lifeLine(t0.Add(-10*time.Second), "vllm_args", model.PhaseConfig, "non-default args: "+args("256"), map[string]string{"args": args("256")}),
	})
	for _, s := range scrapes(60, stressed) {
		m.Update(s)
		m.Update(tickMsg(s.Time))
	}
	m.Update(model.LogLines{
		lifeLine(t0.Add(61*time.Second), "uvicorn_shutting_down", model.PhaseStopping, "INFO:     Shutting down", nil),
		lifeLine(t0.Add(61*time.Second), "uvicorn_shutdown_complete", model.PhaseStopped, "INFO:     Application shutdown complete.", nil),
		lifeLine(t0.Add(65*time.Second), "vllm_start", model.PhaseStart, "vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}),
		lifeLine(t0.Add(65*time.Second), "vllm_args", model.PhaseConfig, "non-default args: "+args("128"), map[string]string{"args": args("128")}),
	})
	for _, s := range shifted(scrapes(40, stressed), 70*time.Second) {
		m.Update(s)
		m.Update(tickMsg(s.Time))
	}
	out := screen(t, m, 200, 60)
	if head := strings.SplitN(out, "\n", 2)[0]; !strings.Contains(head, "RESTARTED") {
		t.Errorf("header: %s", head)
	}
	// The banner came 5 s before the new run's first scrape.
	if !strings.Contains(out, "over 39s · restarted 44s ago") {
		t.Errorf("the windows do not say they cover the new run:\n%s", out)
	}
	m.Update(press("r"))
	out = screen(t, m, 200, 60)
	for _, want := range []string{"Run 1 → run 2", "args.max_num_seqs 256 → 128", "planned", "clean shutdown", "TTFT p99"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs view lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "args.max_num_seqs 256 → 128: TTFT p99 ") {
		t.Errorf("no one-line verdict:\n%s", out)
	}
	// At 80 columns the table keeps its latency and load columns whole.
	out = screen(t, m, 80, 24)
	if !strings.Contains(out, "ITL p99    tok/s") || strings.Contains(out, "KV pk") {
		t.Errorf("runs view at 80x24:\n%s", out)
	}
	// Issue 31 item 22: at 80x24 the comparison, below the run's detail,
	// was past the bottom and no key reached it.
	for _, want := range []string{"Run 1 → run 2", "args.max_num_seqs 256 → 128: TTFT p99 ", "TTFT p99"} {
		if !strings.Contains(out, want) {
			t.Errorf("runs view at 80x24 lacks %q:\n%s", want, out)
		}
	}
}

// Sparklines mark where a new run starts.
func TestSparklineMarksTheRestart(t *testing.T) {
	var pts []model.Point
	for i := 0; i < 10; i++ {
		pts = append(pts, model.Point{T: t0.Add(time.Duration(i) * time.Second), V: float64(i), OK: true})
	}
	pts = append(pts, model.Point{T: t0.Add(10 * time.Second), Restart: true})
	for i := 11; i < 20; i++ {
		pts = append(pts, model.Point{T: t0.Add(time.Duration(i) * time.Second), V: 1, OK: true})
	}
	if got := sparkline(pts, 20, 0); !strings.Contains(got, "┊") || strings.Index(got, "┊") != strings.Index(got, string(blocks[7]))+len(string(blocks[7])) {
		t.Fatalf("sparkline %q: want the restart mark right after the old run's last cell", got)
	}
	if got := sparkline(pts, 5, 0); strings.Count(got, "┊") != 1 {
		t.Fatalf("resampled to 5 columns: %q, want one restart mark", got)
	}
}

// Issue 31 item 22: after a demo's worth of restarts, the runs view at
// 80x24 still shows the selected run's comparison (it was below the run
// table and the run's detail, past the bottom, and no key scrolled to it),
// and moving the selection keeps it on screen.
func TestRunsViewComparisonReachableAt80x24(t *testing.T) {
	m := newTestModel()
	at := t0
	for n := range 6 {
		seqs := []string{"256", "128"}[n%2]
		args := "{'model': 'Qwen/Qwen3-8B', 'max_num_seqs': " + seqs + "}"
		m.Update(model.LogLines{
			lifeLine(at, "vllm_start", model.PhaseStart, "vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}),
			lifeLine(at, "vllm_args", model.PhaseConfig, "non-default args: "+args, map[string]string{"args": args}),
		})
		for _, s := range shifted(scrapes(20, stressed), at.Sub(t0)+5*time.Second) {
			m.Update(s)
			m.Update(tickMsg(s.Time))
		}
		at = at.Add(30 * time.Second)
		m.Update(model.LogLines{
			lifeLine(at, "uvicorn_shutting_down", model.PhaseStopping, "INFO:     Shutting down", nil),
			lifeLine(at, "uvicorn_shutdown_complete", model.PhaseStopped, "INFO:     Application shutdown complete.", nil),
		})
		at = at.Add(5 * time.Second)
	}
	m.Update(press("r"))
	out := screen(t, m, 80, 24)
	delta := regexp.MustCompile(`TTFT p99 +4\.92s → 4\.92s`)
	if !strings.Contains(out, "Run 5 → run 6") || !delta.MatchString(out) || !strings.Contains(out, "→ 128") {
		t.Fatalf("runs view at 80x24 lacks the comparison:\n%s", out)
	}
	m.Update(press("k"))
	m.Update(press("k"))
	if out := screen(t, m, 80, 24); !strings.Contains(out, "Run 3 → run 4") || !strings.Contains(out, "▸ 4") || !delta.MatchString(out) {
		t.Errorf("after k k, run 4 and its comparison:\n%s", out)
	}
}

// The runs view's notes wrap at 80 and 120 columns instead of losing
// their end ("rates …"): what the table's numbers mean is the whole line.
func TestRunsViewNotesWrap(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(60, stressed) {
		m.Update(s)
		m.Update(tickMsg(s.Time))
	}
	m.Update(press("r"))
	for _, w := range []int{80, 120} {
		out := screen(t, m, w, 40)
		if !strings.Contains(out, "latencies: percentiles over the run's last") || !strings.Contains(out, "rates averaged over") {
			t.Errorf("%d columns: the latencies note is cut:\n%s", w, out)
		}
	}
}
