package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/checkpoint"
	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/logs"
	"github.com/llmtop/llmtop/tui"
)

// lockedBuf is the simulator's log: the sim writes from its HTTP handlers
// and its loop, the session reads between steps.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) take() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]byte(nil), l.b.Bytes()...)
	l.b.Reset()
	return out
}

// simSession is the simulator on a fake clock, scraped through the real
// vLLM adapter and with its log through the real log source, one step a
// simulated second: what the monitor's sources would send.
type simSession struct {
	clk  *sim.FakeClock
	s    *sim.Sim
	url  string
	cfg  engine.Config
	log  *lockedBuf
	src  *logs.Source
	sent []any
}

func newSimSession(tb testing.TB, scenario string) *simSession {
	return newSimSessionStartup(tb, scenario, time.Millisecond)
}

// newSimSessionStartup: with the engine's (re)start time (the demo's is
// demoStartup).
func newSimSessionStartup(tb testing.TB, scenario string, startup time.Duration) *simSession {
	tb.Helper()
	start := time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	ss := &simSession{clk: sim.NewFakeClock(start), log: &lockedBuf{}}
	s, err := sim.New(sim.Config{Scenario: scenario, Background: true, Seed: 7, StartupTime: startup,
		Clock: ss.clk, Log: ss.log, LogStatsInterval: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	tb.Cleanup(srv.Close)
	ss.s, ss.url = s, srv.URL
	if ss.cfg, err = engineConfig(srv.URL, time.Second); err != nil {
		tb.Fatal(err)
	}
	ss.src = logs.NewSource(logs.Options{Endpoint: srv.URL, Now: ss.clk.Now, Location: time.UTC}, func(m any) { ss.sent = append(ss.sent, m) })
	return ss
}

// step advances a second and returns its time and the messages the
// sources sent: the log's lines, events and samples (written while the
// second ran), then the scrape at its end.
func (ss *simSession) step(tb testing.TB) (time.Time, []any) {
	if err := ss.s.Advance(time.Second); err != nil {
		tb.Fatal(err)
	}
	at := ss.clk.Now()
	sc := engine.ScrapeOnce(context.Background(), ss.cfg)
	sc.Endpoint, sc.Time = ss.url, at
	for j := range sc.Samples {
		sc.Samples[j].Endpoint, sc.Samples[j].Time = ss.url, at
	}
	for _, l := range bytes.Split(ss.log.take(), []byte("\n")) {
		if len(l) > 0 {
			ss.src.Line(l)
		}
	}
	ss.src.Drain()
	msgs := append(ss.sent, sc)
	ss.sent = nil
	return at, msgs
}

// moments is what a core has concluded: open findings with when they
// opened, the history, the runs.
func moments(c *core.Monitor, url string) string {
	var open []string
	for _, f := range c.Report().Findings {
		open = append(open, fmt.Sprintf("%s/%s since %s", f.ID, f.Severity, f.Opened.UTC().Format("15:04:05")))
	}
	sort.Strings(open)
	var runs []string
	for _, r := range c.RunsOf(url) {
		end := ""
		if r.Ended != nil {
			end = r.Ended.UTC().Format("15:04:05") + " " + string(r.End)
		}
		runs = append(runs, r.Started.UTC().Format("15:04:05")+"–"+end)
	}
	e := c.Endpoint(url)
	return fmt.Sprintf("open %v | history %d | runs %v | life %s | logs %d events %d", open, len(c.History()), runs, e.Life, c.Logs().Len(), c.Events().Len())
}

const recordScenario = "healthy:15s,queue-buildup:50s,crash-restart:45s"

// The monitor (the TUI, as make run drives it) on the simulator through
// one whole `make run` cycle (the demo's timeline and start time: healthy,
// queue build-up, KV pressure, long prompts, decode-bound, crash-restart,
// broken /metrics), recorded; the recording replayed into a fresh core
// reaches the same findings, runs and lifecycle at every second.
func TestReplayGivesTheLiveFindingsAtTheSameMoments(t *testing.T) {
	secs := 0
	for _, seg := range strings.Split(sim.DemoTimeline, ",") {
		_, d, _ := strings.Cut(seg, ":")
		dd, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		secs += int(dd / time.Second)
	}
	file, live, liveSnap, url := recordMonitorSession(t, sim.DemoTimeline, demoStartup, secs, 70)
	r, err := recording.NewReader(bytes.NewReader(file), "mem")
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	mon := session.ReplayCore(h)
	var replay []string
	var recs []recording.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		recs = append(recs, rec)
		session.Feed(mon, rec)
		if _, ok := rec.Msg.(recording.Tick); ok {
			replay = append(replay, moments(mon, url))
		}
	}
	if n := r.Notes(); len(n) > 0 {
		t.Fatalf("notes: %q", n)
	}
	if len(replay) != secs {
		t.Fatalf("%d seconds replayed, want %d", len(replay), secs)
	}
	// The same through checkpoints (a seek's start): every 250 records the
	// core is written out and read back as a new one, which goes on; it
	// reaches the same moments every second.
	codec := checkpoint.New()
	mon, n := session.ReplayCore(h), 0
	var viaCheckpoints []string
	for i, rec := range recs {
		if i%250 == 0 {
			b, err := codec.Encode(nil, mon)
			if err != nil {
				t.Fatal(err)
			}
			if mon, err = checkpoint.Decode[*core.Monitor](codec, b); err != nil {
				t.Fatal(err)
			}
			n++
		}
		session.Feed(mon, rec)
		if _, ok := rec.Msg.(recording.Tick); ok {
			viaCheckpoints = append(viaCheckpoints, moments(mon, url))
		}
	}
	for i := range live {
		if live[i] != viaCheckpoints[i] {
			t.Fatalf("through %d checkpoints, second %d differs:\nlive   %s\nreplay %s", n, i+1, live[i], viaCheckpoints[i])
		}
	}
	for i := range live {
		if live[i] != replay[i] {
			t.Fatalf("second %d differs:\nlive   %s\nreplay %s", i+1, live[i], replay[i])
		}
	}
	// the cycle must have had something to agree on
	final := live[secs-1]
	all := strings.Join(live, "\n")
	for _, want := range []string{"ttft_queueing", "kv_", "itl_decode_batch", "metrics_"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s finding opened during the cycle", want)
		}
	}
	if !strings.Contains(final, " crash ") || strings.Count(final, "–") < 6 {
		t.Errorf("the cycle should restart the engine at each scenario and crash it once; last second: %s", final)
	}
	t.Logf("second 40: %s", live[39])
	t.Logf("second %d: %s", secs, final)

	// snapshot --from at second 71 is the monitor's `s` at that moment.
	at := recs[0].Time.Add(70 * time.Second)
	mon70, _, err := replayUntil(h, recording.Records(recs), at.Format(time.RFC3339Nano), nil)
	if err != nil {
		t.Fatal(err)
	}
	gotSnap, _ := json.Marshal(mon70.Snapshot())
	if !bytes.Equal(gotSnap, liveSnap) {
		t.Fatalf("snapshot --from at %s differs from the live one:\nlive   %s\nreplay %s", at, liveSnap, gotSnap)
	}
}

