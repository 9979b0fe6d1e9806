package tui

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Data arriving together is drawn in one frame: View keeps the previous
// frame until frameMsg, and only the first message schedules it.
func TestDataIsGatheredIntoOneFrame(t *testing.T) {
	m := newTestModel()
	ss := scrapes(4, healthy)
	for _, s := range ss[:3] {
		m.Update(s)
	}
	m.Update(frameMsg{})  // the frame the first scrape scheduled
	screen(t, m, 200, 60) // a resize draws at once
	before := m.View().Content
	_, cmd := m.Update(ss[3])
	if cmd == nil {
		t.Fatal("the first data message scheduled no frame")
	}
	if _, cmd2 := m.Update(gpus(1, ss[3].Time, false)); cmd2 != nil {
		t.Fatal("a second data message scheduled another frame")
	}
	if got := m.View().Content; got != before {
		t.Fatal("data drawn before the frame was due")
	}
	if _, ok := cmd().(frameMsg); !ok {
		t.Fatal("the scheduled command is not the frame")
	}
	m.Update(frameMsg{})
	after := m.View().Content
	if after == before || !strings.Contains(after, "1 GPU") {
		t.Fatal("the gathered data was not drawn at the frame")
	}
	// A key draws at once, held or not.
	m.Update(ss[3])
	m.Update(press("5"))
	if got := m.View().Content; got == after {
		t.Fatal("a key waited for the frame")
	}
}

// A pane is redrawn only when its own inputs change: a log line leaves the
// latency pane's box as it was; a scrape redraws it.
func TestPanesRedrawOnlyForTheirInputs(t *testing.T) {
	m := newTestModel()
	ss := scrapes(5, healthy)
	for _, s := range ss[:4] {
		m.Update(s)
	}
	screen(t, m, 200, 60)
	lat, ev := m.paneIndex("latency"), m.paneIndex("events")
	box := func(i int) *string { return &m.panes[i].cached[0] }
	l0, e0 := box(lat), box(ev)
	m.Update(model.LogLine{Time: ss[3].Time, Endpoint: testURL, Text: "INFO: 200 OK"})
	m.Update(frameMsg{})
	_ = m.View()
	if box(lat) != l0 || box(ev) != e0 {
		t.Error("a plain log line redrew the latency or events pane")
	}
	ev1 := model.Event{Time: ss[3].Time, Endpoint: testURL, Source: "log", Kind: "cuda_oom", Severity: model.SevCrit, Title: "CUDA out of memory"}
	m.Update(model.LogLine{Time: ss[3].Time, Endpoint: testURL, Text: "OOM", Event: &ev1})
	m.Update(frameMsg{})
	_ = m.View()
	if box(lat) != l0 || box(ev) == e0 {
		t.Error("an event did not redraw the events pane alone")
	}
	m.Update(ss[4])
	m.Update(frameMsg{})
	_ = m.View()
	if box(lat) == l0 {
		t.Error("a scrape did not redraw the latency pane")
	}
}

// Sparklines are read into buffers kept between changes of data: reading
// them again after new data allocates nothing per series.
func TestSeriesReuseTheirBuffers(t *testing.T) {
	m := newTestModel()
	for _, s := range scrapes(120, healthy) {
		m.Update(s)
	}
	d := m.d
	names := []string{model.SeriesGenTPS, model.SeriesPromptTPS, string(model.Running), string(model.TTFT) + model.SeriesLatencyMean}
	for _, n := range names {
		if len(d.Series(n)) < 50 {
			t.Fatalf("%s: %d points", n, len(d.Series(n)))
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		d.invalidate()
		for _, n := range names {
			_ = d.Series(n)
		}
	})
	if allocs > 1 { // one: the store's key list, copied once per change
		t.Fatalf("%.1f allocations per re-read of %d series", allocs, len(names))
	}
}
