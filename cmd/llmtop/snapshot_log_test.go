package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/logs"
	"github.com/llmtop/llmtop/tui"
)

// The real llama-server log of 6 requests over 2 slots
// (sources/logs/testdata/loglat/SOURCE.md).
const realLlamaLog = "../../sources/logs/testdata/loglat/llama-server-2slots-6streams.log"

// llamaScrapes are two scrapes of a llama-server with both slots busy and
// 4 requests deferred; its /metrics give TPOT as a mean only.
func llamaScrapes(url string, t time.Time) []model.Scrape {
	id := model.Identity{Engine: model.LlamaCpp, Health: model.HealthUp, Models: []model.ModelInfo{{ID: "small.gguf"}}}
	var out []model.Scrape
	for i := 0; i < 2; i++ {
		at := t.Add(time.Duration(i) * 2 * time.Second)
		sm := model.NewSample(url, "small.gguf", at, model.FromScrape)
		sm.Gauges[model.Running], sm.Gauges[model.Waiting] = 2, 4
		sm.Counters[model.GenTokens] = float64(384 + 128*i)
		sm.Latencies[model.TPOT] = model.Histogram{Sum: 0.3 + 0.1*float64(i), Count: float64(384 + 128*i), Approx: "mean only"}
		out = append(out, model.Scrape{Endpoint: url, Time: at, Identity: id, Samples: []model.Sample{sm}})
	}
	return out
}

func readRealLlamaLog(t *testing.T, url string, at time.Time) []any {
	t.Helper()
	msgs, err := logs.ReadTail(realLlamaLog, 1<<20, logs.Options{Endpoint: url, Now: stepClock(at)})
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// snapshot --json --log: the log's per-request timings reach the JSON's
// latency distributions, labelled "log" with their count, beside the
// metrics' (which win where they give a value).
func TestSnapshotCarriesLogLatencies(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	t0 := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	msgs := readRealLlamaLog(t, url, t0)
	doc := buildSnapshot(t0.Add(5*time.Second), []endpointResult{{url: url, scrapes: llamaScrapes(url, t0.Add(time.Second))}}, diagnosis.DefaultConfig(), nil, msgs...)
	j := doc.SnapshotJSON
	if len(j.Endpoints) != 1 || j.Endpoints[0].Metrics == nil {
		t.Fatalf("endpoints %+v", j.Endpoints)
	}
	m := j.Endpoints[0].Metrics
	for name, d := range map[string]model.DistJSON{"prefill": m.Prefillms, "decode": m.Decodems} {
		if d.Source != model.FromLog || d.Count.V != 6 || d.Estimate || !d.P50.OK || !d.P99.OK {
			t.Errorf("%s %+v: want exact percentiles over the log's 6 requests", name, d)
		}
	}
	// TPOT: the metric's mean wins, the log adds percentiles and its count.
	if tp := m.TPOTms; tp.Source != model.FromLog || tp.Count.V != 6 || !tp.P50.OK || math.Abs(tp.Mean.V-0.1/128*1000) > 1e-9 {
		t.Errorf("tpot %+v: want the metric's mean (%.4f ms) and the log's percentiles", tp, 0.1/128*1000)
	}
	if q := m.Queuems; q.Approx != model.LittleApprox || q.P50.OK || !q.Mean.OK {
		t.Errorf("queue %+v: want the Little's law estimate, mean only", q)
	}
	// llama-server's total time has no slot wait: E2E is the estimate's sum, a mean.
	if e := m.E2Ems; e.Source != model.FromLog || e.P50.OK || !e.Mean.OK || e.Mean.V <= m.Prefillms.Mean.V+m.Decodems.Mean.V {
		t.Errorf("e2e %+v: want queue + prefill + decode means, no percentiles", e)
	}
	if m.Source != model.FromScrape {
		t.Errorf("metrics source %q: the picture stays the scrape's", m.Source)
	}
}

// The latency pane labels the log's numbers "log n=6".
func TestLatencyPaneLabelsLogNumbers(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	t0 := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	m := tui.New(tui.Options{Endpoints: []string{url}, Now: t0.Add(4 * time.Second), NoColor: true,
		Sources: map[string]string{"engine": "", "gpu": "", "logs": ""}})
	for _, msg := range readRealLlamaLog(t, url, t0) {
		m.Update(msg)
	}
	for _, sc := range llamaScrapes(url, t0.Add(time.Second)) {
		m.Update(sc)
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	screen := ansi.Strip(m.Render())
	var rows []string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "log n=6") {
			rows = append(rows, l)
		}
	}
	if len(rows) < 3 || !strings.Contains(screen, "TTFT queue") || !strings.Contains(screen, "(queue est.)") || !strings.Contains(screen, "queue share≈") {
		t.Errorf("want TTFT, TPOT and E2E rows labelled \"log n=6\" and the TTFT split marked as an estimate; screen:\n%s", screen)
	}
}

