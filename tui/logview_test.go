package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

func TestLogRingBoundedAndSearch(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, LogLines: 50})
	for i := 0; i < 200; i++ {
		text := "INFO request done"
		if i%40 == 0 {
			text = "ERROR boom " + string(rune('a'+i/40))
		}
		m.Update(model.LogLine{Time: t0.Add(time.Duration(i) * time.Millisecond), Text: text})
	}
	if m.d.Logs.Len() != 50 || m.d.Logs.Seq != 200 {
		t.Fatalf("ring %d/%d, want 50 held of 200", m.d.Logs.Len(), m.d.Logs.Seq)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(press("l"))
	for _, k := range []string{"/", "b", "o", "o", "m", "enter"} {
		m.Update(press(k))
	}
	out := screen(t, m, 100, 30)
	if !strings.Contains(out, "ERROR boom e") || !strings.Contains(out, "150 older dropped") {
		t.Fatalf("search view:\n%s", out)
	}
	lv := m.overlays[m.overlay].o.(*logView)
	if lv.follow || m.d.Logs.At(lv.match).Text != "ERROR boom e" {
		t.Fatalf("match %d follow %v", lv.match, lv.follow)
	}
	m.Update(press("n")) // only one match held: wraps to itself
	if m.d.Logs.At(lv.match).Text != "ERROR boom e" {
		t.Fatal("n lost the match")
	}
	m.Update(press("F"))
	if !lv.follow {
		t.Fatal("F did not follow")
	}
	m.Update(press("esc")) // clears the search
	m.Update(press("esc")) // closes
	if m.overlay != -1 {
		t.Fatal("esc esc did not close the log view")
	}
}

func TestLogViewWrapAndNoMatch(t *testing.T) {
	m := newTestModel()
	long := "ERROR Traceback: " + strings.Repeat("x", 150) + " END"
	m.Update(model.LogLine{Time: t0, Text: "first"})
	m.Update(model.LogLine{Time: t0, Text: long})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	m.Update(press("l"))
	if out := screen(t, m, 80, 24); strings.Contains(out, " END") {
		t.Fatal("a long line is not cut without wrap")
	}
	m.Update(press("w"))
	out := screen(t, m, 80, 24)
	if !strings.Contains(out, " END") || !strings.Contains(out, "wrapped") || !strings.Contains(out, "first") {
		t.Fatalf("wrap:\n%s", out)
	}
	for _, k := range []string{"/", "z", "z", "z", "enter"} {
		m.Update(press(k))
	}
	if out := screen(t, m, 80, 24); !strings.Contains(out, "/zzz: no match") {
		t.Fatalf("no-match status missing:\n%s", out)
	}
}

// A batch of lines (a flooding log) lands whole: every line in the ring,
// every matched line's event in the events log, and paused it waits too.
func TestLogLinesBatch(t *testing.T) {
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true})
	ev := &model.Event{Time: t0, Kind: "torch_cuda_oom", Severity: model.SevCrit, Title: "CUDA out of memory"}
	batch := model.LogLines{{Time: t0, Text: "a"}, {Time: t0, Text: "CUDA out of memory", Event: ev}, {Time: t0, Text: "c"}}
	m.Update(batch)
	logEvents := func() (n int, newest EventEntry) {
		for i := m.d.Events.Len() - 1; i >= 0; i-- {
			if e := m.d.Events.Newest(i); e.Kind == "torch_cuda_oom" {
				n, newest = n+1, e
			}
		}
		return n, newest
	}
	n, e := logEvents()
	if m.d.Logs.Len() != 3 || m.d.Logs.At(2).Text != "c" || n != 1 {
		t.Fatalf("ring %d (last %q), log events %d", m.d.Logs.Len(), m.d.Logs.At(2).Text, n)
	}
	if e.Line != "CUDA out of memory" {
		t.Fatalf("event line %q", e.Line)
	}
	m.Update(press("p"))
	m.Update(batch)
	if m.d.Logs.Len() != 3 {
		t.Fatalf("paused: ring grew to %d", m.d.Logs.Len())
	}
	m.Update(press("p"))
	if m.d.Logs.Len() != 6 {
		t.Fatalf("resumed: ring %d, want the queued batch applied (6)", m.d.Logs.Len())
	}
}

// w wraps long lines at word boundaries, not mid-word.
func TestLogViewWrapsAtWords(t *testing.T) {
	m := newTestModel()
	line := "INFO 11-24 10:00:00 [engine.py:123] Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 98.7 tokens/s, Running: 12 reqs, Waiting: 3 reqs"
	m.Update(model.LogLine{Endpoint: testURL, Time: t0, Text: line})
	v := &logView{follow: true, match: -1, wrap: true}
	rows := v.rows(m.d, 0, 40)
	if len(rows) < 4 {
		t.Fatalf("not wrapped: %q", rows)
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(line) {
		words[w] = true
	}
	for _, r := range rows {
		if ansi.StringWidth(r) > 40 {
			t.Errorf("row wider than 40: %q", r)
		}
		for _, w := range strings.Fields(r) {
			if !words[w] {
				t.Errorf("a word was cut: %q in row %q", w, r)
			}
		}
	}
}
