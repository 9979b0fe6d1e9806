package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// fakeRunner stands in for cmd's runner: it reports progress, then either
// returns at once or waits for cancellation (block).
type fakeRunner struct {
	block bool
	mu    sync.Mutex
	specs []BenchSpec
	saved int
}

func (f *fakeRunner) Run(ctx context.Context, spec BenchSpec, progress func(BenchProgress)) BenchOutcome {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	progress(BenchProgress{Fraction: 0.5, Sent: 20, Completed: 12, InFlight: 8, MedianTTFT: model.Some(42), P99TTFT: model.Some(90)})
	r := &report.Result{Info: report.Info{ModelID: "Qwen/Qwen3-8B", MaxConcurrency: spec.Streams,
		StartTime: t0.Add(60 * time.Second), EndTime: t0.Add(90 * time.Second)}}
	r.Completed, r.Duration, r.OutputThroughput = 480, 30, 2048
	r.MedianTTFT, r.P99TTFT, r.MeanTTFT = model.Some(61.5), model.Some(180), model.Some(70)
	r.ErrorsByKind = map[string]int{}
	if f.block {
		<-ctx.Done()
		r.Cancelled, r.ErrorsByKind["cancelled"] = 16, 16
		r.Notes = []string{"cancelled after 3.0s: partial results"}
	}
	return BenchOutcome{Result: r}
}

func (f *fakeRunner) Saved(n int) []BenchOutcome {
	r := &report.Result{Info: report.Info{StartTime: t0.Add(-time.Hour)}}
	r.Completed, r.OutputThroughput = 99, 777
	return []BenchOutcome{{Result: r, Saved: "/state/old.json"}}
}

func (f *fakeRunner) Save(o BenchOutcome) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved++
	return "/state/llmtop/bench/20261122-050000-" + o.Spec.Preset + ".json", nil
}

// drive runs cmd and feeds its messages back until the overlay is idle.
func drive(t *testing.T, o *benchOverlay, d *Data, cmd tea.Cmd) {
	t.Helper()
	for i := 0; cmd != nil && i < 100; i++ {
		msg := cmd()
		cmd = o.Receive(msg, d)
	}
}

func TestBenchQuickPreset(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	f := &fakeRunner{}
	o := NewBenchOverlay(f).(*benchOverlay)
	drive(t, o, d, o.Open(d))
	if o.url != testURL {
		t.Fatalf("target %q", o.url)
	}
	if v := ansi.Strip(o.View(d, 100, 30)); !strings.Contains(v, "Target: "+testURL) || !strings.Contains(v, "quick") {
		t.Fatalf("form:\n%s", v)
	}
	handled, cmd := o.HandleKey(press("enter"), d)
	if !handled || cmd == nil || o.stage != benchRunning {
		t.Fatalf("enter on a loopback target starts at once: handled=%v stage=%v", handled, o.stage)
	}
	msg := cmd()
	next := o.Receive(msg, d)
	if p, ok := msg.(benchProgressMsg); ok {
		if v := ansi.Strip(o.View(d, 100, 30)); !strings.Contains(v, "in flight 8") || !strings.Contains(v, "42ms") {
			t.Errorf("progress %+v:\n%s", p, v)
		}
	}
	drive(t, o, d, next)
	if o.stage != benchDone || len(f.specs) != 1 || f.specs[0].Streams != 16 || f.specs[0].Duration != 30*time.Second {
		t.Fatalf("stage %v specs %+v", o.stage, f.specs)
	}
	if o.server == nil || !o.server.TTFTms.P50.OK || o.outcome.Result.Server != o.server {
		t.Fatal("the server's own view over the run's window must sit next to the client's")
	}
	v := ansi.Strip(o.View(d, 120, 40))
	for _, want := range []string{"TTFT", "61.5ms", "180ms", "server p50", "saved: /state/llmtop/bench/", "Recent runs", "quick 16×30s", "saved 0×", "777 tok/s"} {
		if !strings.Contains(v, want) {
			t.Errorf("result view lacks %q:\n%s", want, v)
		}
	}
	if f.saved != 1 {
		t.Errorf("saved %d times", f.saved)
	}
	if o.outcome.Result.Simulated {
		t.Error("a run against a real endpoint is marked simulated")
	}
	// enter goes back to the form for another run.
	o.HandleKey(press("enter"), d)
	if o.stage != benchForm {
		t.Errorf("stage %v", o.stage)
	}
}