// llama.cpp's TPOT from /metrics is generation seconds ÷ tokens generated:
// its count is tokens, and snapshot says so ("256 tok", count_of
// "tokens"); with the log, the count is the log's requests.
func TestSnapshotLlamaTPOTCountsTokens(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	t0 := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	doc := buildSnapshot(t0.Add(5*time.Second), []endpointResult{{url: url, scrapes: llamaScrapes(url, t0.Add(time.Second))}}, diagnosis.DefaultConfig(), nil)
	tp := doc.Endpoints[0].Metrics.TPOTms
	if tp.CountOf != "tokens" || tp.Count.V != 128 {
		t.Errorf("tpot %+v: want count 128 of tokens", tp)
	}
	var b strings.Builder
	printSnapshot(&b, doc.SnapshotJSON)
	if !strings.Contains(b.String(), "128 tok") {
		t.Errorf("want the TPOT count as \"128 tok\":\n%s", b.String())
	}
	withLog := buildSnapshot(t0.Add(5*time.Second), []endpointResult{{url: url, scrapes: llamaScrapes(url, t0.Add(time.Second))}}, diagnosis.DefaultConfig(), nil, readRealLlamaLog(t, url, t0)...)
	if tp := withLog.Endpoints[0].Metrics.TPOTms; tp.CountOf != "" || tp.Count.V != 6 {
		t.Errorf("tpot with the log %+v: want the log's 6 requests", tp)
	}
}

// llama.cpp's prompt_tokens_seconds is tokens ÷ its slots' processing
// seconds: snapshot shows it as the engine's, over its busy time, apart
// from the rate llmtop measured over the window.
func TestSnapshotLlamaOwnRatesAreBusyTime(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	t0 := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	scrapes := llamaScrapes(url, t0.Add(time.Second))
	for i := range scrapes {
		scrapes[i].Samples[0].Gauges[model.PromptTPSGauge] = 4548.47 // testdata/engines/llamacpp-metrics.txt
	}
	doc := buildSnapshot(t0.Add(5*time.Second), []endpointResult{{url: url, scrapes: scrapes}}, diagnosis.DefaultConfig(), nil)
	m := doc.Endpoints[0].Metrics
	if m.EnginePromptTokensPerS.V != 4548.47 || m.EngineRatesOver != "busy_time" {
		t.Errorf("engine's own prompt rate %+v over %q: want 4548.47 over busy_time", m.EnginePromptTokensPerS, m.EngineRatesOver)
	}
	var b strings.Builder
	printSnapshot(&b, doc.SnapshotJSON)
	if !strings.Contains(b.String(), "engine says prompt 4548 tok/s, counting only its slots' processing time (busy time), not the wall clock") {
		t.Errorf("want the engine's own rate labelled as busy time:\n%s", b.String())
	}
}

