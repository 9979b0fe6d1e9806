package core

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

const url = "http://127.0.0.1:8000"

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// engine is a fake vLLM's cumulative state: every tick adds rps requests
// of prompt tokens and decode steps, so counters only grow until restart.
type engine struct {
	version string
	started time.Time
	reqs    float64
	prompt  float64
	kv      float64
	waiting float64
	itl     float64 // seconds per token this run
	ttft    model.Histogram
	itlH    model.Histogram
}

func newEngine(version string, started time.Time, itl float64) *engine {
	b := []float64{0.01, 0.025, 0.05, 0.1, 0.5, 1, 5}
	mk := func() model.Histogram {
		h := model.Histogram{}
		for _, ub := range b {
			h.Buckets = append(h.Buckets, model.Bucket{UpperBound: ub})
		}
		return h
	}
	return &engine{version: version, started: started, itl: itl, ttft: mk(), itlH: mk()}
}

func observe(h *model.Histogram, v, n float64) {
	for i := range h.Buckets {
		if v <= h.Buckets[i].UpperBound {
			h.Buckets[i].Count += n
		}
	}
	h.Sum += v * n
	h.Count += n
}

// scrape advances the engine one second at rps requests/s with prompts of
// promptLen tokens and returns what a scrape at t would read.
func (e *engine) scrape(t time.Time, rps, promptLen float64) model.Scrape {
	e.reqs += rps
	e.prompt += rps * promptLen
	observe(&e.ttft, 0.08, rps)
	observe(&e.itlH, e.itl, rps*100)
	sm := model.NewSample(url, "m", t, model.FromScrape)
	sm.Started = e.started
	sm.Gauges[model.Running] = rps * 2
	sm.Gauges[model.Waiting] = e.waiting
	sm.Gauges[model.KVUsage] = e.kv
	sm.Counters[model.Requests] = e.reqs
	sm.Counters[model.PromptTokens] = e.prompt
	sm.Counters[model.GenTokens] = e.reqs * 100
	sm.Latencies[model.TTFT] = cloneHist(e.ttft)
	sm.Latencies[model.ITL] = cloneHist(e.itlH)
	return model.Scrape{Endpoint: url, Time: t, Samples: []model.Sample{sm},
		Identity: model.Identity{Engine: model.VLLM, Version: e.version, Health: model.HealthUp,
			Models: []model.ModelInfo{{ID: "m", MaxContext: 8192}}}}
}

func cloneHist(h model.Histogram) model.Histogram {
	h.Buckets = append([]model.Bucket(nil), h.Buckets...)
	return h
}

func down(t time.Time) model.Scrape {
	return model.Scrape{Endpoint: url, Time: t, Err: "dial tcp 127.0.0.1:8000: connect: connection refused", ErrKind: model.ErrRefused,
		Identity: model.Identity{Health: model.HealthDown}}
}

// logEvent is what the log source sends for a catalogue line: its phase in
// Fields, no endpoint (one endpoint is watched).
func logEvent(t time.Time, kind, phase string, sev model.Severity, line string, fields map[string]string) model.LogLine {
	f := map[string]string{"hint": "x"}
	for k, v := range fields {
		f[k] = v
	}
	if phase != "" {
		f["phase"] = phase
	}
	cat := model.CategoryLifecycle
	if sev == model.SevCrit {
		cat = "availability"
	}
	return model.LogLine{Time: t, Text: line, Event: &model.Event{Time: t, Source: "log", Kind: kind, Severity: sev, Category: cat, Title: line, Line: line, Fields: f}}
}

func banner(t time.Time, args string) []model.LogLine {
	return []model.LogLine{
		logEvent(t, "vllm_start", model.PhaseStart, model.SevInfo, "vLLM API server version 0.11.0", map[string]string{"version": "0.11.0"}),
		logEvent(t, "vllm_args", model.PhaseConfig, model.SevInfo, "non-default args: "+args, map[string]string{"args": args}),
	}
}

