package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
)

// QA #7: findings opening and closing, and preemptions starting and
// stopping, are events on the user's timeline; zoomed, the events pane
// shows each event's hint.
func TestFindingsAndPreemptionsBecomeEvents(t *testing.T) {
	m := newTestModel()
	phase := func(i int) load {
		if i < 90 {
			return stressed(i)
		}
		return healthy(i)
	}
	ss := scrapes(300, phase)
	kinds := func() map[string][]string {
		out := map[string][]string{}
		for i := 0; i < m.d.Events.Len(); i++ {
			e := m.d.Events.Newest(i)
			out[e.Kind] = append(out[e.Kind], e.Title)
		}
		return out
	}
	feed := func(ss []model.Scrape) {
		for _, s := range ss {
			m.Update(s)
			m.Update(tickMsg(s.Time.Add(500 * time.Millisecond)))
		}
	}
	feed(ss[:90])
	k := kinds()
	if len(k[core.KindFindingOpened]) == 0 || len(k[core.KindPreemptStart]) != 1 {
		t.Fatalf("under stress: opened %q, preemptions %q", k[core.KindFindingOpened], k[core.KindPreemptStart])
	}
	if !strings.HasPrefix(k[core.KindPreemptStart][0], "preemptions started: 0.5") {
		t.Errorf("preemption event: %q", k[core.KindPreemptStart][0])
	}
	m.Update(press("5"))
	out := screen(t, m, 200, 60)
	if !strings.Contains(out, "opened: ") || strings.Count(out, "↳ ") < 2 || !strings.Contains(out, "↳ the KV cache is full") {
		t.Errorf("zoomed events pane lacks the findings or their hints:\n%s", out)
	}
	m.Update(press("esc"))
	if out := screen(t, m, 200, 60); strings.Contains(out, "↳ ") {
		t.Errorf("hints shown in the grid:\n%s", out)
	}
	feed(ss[90:])
	m.Update(tickMsg(ss[len(ss)-1].Time.Add(2 * time.Second)))
	k = kinds()
	if len(k[core.KindFindingClosed]) == 0 || len(k[core.KindPreemptStop]) != 1 {
		t.Fatalf("after recovery: closed %q, preemptions stopped %q (opened %q)", k[core.KindFindingClosed], k[core.KindPreemptStop], k[core.KindFindingOpened])
	}
	if n := len(k[core.KindPreemptStart]); n != 1 {
		t.Errorf("preemptions started %d times, want once", n)
	}
}

func TestLogRingHoldsTenThousandLines(t *testing.T) {
	m := newTestModel()
	for i := 0; i < 10500; i++ {
		m.Update(model.LogLine{Time: t0.Add(time.Duration(i) * time.Millisecond), Endpoint: testURL, Text: "INFO x"})
	}
	if n := m.d.Logs.Len(); n != 10000 {
		t.Fatalf("log ring holds %d lines, want 10000", n)
	}
}
