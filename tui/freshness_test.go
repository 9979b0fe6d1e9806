package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// shifted moves scrapes by dt (a restarted engine's fresh counters).
func shifted(ss []model.Scrape, dt time.Duration) []model.Scrape {
	for i := range ss {
		ss[i].Time = ss[i].Time.Add(dt)
		for j := range ss[i].Samples {
			ss[i].Samples[j].Time = ss[i].Samples[j].Time.Add(dt)
			ss[i].Samples[j].Started = ss[i].Time.Add(-time.Duration(i) * time.Second)
		}
	}
	return ss
}

func failed(at time.Time, kind model.ScrapeErrKind, err string) model.Scrape {
	return model.Scrape{Endpoint: testURL, Time: at, Err: err, ErrKind: kind}
}

// restartedThenBroken: 30 s of traffic, a restart, 10 s more, then /metrics
// answers 404 for 20 s.
func restartedThenBroken(t *testing.T, kind model.ScrapeErrKind, err string) (*Model, time.Time) {
	t.Helper()
	m := newTestModel()
	for _, s := range scrapes(30, healthy) {
		m.Update(s)
	}
	again := shifted(scrapes(10, healthy), 31*time.Second)
	for _, s := range again {
		m.Update(s)
	}
	lastOK := again[len(again)-1].Time
	for i := 1; i <= 20; i++ {
		m.Update(failed(lastOK.Add(time.Duration(i)*time.Second), kind, err))
	}
	return m, lastOK
}

func TestStaleValuesAreMarkedAndBadgeIsNotRestarted(t *testing.T) {
	m, lastOK := restartedThenBroken(t, model.ErrNotFound, testURL+"/metrics: 404 Not Found")
	out := screen(t, m, 200, 60)
	head := strings.SplitN(out, "\n", 2)[0]
	if !strings.Contains(head, " DEGRADED ") || strings.Contains(head, "RESTARTED") {
		t.Errorf("badge: want DEGRADED above RESTARTED:\n%s", head)
	}
	if !strings.Contains(head, "up --") {
		t.Errorf("uptime counts on while /metrics fails:\n%s", head)
	}
	want := "as of " + lastOK.Format("15:04:05") + " (20s ago) · /metrics unreadable (404)"
	if n := strings.Count(out, want); n < 3 {
		t.Errorf("%q on %d panes, want latency, throughput and scheduler:\n%s", want, n, out)
	}
	// The windows end at the last good scrape and cover the new run only
	// (9 s between its first and last scrape), and say so.
	if !strings.Contains(out, "rates over 9s to "+lastOK.Format("15:04:05")+" · restarted ") {
		t.Errorf("the rate window claims to be live, or spans the restart:\n%s", out)
	}
	if !strings.Contains(out, "bucket estimates over 9s to "+lastOK.Format("15:04:05")+" · restarted ") {
		t.Errorf("the latency window claims to be live, or spans the restart:\n%s", out)
	}
	// Before three intervals pass the values are live: no marker.
	fresh := newTestModel()
	for _, s := range scrapes(30, healthy) {
		fresh.Update(s)
	}
	fresh.Update(failed(t0.Add(30*time.Second), model.ErrNotFound, "404"))
	if out := screen(t, fresh, 200, 60); strings.Contains(out, "as of ") {
		t.Errorf("values 1 s old marked stale:\n%s", out)
	}
}

func TestStaleFallsBackToTheLogsStatsLines(t *testing.T) {
	m, lastOK := restartedThenBroken(t, model.ErrNotFound, testURL+"/metrics: 404 Not Found")
	sm := model.NewSample(testURL, "", lastOK.Add(19*time.Second), model.FromLog)
	sm.Gauges[model.Running], sm.Gauges[model.Waiting], sm.Gauges[model.KVUsage] = 77, 5, 0.63
	sm.Gauges[model.PromptTPSGauge], sm.Gauges[model.GenTPSGauge] = 1234, 567
	m.Update(sm)
	out := screen(t, m, 200, 60)
	if n := strings.Count(out, "from log · stats line "+sm.Time.Format("15:04:05")+" · /metrics unreadable (404)"); n < 3 {
		t.Errorf("log values not labelled on the engine panes (%d):\n%s", n, out)
	}
	for _, want := range []string{"   77", "63%", "1234 tok/s", "567 tok/s", "TTFT", "-- /metrics unreadable (404)"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not exposed by vllm") {
		t.Errorf("latency said not exposed while /metrics is unreadable:\n%s", out)
	}
	// A log line older than the last good scrape is no fallback.
	m2, lastOK2 := restartedThenBroken(t, model.ErrServer, "500 Internal Server Error")
	old := model.NewSample(testURL, "", lastOK2.Add(-5*time.Second), model.FromLog)
	old.Gauges[model.Running] = 77
	m2.Update(old)
	if out := screen(t, m2, 200, 60); strings.Contains(out, "from log") || !strings.Contains(out, "/metrics unreadable (500)") {
		t.Errorf("an old log line replaced the scrape, or the 500 is not named:\n%s", out)
	}
}