func shutdown(t time.Time) []model.LogLine {
	return []model.LogLine{
		logEvent(t, "uvicorn_shutting_down", model.PhaseStopping, model.SevInfo, "INFO:     Shutting down", nil),
		logEvent(t, "uvicorn_shutdown_complete", model.PhaseStopped, model.SevInfo, "INFO:     Application shutdown complete.", nil),
	}
}

func newMonitor() *Monitor {
	return New(Options{Endpoints: []string{url}, Window: time.Minute})
}

// run feeds secs seconds of scrapes from e starting at from, ticking the
// monitor each second.
func run(m *Monitor, e *engine, from, secs float64, rps, promptLen float64) {
	for s := from; s < from+secs; s++ {
		m.Apply(e.scrape(at(s), rps, promptLen))
		m.Tick(at(s))
	}
}

func findingIDs(fs []diagnosis.Finding) string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.ID+":"+f.Severity.String())
	}
	return strings.Join(ids, " ")
}

// A load test: run, clean shutdown, restart with another flag. Two runs, a
// planned end with the config diff, windows from the new run only, the old
// run's findings closed at the boundary and no crash loop.
func TestPlannedRestartStartsARunAndClosesTheOldFindings(t *testing.T) {
	m := newMonitor()
	for _, l := range banner(at(-30), "{'model': 'm', 'max_num_seqs': 256}") {
		m.Apply(l)
	}
	e := newEngine("0.11.0", at(-30), 0.09) // ITL 90 ms: over the 50 ms SLO
	e.kv = 0.5
	run(m, e, 0, 90, 10, 383)
	if rep := m.Report(); !strings.Contains(findingIDs(rep.Findings), "itl_") {
		t.Fatalf("first run: want the ITL finding open, got %s", findingIDs(rep.Findings))
	}
	for _, l := range shutdown(at(90)) {
		m.Apply(l)
	}
	// A scrape the old process answered as its shutdown line was read (the
	// log's time has whole seconds) is not a new run.
	m.Apply(e.scrape(at(90.5), 10, 383))
	for s := 91.0; s < 95; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	ep := m.Endpoint(url)
	if ep.Life != model.LifeStopped || ep.Current().End != model.RunPlanned {
		t.Fatalf("after a clean shutdown: life %s, run end %s", ep.Life, ep.Current().End)
	}
	if rep := m.Report(); strings.Contains(findingIDs(rep.Findings), "endpoint_down:crit") {
		t.Fatalf("a clean shutdown is not a crash: %s", findingIDs(rep.Findings))
	}
	for _, l := range banner(at(95), "{'model': 'm', 'max_num_seqs': 128}") {
		m.Apply(l)
	}
	if ep.Life != model.LifeStarting {
		t.Fatalf("after the banner: life %s, want starting", ep.Life)
	}
	for s := 96.0; s < 100; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	if rep := m.Report(); strings.Contains(findingIDs(rep.Findings), "endpoint_down") {
		t.Fatalf("a start under way is not 'endpoint down': %s", findingIDs(rep.Findings))
	}
	e2 := newEngine("0.11.0", at(95), 0.02) // the new flag fixed ITL
	run(m, e2, 100, 30, 10, 63)

	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || runs[1].End != model.RunRunning {
		t.Fatalf("runs = %+v", runs)
	}
	if d := model.ConfigDiff(runs[0].Config, runs[1].Config); len(d) != 1 || d[0] != "args.max_num_seqs 256 → 128" {
		t.Fatalf("config diff = %v", d)
	}
	rep := m.Report()
	ids := findingIDs(rep.Findings)
	if strings.Contains(ids, "itl_") || strings.Contains(ids, "crit") {
		t.Fatalf("the old run's ITL finding (or a crash) sits in the new run: %s", ids)
	}
	if !strings.Contains(ids, "restarts:info") {
		t.Fatalf("want an info planned restart, got %s", ids)
	}
	closedAtBoundary := false
	for _, f := range m.History() {
		if strings.HasPrefix(f.ID, "itl_") && f.Closed.Equal(at(90)) { // the run ended with its shutdown line
			closedAtBoundary = true
		}
	}
	if !closedAtBoundary {
		t.Errorf("the ITL finding did not close at the run boundary: %+v", m.History())
	}
	// The window is the new run's: 29 s, prompts of 63 tokens, not 383.
	st := m.Store().State(model.Key{Endpoint: url, Model: "m"}, time.Minute)
	if st.RateWindow != 29*time.Second || st.PromptTPS.V/st.RequestsPS.V != 63 {
		t.Fatalf("window %v, prompt/request %v: want the new run's 29 s and 63", st.RateWindow, st.PromptTPS.V/st.RequestsPS.V)
	}
	if w := st.Latency[model.ITL].Window; w != 29*time.Second {
		t.Fatalf("ITL window %v spans the restart", w)
	}
	if s := runs[0].Summary; !s.ITLp99ms.OK || s.ITLp99ms.V < 50 || !s.RequestsPS.OK {
		t.Errorf("first run's summary = %+v", s)
	}
}