// After Ollama's keep-alive expires its model is listed (/api/tags) but not
// loaded (/api/ps): the screen's header says "(not loaded)", and so does
// snapshot (it printed the bare name).
func TestSnapshotSaysOllamaModelNotLoaded(t *testing.T) {
	const url = "http://127.0.0.1:11434"
	t0 := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	id := model.Identity{Engine: model.Ollama, Version: "0.17.4", Health: model.HealthUp,
		Models: []model.ModelInfo{{ID: "tiny:latest", Extra: map[string]string{model.ExtraLoaded: "false"}}}}
	var scrapes []model.Scrape
	for i := 0; i < 2; i++ {
		scrapes = append(scrapes, model.Scrape{Endpoint: url, Time: t0.Add(time.Duration(i) * time.Second), Identity: id})
	}
	doc := buildSnapshot(t0.Add(2*time.Second), []endpointResult{{url: url, scrapes: scrapes}}, diagnosis.DefaultConfig(), nil)
	if e := doc.Endpoints[0]; len(e.NotLoaded) != 1 || e.NotLoaded[0] != "tiny:latest" {
		t.Errorf("not_loaded %q, want [tiny:latest]", e.NotLoaded)
	}
	var b strings.Builder
	printSnapshot(&b, doc.SnapshotJSON)
	if !strings.Contains(b.String(), "  model  tiny:latest (not loaded)\n") {
		t.Errorf("want the model marked (not loaded):\n%s", b.String())
	}
	m := tui.New(tui.Options{Endpoints: []string{url}, Now: t0, NoColor: true})
	for _, sc := range scrapes {
		m.Update(sc)
	}
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 40})
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "tiny:latest (not loaded)") {
		t.Errorf("the screen's header no longer marks it:\n%s", screen)
	}
}

// `llmtop snapshot --log llama.log URL` on a real llama-server read
// "latency over 2.0s … TTFT count 532": the file's last 532 requests, whose
// lines carry no wall-clock time (llama-server stamps time since its
// start), were all placed inside the 2 s window, and an idle server showed
// them as now. They are counted (the log's only latencies), but their
// distributions no longer claim the window, and a note says why.
func TestSnapshotLogWithoutWallClockIsNotTheWindow(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	logFlags.files = []string{realLlamaLog}
	defer func() { logFlags.files = nil }()
	msgs, untimed, err := snapshotLogs([]string{url}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if untimed != 6 {
		t.Fatalf("untimed requests %d, want the log's 6", untimed)
	}
	t0 := time.Now()
	doc := buildSnapshot(t0.Add(3*time.Second), []endpointResult{{url: url, scrapes: llamaScrapes(url, t0)}}, diagnosis.DefaultConfig(), nil, msgs...)
	markUntimed(&doc.SnapshotJSON, untimed)
	e := doc.Endpoints[0]
	if e.Metrics == nil || e.Metrics.Prefillms.Source != model.FromLog || e.Metrics.Prefillms.Count.V != 6 {
		t.Fatalf("prefill %+v: want the log's 6 requests", e.Metrics)
	}
	if w := e.Metrics.Prefillms.WindowS; w != 0 {
		t.Errorf("prefill window_s %v: the log's requests are not bounded by it", w)
	}
	if !strings.Contains(strings.Join(e.Notes, "\n"), "not bounded by the window") {
		t.Errorf("notes %q: want one saying the log's requests are not the window's", e.Notes)
	}
}

// An appended log (nohup, >>) holds two runs of llama-server: its second
// start banner, without a wall-clock time, read as a restart a second ago,
// and every snapshot said RESTARTED, run 2. Lines placed at the clock are
// history, as the monitor's backlog: the run is the scrapes' first seen.
func TestSnapshotAppendedLogIsNoRestart(t *testing.T) {
	const url = "http://127.0.0.1:8080"
	b, err := os.ReadFile(realLlamaLog)
	if err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(t.TempDir(), "llama.log")
	if err := os.WriteFile(two, append(append([]byte{}, b...), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	logFlags.files = []string{two}
	defer func() { logFlags.files = nil }()
	msgs, untimed, err := snapshotLogs([]string{url}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	doc := buildSnapshot(t0.Add(3*time.Second), []endpointResult{{url: url, scrapes: llamaScrapes(url, t0)}}, diagnosis.DefaultConfig(), nil, msgs...)
	markUntimed(&doc.SnapshotJSON, untimed)
	e := doc.Endpoints[0]
	if len(e.Runs) != 1 || e.State == model.LifeStarting {
		t.Errorf("state %s, runs %+v: want one run, the one the scrapes saw", e.State, e.Runs)
	}
	if e.Metrics == nil || e.Metrics.Prefillms.Count.V < 6 {
		t.Errorf("prefill %+v: want the log's requests still counted", e.Metrics)
	}
}