func TestUptimeWhileDown(t *testing.T) {
	m, lastOK := restartedThenBroken(t, model.ErrRefused, "connect: connection refused")
	head := strings.SplitN(screen(t, m, 200, 60), "\n", 2)[0]
	if !strings.Contains(head, " DOWN ") || !strings.Contains(head, "up --, down 20s") {
		t.Errorf("want DOWN and up --, down 20s (last good %s):\n%s", lastOK.Format("15:04:05"), head)
	}
}

// Pause freezes the header's clock with the data: "down 20s" stays 20 s
// however long the pause lasts, and counts on after it.
func TestPauseFreezesTheDownClock(t *testing.T) {
	m, lastOK := restartedThenBroken(t, model.ErrRefused, "connect: connection refused")
	head := func() string { return strings.SplitN(screen(t, m, 200, 60), "\n", 2)[0] }
	m.Update(press("p"))
	m.Update(tickMsg(lastOK.Add(20*time.Second + 45*time.Second)))
	if h := head(); !strings.Contains(h, "PAUSED") || !strings.Contains(h, "up --, down 20s") {
		t.Errorf("paused 45 s: want down 20s still:\n%s", h)
	}
	m.Update(press("p"))
	m.Update(tickMsg(lastOK.Add(20*time.Second + 46*time.Second)))
	if h := head(); !strings.Contains(h, "up --, down 1m06s") {
		t.Errorf("resumed: want down 1m06s:\n%s", h)
	}
}

// A serving endpoint's uptime stands still while paused too.
func TestPauseFreezesUptime(t *testing.T) {
	m := newTestModel()
	ss := scrapes(30, healthy)
	for _, s := range ss {
		m.Update(s)
	}
	head := func() string { return strings.SplitN(screen(t, m, 200, 60), "\n", 2)[0] }
	before := head()
	i := strings.Index(before, "up ")
	if i < 0 {
		t.Fatalf("no uptime:\n%s", before)
	}
	up := strings.Fields(before[i:])[1]
	m.Update(press("p"))
	m.Update(tickMsg(ss[len(ss)-1].Time.Add(10 * time.Minute)))
	if h := head(); !strings.Contains(h, "up "+up) {
		t.Errorf("paused 10 min: want up %s still:\n%s", up, h)
	}
}

// QA #24: the diagnosis panel's signal table labels stale values with
// their time and withholds "ok".
func TestSignalTableWithholdsVerdictsWhenStale(t *testing.T) {
	m := newTestModel()
	ss := scrapes(30, healthy)
	for _, s := range ss {
		m.Update(s)
	}
	last := ss[len(ss)-1].Time
	if out := paneView(m, 60, 20); !strings.Contains(out, "ok") {
		t.Fatalf("live table has no verdicts:\n%s", out)
	}
	for i := 1; i <= 6; i++ {
		m.Update(failed(last.Add(time.Duration(i)*time.Second), model.ErrRefused, "connection refused"))
	}
	out := paneView(m, 60, 20)
	if !strings.Contains(out, "as of "+last.Format("15:04:05")) {
		t.Errorf("stale table not labelled with its time:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "TTFT p99") || strings.HasPrefix(l, "KV cache") || strings.HasPrefix(l, "waiting") {
			if strings.HasSuffix(strings.TrimSpace(l), "ok") {
				t.Errorf("stale row judged: %q", l)
			}
		}
	}
}