// A crash ends the run as a crash with its line; the crash finding stays
// open into the next run, and three crashes in 15 minutes are a crash loop
// while planned restarts never are.
func TestCrashesMakeALoopAndPlannedRestartsDoNot(t *testing.T) {
	m := newMonitor()
	var s float64
	for i := 0; i < 3; i++ {
		for _, l := range banner(at(s), "{'max_num_seqs': 64}") {
			m.Apply(l)
		}
		run(m, newEngine("0.11.0", at(s), 0.02), s+1, 20, 5, 100)
		crash := logEvent(at(s+21), "cuda_illegal_access", model.PhaseCrash, model.SevCrit, "torch.AcceleratorError: CUDA error: an illegal memory access was encountered", nil)
		m.Apply(crash)
		for x := s + 22; x < s+30; x++ {
			m.Apply(down(at(x)))
			m.Tick(at(x))
		}
		s += 30
	}
	if ep := m.Endpoint(url); ep.Life != model.LifeCrashed || ep.Current().End != model.RunCrash ||
		!strings.Contains(ep.Current().EndLine, "illegal memory access") {
		t.Fatalf("life %s, run %+v", ep.Life, ep.Current())
	}
	for _, l := range banner(at(s), "{'max_num_seqs': 64}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(s), 0.02), s+1, 10, 5, 100)
	ids := findingIDs(m.Report().Findings)
	if !strings.Contains(ids, "restarts:crit") {
		t.Fatalf("three crashes: want the crash loop, got %s", ids)
	}
	// The crash that ended the last run explains the restart: its finding
	// stays open into the new run.
	if id := diagnosis.FindingForEvent("cuda_illegal_access"); id == "" || !strings.Contains(ids, id+":") {
		t.Fatalf("the crash line's finding %q is not open in the new run: %s", id, ids)
	}

	// The same number of planned restarts: no crash loop.
	p := newMonitor()
	s = 0
	for i := 0; i < 4; i++ {
		for _, l := range banner(at(s), "{'max_num_seqs': "+string(rune('1'+i))+"}") {
			p.Apply(l)
		}
		run(p, newEngine("0.11.0", at(s), 0.02), s+1, 20, 5, 100)
		for _, l := range shutdown(at(s + 21)) {
			p.Apply(l)
		}
		s += 25
	}
	if ids := findingIDs(p.Report().Findings); strings.Contains(ids, "restarts:crit") || strings.Contains(ids, "crit") {
		t.Fatalf("planned restarts made a critical finding: %s", ids)
	}
	for _, r := range p.RunsOf(url)[:3] {
		if r.End != model.RunPlanned {
			t.Fatalf("run %d ended %s, want planned", r.N, r.End)
		}
	}
}

// killedWithLog is a vLLM run with its log attached that served for 20 s
// and then stopped answering at 21 s, its log silent, until 39 s.
func killedWithLog() *Monitor {
	m := newMonitor()
	for _, l := range banner(at(0), "{}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(0), 0.02), 1, 20, 5, 100)
	for s := 21.0; s < 40; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	return m
}

// SIGKILL with the log attached: the endpoint stops answering and the log
// says nothing of a shutdown. That is a crash (killed), not "unknown".
func TestKilledWithLogAttachedIsACrash(t *testing.T) {
	m := killedWithLog()
	r := *m.Endpoint(url).Current()
	if r.End != model.RunCrash || !r.EndGuessed || !strings.Contains(r.EndReason, "no shutdown line") || !r.Ended.Equal(at(21)) {
		t.Fatalf("run = %+v", r)
	}
	// An engine draining its requests logs its shutdown late: the log's
	// word replaces the guess.
	for _, l := range shutdown(at(41)) {
		m.Apply(l)
	}
	if r := m.Endpoint(url).Current(); r.End != model.RunPlanned || r.EndGuessed {
		t.Fatalf("after a late shutdown line: %+v", r)
	}
}

// Without a log a counter reset is a restart whose cause is unknown: a new
// run, never called a crash.
func TestCounterResetWithoutLogIsAnUnknownRestart(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 0, 30, 5, 100)
	for s := 30.0; s < 33; s++ {
		m.Apply(down(at(s)))
	}
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 33, 20, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunUnknown || !runs[0].Ended.Equal(at(30)) || !strings.Contains(runs[1].StartedBy, "counters went back") {
		t.Fatalf("runs = %+v", runs)
	}
	if ids := findingIDs(m.Report().Findings); !strings.Contains(ids, "restarts:warn") {
		t.Fatalf("want a warning restart of unknown cause, got %s", ids)
	}
}

// The version changing between two scrapes with nothing else seen (a
// rolling redeploy behind one address) is a new, planned run.
func TestVersionChangeIsANewRun(t *testing.T) {
	m := newMonitor()
	e := newEngine("0.11.0", time.Time{}, 0.02)
	run(m, e, 0, 10, 5, 100)
	e.version = "0.11.1"
	run(m, e, 10, 10, 5, 100)
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || runs[1].Version != "0.11.1" || runs[1].StartedBy != "version changed" {
		t.Fatalf("runs = %+v", runs)
	}
}

// The ledger: a benchmark is filed under the run it measured, and the
// snapshot document carries state and runs.
func TestSnapshotCarriesStateRunsAndFindings(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", at(0), 0.09), 0, 60, 10, 100)
	m.SetBench(&diagnosis.Bench{URL: url, Start: at(30), End: at(50), Completed: 10}, model.RunBench{Time: at(30), Completed: 10})
	m.Evaluate(at(60))
	doc := m.Snapshot()
	if len(doc.Endpoints) != 1 {
		t.Fatalf("endpoints = %+v", doc.Endpoints)
	}
	ej := doc.Endpoints[0]
	if ej.State != model.LifeServing || len(ej.Runs) != 1 || len(ej.Runs[0].Benches) != 1 {
		t.Fatalf("state %s, runs %+v", ej.State, ej.Runs)
	}
	if findingIDs(doc.Findings) != findingIDs(m.Report().Findings) || len(doc.Findings) == 0 {
		t.Fatalf("document findings %s, report %s", findingIDs(doc.Findings), findingIDs(m.Report().Findings))
	}
}

func TestParseArgs(t *testing.T) {
	got := parseArgs("{'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 32, 'served_model_name': ['a', 'b'], 'host': 'http://x:1'}")
	want := map[string]string{"model": "Qwen/Qwen3-8B", "max_num_seqs": "32", "served_model_name": "['a', 'b']", "host": "http://x:1"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	got = parseArgs("map[CUDA_VISIBLE_DEVICES: OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_NUM_PARALLEL:4 OLLAMA_ORIGINS:[http://localhost https://x]]")
	if got["OLLAMA_NUM_PARALLEL"] != "4" || got["OLLAMA_HOST"] != "http://127.0.0.1:11434" || got["OLLAMA_ORIGINS"] != "[http://localhost https://x]" || len(got) != 4 {
		t.Errorf("ollama map = %v", got)
	}
}

// Ollama logs nothing at INFO on SIGTERM: a silent log is not "killed"
// there. Restarted with another OLLAMA_NUM_PARALLEL, the end is planned
// (a configuration change), with the diff.
func TestOllamaRestartWithNewSettingIsPlanned(t *testing.T) {
	m := newMonitor()
	cfgLine := func(at time.Time, n string) model.LogLine {
		args := "map[OLLAMA_HOST:http://127.0.0.1:11434 OLLAMA_NUM_PARALLEL:" + n + "]"
		return logEvent(at, "ollama_server_config", model.PhaseStart, model.SevInfo, `msg="server config" env="`+args+`"`, map[string]string{"args": args})
	}
	ollama := func(e *engine, t time.Time) model.Scrape {
		sc := e.scrape(t, 1, 10)
		sc.Identity.Engine = model.Ollama
		return sc
	}
	m.Apply(cfgLine(at(0), "1"))
	e := newEngine("0.17.4", time.Time{}, 0.02)
	for s := 1.0; s < 20; s++ {
		m.Apply(ollama(e, at(s)))
		m.Tick(at(s))
	}
	for s := 20.0; s < 30; s++ {
		m.Apply(down(at(s)))
		m.Tick(at(s))
	}
	if r := m.Endpoint(url).Current(); r.Ended != nil {
		t.Fatalf("a silent Ollama log is not a kill: %+v", r)
	}
	m.Apply(cfgLine(at(30), "2"))
	e2 := newEngine("0.17.4", time.Time{}, 0.02)
	for s := 31.0; s < 40; s++ {
		m.Apply(ollama(e2, at(s)))
		m.Tick(at(s))
	}
	runs := m.RunsOf(url)
	if len(runs) != 2 || runs[0].End != model.RunPlanned || !strings.Contains(runs[0].EndReason, "args.OLLAMA_NUM_PARALLEL 1 → 2") {
		t.Fatalf("runs = %+v", runs)
	}
}

// /proc's word on a local endpoint: while it serves, the process's command
// line joins its run's configuration; while nothing answers, it explains
// the silence.
func TestPortOwnerFeedsConfigAndLifecycle(t *testing.T) {
	m := newMonitor()
	run(m, newEngine("0.11.0", time.Time{}, 0.02), 0, 5, 5, 100)
	m.Apply(model.PortOwner{Endpoint: url, Port: 8000, PID: 4711, Cmdline: "vllm serve m --max-num-seqs 64"})
	if got := m.Endpoint(url).Current().Config["cmdline"]; got != "vllm serve m --max-num-seqs 64" {
		t.Fatalf("cmdline config %q", got)
	}
	m.Apply(down(at(6)))
	m.Apply(model.PortOwner{Endpoint: url, Port: 8000, Engines: []model.Process{{PID: 4711, Cmdline: "vllm serve m", Age: 38 * time.Second}}})
	if e := m.Endpoint(url); e.Port == nil || !strings.Contains(e.LifeDetail, "nothing listens on 8000; engine process alive: PID 4711 vllm serve m, up 38s") {
		t.Fatalf("life %s %q", e.Life, e.LifeDetail)
	}
}

// Findings that close at the same refresh are told in one order — by
// endpoint, then finding — whatever order the map of open findings
// iterates in: a replay (from the start or from a checkpoint) rebuilds
// the timeline the monitor showed, event for event.
func TestFindingsClosingTogetherAreToldInOneOrder(t *testing.T) {
	now := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	var open []diagnosis.Finding
	for _, ep := range []string{"http://b:8000", "http://a:8000"} {
		for _, id := range []string{"queue_backlog", "ttft_slo", "kv_pressure", "gpu_lost", "restarts"} {
			open = append(open, diagnosis.Finding{ID: id, Endpoint: ep, Title: id + " on " + ep, Opened: now})
		}
	}
	for try := range 20 {
		m := New(Options{Window: time.Minute})
		m.transitions(diagnosis.Report{Findings: open}, now)
		before := m.Events().Len()
		m.transitions(diagnosis.Report{}, now.Add(time.Second))
		var got []string
		for i := m.Events().Len() - before - 1; i >= 0; i-- {
			e := m.Events().Newest(i)
			got = append(got, e.Endpoint+" "+e.Title)
		}
		want := []string{
			"http://a:8000 closed: gpu_lost on http://a:8000", "http://a:8000 closed: kv_pressure on http://a:8000",
			"http://a:8000 closed: queue_backlog on http://a:8000", "http://a:8000 closed: restarts on http://a:8000",
			"http://a:8000 closed: ttft_slo on http://a:8000",
			"http://b:8000 closed: gpu_lost on http://b:8000", "http://b:8000 closed: kv_pressure on http://b:8000",
			"http://b:8000 closed: queue_backlog on http://b:8000", "http://b:8000 closed: restarts on http://b:8000",
			"http://b:8000 closed: ttft_slo on http://b:8000",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("try %d: the closing events:\n%s\nwant\n%s", try, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// outage serves 20 s of a vLLM run with its log, then fails every scrape
// with fail until 60 s, running the rules each second; it reports whether
// the endpoint-down finding opened, and fails the test if it closed again
// while nothing answered.
func outage(t *testing.T, fail func(time.Time) model.Scrape) (*Monitor, bool) {
	t.Helper()
	m := newMonitor()
	for _, l := range banner(at(0), "{}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(0), 0.02), 1, 20, 5, 100)
	opened := false
	for s := 21.0; s < 60; s++ {
		m.Apply(fail(at(s)))
		m.Tick(at(s))
		m.Evaluate(at(s))
		open := strings.Contains(findingIDs(m.Report().Findings), "endpoint_down")
		if opened && !open {
			t.Fatalf("at %vs the endpoint-down finding closed while the engine still does not answer: %s", s, findingIDs(m.Report().Findings))
		}
		opened = opened || open
	}
	return m, opened
}

// A SIGSTOPped (hung) engine: the kernel still accepts connections on its
// port, so every scrape times out. That is a hang, not a kill: the run
// does not end as a crash, the lifecycle is not "crashed", and the
// endpoint-down finding, once open, stays open (ending the run closed
// it, and it formed again 10 s later).
func TestHungEngineIsNotACrash(t *testing.T) {
	m, opened := outage(t, func(t time.Time) model.Scrape {
		return model.Scrape{Endpoint: url, Time: t, Err: "http://127.0.0.1:8000/metrics: no answer within 2s", ErrKind: model.ErrTimeout,
			Identity: model.Identity{Health: model.HealthDown}}
	})
	ep := m.Endpoint(url)
	if r := ep.Current(); r.Ended != nil || ep.Life == model.LifeCrashed {
		t.Fatalf("a hung engine was called %s (%s), run %+v", ep.Life, ep.LifeDetail, *r)
	}
	if !opened {
		t.Fatalf("no endpoint-down finding for a hung engine: %s", findingIDs(m.Report().Findings))
	}
}

// Killed (refused, log silent): the run ends as a crash 15 s in, and the
// endpoint-down finding opened before stays open through that end.
func TestKilledEngineKeepsItsDownFinding(t *testing.T) {
	m, opened := outage(t, down)
	if ep := m.Endpoint(url); ep.Life != model.LifeCrashed || !opened {
		t.Fatalf("life %s, down finding opened %v", ep.Life, opened)
	}
}

// After a clean shutdown line ("llama-server exiting cleanly", uvicorn's
// "Application shutdown complete") the scrapes that find nothing are that
// stop: an info event, not a red "✗ scrape failed".
func TestScrapeFailingAfterACleanShutdownIsNotAnAlarm(t *testing.T) {
	m := newMonitor()
	for _, l := range banner(at(0), "{}") {
		m.Apply(l)
	}
	run(m, newEngine("0.11.0", at(0), 0.02), 1, 20, 5, 100)
	for _, l := range shutdown(at(21)) {
		m.Apply(l)
	}
	before := m.Events().Len()
	m.Apply(down(at(22)))
	for i := m.Events().Len() - before - 1; i >= 0; i-- {
		ev := m.Events().Newest(i).Event
		if ev.Kind == "scrape_failed" && ev.Severity != model.SevInfo {
			t.Fatalf("after a clean shutdown: %v %q", ev.Severity, ev.Title)
		}
	}
	if ep := m.Endpoint(url); ep.Life != model.LifeStopped {
		t.Fatalf("life %s", ep.Life)
	}
}