// Recent runs against other targets (another endpoint, an earlier
// session) are listed apart, each with its redacted URL: their numbers
// never pass for this endpoint's.
func TestBenchHistoryNamesOtherTargets(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	o := NewBenchOverlay(&fakeRunner{}).(*benchOverlay)
	o.Open(d)
	run := func(base string, tps float64, at time.Time) BenchOutcome {
		return BenchOutcome{Spec: BenchSpec{Preset: "quick"}, Result: &report.Result{
			Info:    report.Info{BaseURL: base, StartTime: at, MaxConcurrency: 16},
			Metrics: report.Metrics{Completed: 10, OutputThroughput: tps, Duration: 30}}}
	}
	o.Receive(benchHistoryMsg{
		run(model.RedactURL("http://user:pw@10.0.0.9:8000"), 111, t0.Add(-3*time.Hour)),
		run(testURL, 222, t0.Add(-2*time.Hour)),
	}, d)
	v := ansi.Strip(o.View(d, 200, 40))
	mine, others, ok := strings.Cut(v, "Other targets")
	if !ok || !strings.Contains(mine, "Recent runs on "+testURL) {
		t.Fatalf("want this endpoint's runs, then Other targets:\n%s", v)
	}
	if !strings.Contains(mine, "222 tok/s") || strings.Contains(mine, "111 tok/s") {
		t.Errorf("this endpoint's runs hold another target's:\n%s", v)
	}
	if !strings.Contains(others, "http://"+model.Redacted+"@10.0.0.9:8000  quick") || !strings.Contains(others, "111 tok/s") || strings.Contains(v, "pw@") {
		t.Errorf("the other target's run lacks its redacted URL:\n%s", v)
	}
}

func TestBenchCancelAndConfirm(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	f := &fakeRunner{block: true}
	o := NewBenchOverlay(f).(*benchOverlay)
	o.Open(d)
	o.url = "http://10.0.0.7:8000"
	if _, cmd := o.HandleKey(press("enter"), d); cmd != nil || o.stage != benchConfirm {
		t.Fatalf("a non-loopback host needs confirmation: stage %v", o.stage)
	}
	if v := ansi.Strip(o.View(d, 100, 20)); !strings.Contains(v, "not this machine") {
		t.Errorf("confirm view:\n%s", v)
	}
	o.HandleKey(press("n"), d)
	if o.stage != benchForm {
		t.Fatalf("n goes back: %v", o.stage)
	}
	// Custom: streams down to 8.
	o.HandleKey(press("right"), d)
	o.HandleKey(press("right"), d)
	o.HandleKey(press("down"), d)
	o.HandleKey(press("left"), d)
	o.HandleKey(press("enter"), d)
	_, cmd := o.HandleKey(press("y"), d)
	if cmd == nil || o.stage != benchRunning {
		t.Fatalf("y starts: %v", o.stage)
	}
	first := cmd()
	next := o.Receive(first, d)
	// b while running cancels instead of closing the overlay.
	if handled, _ := o.HandleKey(press("b"), d); !handled {
		t.Fatal("b while running must cancel, not close")
	}
	drive(t, o, d, next)
	if o.stage != benchDone || f.specs[0].Preset != "custom" || f.specs[0].Streams != 8 {
		t.Fatalf("stage %v spec %+v", o.stage, f.specs)
	}
	if v := ansi.Strip(o.View(d, 120, 40)); !strings.Contains(v, "cancelled 16") || !strings.Contains(v, "partial results") {
		t.Errorf("cancelled result:\n%s", v)
	}
	// esc after the run is the root's: it closes the overlay.
	if handled, _ := o.HandleKey(press("esc"), d); handled {
		t.Error("esc on a finished run should close the overlay")
	}
}

