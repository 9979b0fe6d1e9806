package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// When every observation sits in the lowest bucket the interpolated
// quantiles are artefacts: the latency pane and the symptom table say
// "<edge" instead (model.Dist.AllBelow).
func TestLowestBucketShowsUnderTheEdge(t *testing.T) {
	fast := func(i int) load {
		l := healthy(i)
		l.ttftLo, l.ttftHi = 0.0002, 0.0009 // under vLLM's 1 ms first TTFT bucket
		return l
	}
	m := newTestModel()
	for _, s := range scrapes(30, fast) {
		m.Update(s)
	}
	st := m.d.State()
	if d := st.Latency[model.TTFT]; !d.AllBelow.OK || d.AllBelow.V != 0.001 {
		t.Fatalf("fixture: TTFT AllBelow %+v", d.AllBelow)
	}
	out := screen(t, m, 200, 60)
	var ttft, symptom string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "TTFT "); i >= 0 && ttft == "" {
			ttft = l
		}
		if strings.Contains(l, "TTFT p99") {
			symptom = l
		}
	}
	if !strings.Contains(ttft, "all <1ms (lowest bucket) mean") || strings.Contains(ttft, "p50≈") {
		t.Errorf("latency pane TTFT row: %q", ttft)
	}
	if !strings.Contains(symptom, "<1ms") || !strings.Contains(symptom, "ok") {
		t.Errorf("symptom row: %q\n%s", symptom, out)
	}
	// The ITL row, spread over many buckets, keeps its estimates.
	if !strings.Contains(out, "p99≈") {
		t.Errorf("other rows lost their quantiles:\n%s", out)
	}
}

// QA #6: an ITL p99 estimated just under a 50 ms target that is a bucket
// edge is "edge", not a confident "ok".
func TestSymptomAtABucketEdgeSaysEdge(t *testing.T) {
	atEdge := func(i int) load {
		l := healthy(i)
		l.itlLo, l.itlHi = 0.03, 0.05 // all in vLLM's (25 ms, 50 ms] bucket
		return l
	}
	m := newTestModel()
	for _, s := range scrapes(30, atEdge) {
		m.Update(s)
	}
	var row string
	for _, l := range strings.Split(paneView(m, 60, 20), "\n") {
		if strings.HasPrefix(l, "ITL p99") {
			row = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(row), "edge") {
		t.Fatalf("ITL row: %q", row)
	}
}

// A mean-only latency (llama.cpp's TPOT: generation seconds ÷ generated
// tokens) is shown by its mean, judged by it only when it is over the
// target (a mean under the p99 target says nothing of the p99: "no p99",
// not "ok"; a real llama-server's 126 ms TTFT mean came with a 540 ms p99
// at the client), and the window note neither calls it a bucket estimate
// nor its token count "requests".
func TestMeanOnlyLatency(t *testing.T) {
	tpot := model.Dist{Mean: model.Some(0.0292), Count: 640, Window: 17 * time.Second, Exposed: true,
		Approx: "aggregate: generation seconds ÷ generated tokens"}
	row := p99Symptom("TPOT p99", tpot, 50*time.Millisecond, DefaultThresholds, MITL)
	if row.name != "TPOT mean" || row.value != "29.2ms" || row.lvl == LevelOK || row.verdict != "no p99" {
		t.Errorf("symptom %+v: want the mean, no \"ok\" but \"no p99\"", row)
	}
	strict := DefaultThresholds
	strict.ITLp99 = 20 * time.Millisecond
	if row := p99Symptom("TPOT p99", tpot, strict.ITLp99, strict, MITL); row.lvl == LevelOK {
		t.Errorf("29.2 ms mean against a 20 ms objective judged ok: %+v", row)
	}
	m := newTestModel()
	note := windowNote(tpot, m.d)
	if !strings.HasPrefix(note, "means over 17s") || strings.Contains(note, "requests") || strings.Contains(note, "bucket") ||
		!strings.Contains(note, "approx: aggregate") {
		t.Errorf("window note %q", note)
	}
}

// Issue 31 item 12: percentiles past the highest finite bucket are "> 30s",
// as the lowest bucket's are "all <10ms"; a p50 inside the buckets keeps
// its estimate, and a floor under the target is no "ok".
func TestPastLastBucketShowsOverTheBound(t *testing.T) {
	d := model.Dist{P50: model.Some(4), P90: model.Some(30), P95: model.Some(30), P99: model.Some(30), Mean: model.Some(213.654),
		Count: 38, Window: time.Minute, Estimate: true, Exposed: true, Above: model.Some(30), AboveQ: 0.9}
	txt := distText(NewStyles(true, true), DefaultThresholds, d, -1)
	if !strings.Contains(txt, "p50≈4.00s") || !strings.Contains(txt, "p90>30.0s") || !strings.Contains(txt, "p99>30.0s") || strings.Contains(txt, "≈30.0s") {
		t.Errorf("latency row %q", txt)
	}
	row := p99Symptom("TTFT p99", d, 60*time.Second, DefaultThresholds, MTTFT)
	if row.value != ">30.0s" || row.lvl == LevelOK {
		t.Errorf("symptom %+v: a floor under the target is no verdict", row)
	}
	if row := p99Symptom("TTFT p99", d, 2*time.Second, DefaultThresholds, MTTFT); row.value != ">30.0s" || row.lvl == LevelOK || row.lvl == LevelNone {
		t.Errorf("symptom %+v: over a 2 s target must be judged bad", row)
	}
}
