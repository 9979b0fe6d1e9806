package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sim"
)

// Issue 14 item 9: with /metrics unreachable no rule that reads the
// engine's metrics is listed as checked ("TTFT p99 within the SLO", "KV
// cache below the high-water mark") and none says the engine does not
// expose what it could not read; the missing input is named instead, in the
// JSON and in the text.
func TestDiagnoseNoMetricsChecksNothingMetricBased(t *testing.T) {
	broken := serveSim(t, sim.MetricsBroken)
	time.Sleep(200 * time.Millisecond)
	metricWords := []string{"TTFT", "KV", "ITL", "preempt", "waiting", "prefix", "throughput", "finish"}
	for _, url := range []string{broken, "http://127.0.0.1:1"} {
		res, _ := diagnoseOnce(t, 2500*time.Millisecond, url)
		for _, c := range res.Checked {
			for _, w := range metricWords {
				if strings.Contains(c, w) {
					t.Errorf("%s: checked %q without metrics", url, c)
				}
			}
		}
		missing := strings.Join(res.Missing, "\n")
		if !strings.Contains(missing, "engine metrics") {
			t.Errorf("%s: missing %v", url, res.Missing)
		}
		if strings.Contains(missing, "does not expose") {
			t.Errorf("%s: blames the engine for what was not read: %v", url, res.Missing)
		}
		text := diagnoseText(t, 2500*time.Millisecond, url)
		if strings.Contains(text, "Checked:") {
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "Checked:") {
					for _, w := range metricWords {
						if strings.Contains(l, w) {
							t.Errorf("%s: text %q", url, l)
						}
					}
				}
			}
		}
		if !strings.Contains(text, "engine metrics") {
			t.Errorf("%s: text does not name the missing metrics:\n%s", url, text)
		}
	}
}

// diagnoseText runs `llmtop diagnose --duration d` and returns its text.
func diagnoseText(t *testing.T, d time.Duration, args ...string) string {
	t.Helper()
	cmd, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	defer cmd.SetOut(nil)
	diagnoseFlags.duration = d
	defer func() { diagnoseFlags.duration = 30 * time.Second }()
	_ = runDiagnose(context.Background(), cmd, args) // the exit code is another test's
	return out.String()
}

// diagnose --log takes the monitor's checks: a directory or a device is a
// usage error before anything starts, and a log that never existed during
// the watch is not "engine log free of OOM…" (it exited 0 listing it as
// checked).
func TestDiagnoseLogPathsAreCheckedAsTheMonitorChecksThem(t *testing.T) {
	defer func() { logFlags.files = nil }()
	for _, bad := range []string{t.TempDir(), "/dev/zero"} {
		logFlags.files = []string{bad}
		cmd, _, _ := root.Find([]string{"diagnose"})
		err := runDiagnose(context.Background(), cmd, []string{"http://127.0.0.1:1"})
		if !isUsage(err) || !strings.Contains(err.Error(), "not a log file") {
			t.Errorf("--log %s: %v", bad, err)
		}
	}
	logFlags.files = []string{t.TempDir() + "/not-yet.log"}
	res, _ := diagnoseOnce(t, 1500*time.Millisecond, "http://127.0.0.1:1")
	for _, c := range res.Checked {
		if strings.HasPrefix(c, "engine log") {
			t.Errorf("checked %q from a log that does not exist", c)
		}
	}
	if !strings.Contains(strings.Join(res.Missing, "\n"), "does not exist") {
		t.Errorf("missing %v", res.Missing)
	}
}

// diagnose --prometheus against a server that never answers names
// Prometheus in its report, even when the watch ends before the first
// refresh gives up (it said only "every endpoint answers").
func TestDiagnoseNamesAHangingPrometheus(t *testing.T) {
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then a client that hangs up ends the request
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	defer hung.Close()
	promFlags.url = hung.URL
	defer func() { promFlags.url = "" }()
	res, code := diagnoseOnce(t, 1500*time.Millisecond)
	if code != 3 || !strings.Contains(strings.Join(res.Missing, "\n"), "Prometheus did not answer") {
		t.Errorf("exit %d missing %v", code, res.Missing)
	}
}