// The confirmation follows model.IsLoopback: a host whose name merely
// starts with "127." is somebody else's machine.
func TestBenchConfirmFollowsIsLoopback(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	for _, c := range []struct {
		url     string
		confirm bool
	}{
		{"http://127.evil.com:8000", true},
		{"http://localhost.evil.com:8000", true},
		{"http://0.0.0.0:8000", true},
		{"http://[::1]:8000", false},
		{"http://127.0.0.2:8000", false},
		{"http://localhost:8000", false},
	} {
		o := NewBenchOverlay(&fakeRunner{}).(*benchOverlay)
		o.Open(d)
		o.url = c.url
		_, cmd := o.HandleKey(press("enter"), d)
		asked := o.stage == benchConfirm
		if asked != c.confirm || (cmd != nil) == c.confirm {
			t.Errorf("%s: confirm asked %v (stage %v), want %v", c.url, asked, o.stage, c.confirm)
		}
		warned := strings.Contains(ansi.Strip(o.View(d, 100, 30)), "not this machine")
		if warned != c.confirm {
			t.Errorf("%s: warning shown %v", c.url, warned)
		}
		if cmd != nil {
			drive(t, o, d, cmd)
		}
	}
}

func TestFinishLine(t *testing.T) {
	if got := finishLine(map[string]int{"stop": 1, "length": 3}, 4); got != "finish length 75% · stop 25%" {
		t.Errorf("%q", got)
	}
	if got := finishLine(nil, 4); got != "" {
		t.Errorf("no reasons: %q", got)
	}
}

// In the demo (everything SIMULATED), a run's result and its saved JSON
// say so.
func TestBenchInTheDemoIsMarkedSimulated(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	d.Simulated = true
	o := NewBenchOverlay(&fakeRunner{}).(*benchOverlay)
	drive(t, o, d, o.Open(d))
	_, cmd := o.HandleKey(press("enter"), d)
	drive(t, o, d, cmd)
	if o.stage != benchDone || !o.outcome.Result.Simulated || !strings.Contains(ansi.Strip(o.View(d, 160, 40)), "SIMULATED") {
		t.Fatalf("stage %v simulated %v:\n%s", o.stage, o.outcome.Result != nil && o.outcome.Result.Simulated, ansi.Strip(o.View(d, 160, 40)))
	}
}

// At 80 and 120 columns a run against another target does not fit one
// line: its latency numbers go on the next line whole instead of being cut
// ("TTFT p50 199ms p99 23…").
func TestBenchHistoryKeepsNumbersWhole(t *testing.T) {
	m := scenario(healthy, 1, false)
	d := m.d
	o := NewBenchOverlay(&fakeRunner{}).(*benchOverlay)
	o.Open(d)
	o.Receive(benchHistoryMsg{BenchOutcome{Spec: BenchSpec{Preset: "quick"}, Result: &report.Result{
		Info: report.Info{BaseURL: "http://127.0.0.1:37933", StartTime: t0.Add(-time.Hour), MaxConcurrency: 16},
		Metrics: report.Metrics{Completed: 272, OutputThroughput: 1160, Duration: 30,
			MedianTTFT: model.Some(199), P99TTFT: model.Some(235.4), MedianTPOT: model.Some(12.5)}}}}, d)
	for _, w := range []int{80, 118} {
		v := ansi.Strip(o.View(d, w, 40))
		if strings.Contains(v, "…") || !strings.Contains(v, "p99 235ms") || !strings.Contains(v, "TPOT p50 12.5ms") {
			t.Errorf("width %d: a run's numbers are cut:\n%s", w, v)
		}
	}
}