// recordMonitorSession runs the monitor (the TUI model, fed as make run
// feeds it) on the simulator for secs seconds while recording: the file,
// the moments each second, the `s` snapshot at second snapAt+1.
func recordMonitorSession(t *testing.T, scenario string, startup time.Duration, secs, snapAt int) ([]byte, []string, []byte, string) {
	ss := newSimSessionStartup(t, scenario, startup)
	th := config.DefaultThresholds
	cfg := config.DiagnosisConfig(th)
	var file bytes.Buffer
	w, err := recording.NewWriter(&file, recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url},
		Interval: recording.Duration(time.Second), Window: recording.Duration(time.Minute), Diagnosis: &cfg, Simulated: true})
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Options{Endpoints: []string{ss.url}, Now: ss.clk.Now(), NoColor: true, Thresholds: &th})
	var live []string
	var liveSnap []byte
	for i := 0; i < secs; i++ {
		at, msgs := ss.step(t)
		for _, msg := range msgs {
			if _, err := w.Write(at, msg); err != nil {
				t.Fatal(err)
			}
			m.Update(msg)
		}
		w.Write(at, recording.Tick{})
		live = append(live, moments(m.Data().Core, ss.url))
		if i == snapAt {
			liveSnap, _ = json.Marshal(m.Data().Core.Snapshot())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return file.Bytes(), live, liveSnap, ss.url
}

// diagnose --record, then diagnose --from: the same verdict, findings,
// closed findings and exit status.
func TestDiagnoseFromRecordingGivesTheLiveVerdict(t *testing.T) {
	ss := newSimSession(t, "healthy:10s,queue-buildup:50s")
	cfg := diagnoseConfig(config.DefaultThresholds, 60*time.Second)
	path := filepath.Join(t.TempDir(), "diag.llmrec")
	live := newWatch([]string{ss.url}, cfg)
	live.start = ss.clk.Now()
	w, err := recording.Create(path, recording.Header{Face: "diagnose", Started: live.start, Endpoints: []string{ss.url}, Diagnosis: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	live.rec = &recorder{path: path, w: w, r: recording.NewRecorder(w, recording.RecorderOptions{Now: ss.clk.Now})}
	var rep diagnosis.Report
	for i := 0; i < 60; i++ {
		_, msgs := ss.step(t)
		for _, msg := range msgs {
			if sc, ok := msg.(model.Scrape); ok {
				live.onScrape(sc)
			} else {
				live.apply(msg)
			}
		}
		rep = live.evaluate(ss.clk.Now())
	}
	if err := live.rec.close(io.Discard); err != nil {
		t.Fatal(err)
	}
	want := live.result(rep)
	if want.ExitCode == 0 || len(want.Findings) == 0 {
		t.Fatalf("the queue build-up should warn: %+v", want)
	}

	var out bytes.Buffer
	cmd, _, _ := root.Find([]string{"diagnose"})
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	defer cmd.SetOut(nil)
	defer cmd.SetErr(nil)
	diagnoseFlags.json, diagnoseFlags.from = true, path
	defer func() { diagnoseFlags.json, diagnoseFlags.from = false, "" }()
	err = runDiagnose(context.Background(), cmd, nil)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != want.ExitCode {
		t.Fatalf("exit %v, want code %d", err, want.ExitCode)
	}
	var got diagnoseResult
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.Recording != path {
		t.Fatalf("recording %q", got.Recording)
	}
	got.Recording = ""
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Fatalf("replayed verdict differs:\nlive   %s\nreplay %s", a, b)
	}
	t.Logf("verdict %s, findings %q", got.Status, findingKeys(got.Findings))
}

// A recording cut by a crash is judged up to the tear, with a note.
func TestDiagnoseFromTornRecording(t *testing.T) {
	ss := newSimSession(t, "healthy")
	var file bytes.Buffer
	w, _ := recording.NewWriter(&file, recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url}, Window: recording.Duration(time.Minute)})
	for i := 0; i < 20; i++ {
		at, msgs := ss.step(t)
		for _, m := range msgs {
			w.Write(at, m)
		}
		w.Write(at, recording.Tick{})
		w.Flush()
	}
	b := file.Bytes()
	path := filepath.Join(t.TempDir(), "torn.llmrec")
	os.WriteFile(path, b[:len(b)-40], 0o600)
	var errOut bytes.Buffer
	r, err := readStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := judgeRecording(r.Header(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	printNotes(&errOut, path, r.Notes())
	if notes := r.Notes(); len(notes) != 1 || !strings.Contains(errOut.String(), "ends mid-record") {
		t.Fatalf("notes %q stderr %q", notes, errOut.String())
	}
	if res.ExitCode != 0 || !res.Endpoints[0].Answered || res.WatchedS < 18 {
		t.Fatalf("torn healthy recording: %+v", res)
	}
}

// Neither the API key nor a URL's credentials (password, ?token=, the
// user in the header) reach a recording, whatever path carries it (a log
// line echoing the engine's arguments, an error).
func TestRecordingNeverHoldsTheAPIKey(t *testing.T) {
	const key = "sk-test-key-778899"
	engineFlags.apiKey = key
	t.Setenv("OPENAI_API_KEY", "sk-env-key-112233")
	defer func() { engineFlags.apiKey = "" }()
	path := filepath.Join(t.TempDir(), "k.llmrec")
	recordFlags.path = path
	defer func() { recordFlags.path = "" }()
	u := "http://operator:hunter2pw%40x@127.0.0.1:8000/?token=tok-in-url-5566"
	rec, err := openRecording(recordHeader("monitor", []string{u}, time.Second, time.Minute, diagnosis.DefaultConfig(), false), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := rec.tee(func(any) {})
	now := time.Now()
	send(model.LogLine{Time: now, Text: "non-default args: {'api_key': '" + key + "', 'other': 'sk-env-key-112233'}"})
	send(model.Scrape{Endpoint: u, Time: now, Err: "401 from " + u + " with Bearer " + key, ErrKind: model.ErrAuth})
	rec.input(model.BenchDone{Bench: diagnosis.Bench{URL: u, Completed: 1}, Run: model.RunBench{Completed: 1}})
	if err := rec.close(io.Discard); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if header, _, _ := bytes.Cut(plain, []byte("\n")); bytes.Contains(header, []byte("operator")) {
		t.Errorf("the header names the URL's user: %s", header)
	}
	for _, secret := range []string{key, "sk-env-key-112233", "hunter2pw", "tok-in-url-5566"} { // the URL's password is hunter2pw@x
		if bytes.Contains(plain, []byte(secret)) {
			t.Fatalf("%s reached the recording:\n%s", secret, plain)
		}
	}
	if bytes.Count(plain, []byte("REDACTED")) < 4 {
		t.Fatalf("expected the secrets replaced:\n%s", plain)
	}
}

func TestParseAt(t *testing.T) {
	first := time.Date(2026, 11, 24, 14, 0, 0, 0, time.Local)
	last := first.Add(time.Hour)
	for in, want := range map[string]time.Time{
		"":         last,
		"+10m":     first.Add(10 * time.Minute),
		"90s":      first.Add(90 * time.Second),
		"14:02:11": first.Add(2*time.Minute + 11*time.Second),
		"14:30":    first.Add(30 * time.Minute),
		first.Add(time.Minute).Format(time.RFC3339): first.Add(time.Minute),
	} {
		got, err := parseAt(in, first, last)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"16:00", "+2h", "yesterday"} {
		if _, err := parseAt(bad, first, last); err == nil {
			t.Errorf("parseAt(%q): no error", bad)
		}
	}
}

// failAfter is a disk that fills up.
type failAfter struct{ left int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		return 0, errors.New("no space left on device")
	}
	f.left -= len(p)
	return len(p), nil
}

// A recording that cannot be written says so in the monitor's sources
// line; the monitor goes on.
func TestRecordingFailureReachesTheScreen(t *testing.T) {
	w, err := recording.NewWriter(&failAfter{left: 2000}, recording.Header{Face: "monitor"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{path: "full.llmrec", w: w, r: recording.NewRecorder(w, recording.RecorderOptions{Every: 10 * time.Millisecond})}
	statuses := map[string]string{}
	rec.status(statuses)
	if e, ok := statuses["record"]; !ok || e != "" {
		t.Fatalf("statuses %v", statuses)
	}
	got := make(chan any, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go rec.watch(ctx, func(m any) { got <- m })
	for i := 0; i < 200; i++ {
		rec.record(model.LogLine{Time: time.Now(), Text: strings.Repeat("x", 100)})
	}
	select {
	case m := <-got:
		st, ok := m.(tui.SourceStatusMsg)
		if !ok || st.Name != "record" || !strings.Contains(st.Err, "no space left") || !strings.Contains(st.Err, "full.llmrec") {
			t.Fatalf("%#v", m)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the failure never reached the screen")
	}
	var out bytes.Buffer
	if err := rec.close(&out); err == nil || !strings.Contains(out.String(), "no space left") {
		t.Fatalf("close: %v %q", err, out.String())
	}
}

// snapshot --from prints the table at a moment, or says what span the
// recording covers when the moment is outside it.
func TestSnapshotFromFile(t *testing.T) {
	ss := newSimSession(t, "healthy")
	path := filepath.Join(t.TempDir(), "s.llmrec")
	w, err := recording.Create(path, recording.Header{Face: "monitor", Started: ss.clk.Now(), Endpoints: []string{ss.url}, Window: recording.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		at, msgs := ss.step(t)
		for _, m := range msgs {
			w.Write(at, m)
		}
		w.Write(at, recording.Tick{})
	}
	w.Close()
	var out, errOut bytes.Buffer
	if err := snapshotFrom(&out, &errOut, path, "+10s", false); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "from "+path+" at ") || !strings.Contains(s, ss.url) || !strings.Contains(s, "serving") {
		t.Fatalf("table:\n%s", s)
	}
	out.Reset()
	if err := snapshotFrom(&out, &errOut, path, "", true); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Time      time.Time
		Endpoints []model.EndpointJSON
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Endpoints) != 1 || !doc.Time.Equal(ss.clk.Now()) {
		t.Fatalf("%v %+v", err, doc)
	}
	err = snapshotFrom(&out, &errOut, path, "+1h", false)
	if err == nil || !strings.Contains(err.Error(), "outside the recording: the recording spans") {
		t.Fatalf("err = %v", err)
	}
}
