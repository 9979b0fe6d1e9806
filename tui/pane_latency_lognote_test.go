package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

// Ollama after its first request: E2E "p50 611ms … log n=1" over a
// note that said "≈ estimates from histogram buckets; no requests finished
// in the 1m window yet". One request from the log spans no time.
func TestWindowNoteOfOneLoggedRequest(t *testing.T) {
	m := newTestModel()
	one := model.Dist{Exposed: true, Source: model.FromLog, Count: 1, P50: model.Some(0.611), P99: model.Some(0.611), Mean: model.Some(0.611)}
	note := windowNote(one, m.d)
	if note != "from the engine's log · 1 request" {
		t.Errorf("note %q", note)
	}
	more := one
	more.Count, more.Window = 92, 40*time.Second
	if note := windowNote(more, m.d); !strings.HasPrefix(note, "from the engine's log over 40s") || !strings.HasSuffix(note, "· 92 requests") {
		t.Errorf("note %q", note)
	}
	// a mean-only engine with nothing finished is not said to have buckets
	if note := windowNote(model.Dist{Exposed: true}, m.d); strings.Contains(note, "bucket") || !strings.Contains(note, "no requests finished") {
		t.Errorf("note %q", note)
	}
}

// At 120 columns after a restart the note read "≈ bucket estimates over
// 48s · run 51s (window 1m) · 613 r…": the count goes before the words
// that say what the window is.
func TestWindowNoteDropsTheCountBeforeCuttingAWord(t *testing.T) {
	m := newTestModel()
	dist := model.Dist{Exposed: true, Estimate: true, Count: 613, Window: 48 * time.Second}
	full := windowNoteFit(dist, m.d, 200)
	if full != "≈ bucket estimates over 48s · 613 requests" {
		t.Fatalf("note %q", full)
	}
	if got := windowNoteFit(dist, m.d, 36); got != "≈ bucket estimates over 48s" {
		t.Errorf("note in 36 cells %q", got)
	}
}

// The rows timed from the engine's log ended "from lo…" at 120 columns
// (the pane's 58 cells): the label fits there and at 80, with its count
// where there is room.
func TestLogLatencyRowsFitTheirLabel(t *testing.T) {
	m := newTestModel()
	for i := 0; i < 40; i++ {
		sm := model.NewSample(testURL, "Qwen/Qwen3-8B", t0.Add(time.Duration(i)*time.Second), model.FromLog)
		sm.Gauges[model.Running] = 4
		for k := 0; k < 30; k++ {
			f := float64(k) / 30
			sm.Observations = append(sm.Observations, model.Observation{Time: sm.Time,
				Values: map[model.Latency]float64{model.TTFT: 0.2 + f, model.TPOT: 0.0123 + f/100, model.E2E: 4.5 + 3*f}})
		}
		m.Update(sm)
	}
	for _, sz := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		v := screen(t, m, sz.w, sz.h)
		var rows []string
		for _, l := range strings.Split(v, "\n") {
			for _, r := range []string{"TTFT ", "TPOT ", "E2E  "} {
				if (strings.Contains(l, "┃"+r) || strings.Contains(l, "│"+r)) && strings.Contains(l, "p50") {
					rows = append(rows, l)
				}
			}
		}
		if len(rows) < 3 {
			t.Fatalf("%dx%d: latency rows %q in\n%s", sz.w, sz.h, rows, v)
		}
		for _, r := range rows {
			if strings.Contains(r, "…") || !strings.Contains(r, "log") {
				t.Errorf("%dx%d: %q", sz.w, sz.h, r)
			}
			if sz.w == 80 && !strings.Contains(r, "log n=1200") {
				t.Errorf("80 columns have room for the count: %q", r)
			}
		}
	}
}

// llama-server with --log: the pane showed "TTFT mean 344ms (approx.)"
// (Little's law queue + the log's prefill) and under it a "TTFT mean per
// refresh" chart reading "-- (no data in the window yet)" that never
// filled: that TTFT has no per-refresh series. No chart claims otherwise.
func TestComposedTTFTHasNoEmptyChart(t *testing.T) {
	m := newTestModel()
	for i := 0; i < 40; i++ {
		sm := model.NewSample(testURL, "", t0.Add(time.Duration(i)*time.Second), model.FromLog)
		sm.Gauges[model.Running] = 2
		sm.Gauges[model.Waiting] = 1
		for k := 0; k < 5; k++ {
			sm.Observations = append(sm.Observations, model.Observation{Time: sm.Time,
				Values: map[model.Latency]float64{model.Prefill: 0.06, model.Decode: 0.25, model.TPOT: 0.004}})
		}
		m.Update(sm)
	}
	st := m.d.State()
	if ttft := st.Latency[model.TTFT]; ttft.Source != model.FromLog || ttft.Approx == "" {
		t.Fatalf("the test needs a composed TTFT: %+v", ttft)
	}
	got := latencyPane{}.View(m.Data(), 60, 30)
	if strings.Contains(got, "no data in the window yet") || strings.Contains(got, "TTFT mean per refresh") {
		t.Fatalf("an empty TTFT chart under a TTFT shown:\n%s", got)
	}
	if !strings.Contains(got, "TTFT") || !strings.Contains(got, "approx") {
		t.Fatalf("the TTFT row is gone:\n%s", got)
	}
}

// llama-server without a log at 120x40: the note under the latencies read
// "means over 3s · approx: aggregate: generation seconds ÷…" with the pane
// half empty. With rows to spare the note is whole, wrapped.
func TestLatencyNoteWrapsWhenThereIsRoom(t *testing.T) {
	m := newTestModel()
	for i := 0; i < 10; i++ {
		sm := model.NewSample(testURL, "", t0.Add(time.Duration(i)*time.Second), model.FromScrape)
		sm.Counters[model.GenTokens] = float64(100 * i)
		sm.Latencies[model.TPOT] = model.Histogram{Sum: 0.0037 * float64(100*i), Count: float64(100 * i),
			Approx: "aggregate: generation seconds ÷ tokens generated (llama.cpp has no per-request histogram)"}
		m.Update(model.Scrape{Endpoint: testURL, Time: sm.Time, Identity: model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp}, Samples: []model.Sample{sm}})
	}
	got := ansi.Strip(latencyPane{}.View(m.Data(), 58, 20))
	if !strings.Contains(strings.Join(strings.Fields(got), " "), "(llama.cpp has no per-request histogram)") {
		t.Fatalf("the note is cut:\n%s", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 58 {
			t.Errorf("wider than the pane: %q", l)
		}
	}
}