// The result's server columns read "--" for llama-server's TTFT and TPOT
// with no word why: a line under them says, rows with one reason together.
func TestBenchServerColumnsSayWhyMissing(t *testing.T) {
	m := scenario(healthy, 1, false)
	if got := serverEngine(m.d, testURL); got != "vLLM" {
		t.Errorf("engine at the target %q", got)
	}
	r := &report.Result{ServerEngine: "llama.cpp"}
	srv := &model.MetricsJSON{TPOTms: model.DistJSON{Mean: model.Some(23.1), Count: model.Some(512)},
		ITLms: model.DistJSON{P50: model.Some(20), Count: model.Some(9)}}
	v := ansi.Strip(strings.Join(sideBySide(m.d, r, srv), "\n"))
	for _, want := range []string{"server TTFT, E2EL, queue: not reported by llama.cpp", "server TPOT: llama.cpp reports a mean only: 23.1ms"} {
		if !strings.Contains(v, want) {
			t.Errorf("lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "server ITL") {
		t.Errorf("ITL has its percentiles:\n%s", v)
	}
}

// A quick run on a real Ollama said "server: its /metrics over the run
// (5m49s window, all its traffic)" for a 33 s run: Ollama has no /metrics
// (its log is read) and the window was not the run's.
func TestBenchServerLineSaysItsSourceAndSpan(t *testing.T) {
	m := scenario(healthy, 1, false)
	r := &report.Result{ServerEngine: "Ollama"}
	r.Duration = 33
	srv := &model.MetricsJSON{Source: model.FromLog, WindowS: 349}
	v := ansi.Strip(strings.Join(sideBySide(m.d, r, srv), "\n"))
	if strings.Contains(v, "/metrics over the run") || !strings.Contains(v, "its log from before the run") || !strings.Contains(v, "5m49s window") {
		t.Fatalf("server line:\n%s", v)
	}
	srv = &model.MetricsJSON{Source: model.FromScrape, WindowS: 35}
	v = ansi.Strip(strings.Join(sideBySide(m.d, r, srv), "\n"))
	if !strings.Contains(v, "server: its /metrics over the run (35s window") {
		t.Fatalf("server line:\n%s", v)
	}
}

// A llama-server with its log attached: the server's TPOT percentiles are
// the log's per-request timings while its gauges are /metrics'. The view
// said "its /metrics" for all of them; each row now says its own source.
func TestBenchServerNumbersSayTheirOwnSource(t *testing.T) {
	m := scenario(healthy, 1, false)
	r := &report.Result{ServerEngine: "llama.cpp"}
	r.Duration = 30
	srv := &model.MetricsJSON{Source: model.FromScrape, WindowS: 31,
		TPOTms: model.DistJSON{P50: model.Some(12), P99: model.Some(20), Mean: model.Some(13), Count: model.Some(6), Source: model.FromLog},
		ITLms:  model.DistJSON{P50: model.Some(11), P99: model.Some(19), Count: model.Some(600), Estimate: true}}
	lines := sideBySide(m.d, r, srv)
	rowOf := func(name string) string {
		for _, l := range lines {
			if l = ansi.Strip(l); strings.HasPrefix(l, name+" ") {
				return l
			}
		}
		return ""
	}
	if row := rowOf("TPOT"); !strings.HasSuffix(row, "  log") {
		t.Errorf("TPOT row %q: want its numbers marked as the log's", row)
	}
	if row := rowOf("ITL"); !strings.HasSuffix(row, "  /metrics") {
		t.Errorf("ITL row %q: want its numbers marked as /metrics'", row)
	}
	if row := rowOf("TTFT"); strings.HasSuffix(row, "log") || strings.HasSuffix(row, "/metrics") {
		t.Errorf("TTFT row %q: no server number, no source", row)
	}
}
