package exporter

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/diagnosis"
)

// llmtop_check_missing's label was each not-checked line itself: a fleet's
// endpoints, a path, an error from /proc, what a probed server answered —
// a series per line (unbounded) and outside text in a label. Its reason is
// now one of a fixed few codes, the value how many checks share it; the
// lines stay in llmtop diagnose and the snapshot.
func TestCheckMissingReasonIsACode(t *testing.T) {
	c := New("test")
	c.Publish(&View{Time: t0, NotChecked: []string{
		"engine log (attach it with --log, --log-cmd, --docker, --journal or --kube)",
		"http://10.0.0.1:8000: KV-cache usage (vLLM does not expose it)",
		"http://10.0.0.2:8000: TTFT (SGLang does not expose it)",
		"http://10.0.0.1:8000: behaviour probe: determinism: the server answered 500 \x1b[2J<html>pwned",
		"http://10.0.0.1:8000: host CPU: not checked, because /proc/stat is not readable: permission denied",
		"something no rule writes yet",
	}})
	body, fams := gather(t, c)
	codes := map[string]bool{}
	for _, r := range diagnosis.MissingReasons {
		codes[r.Code] = true
	}
	got := map[string]float64{}
	for _, m := range fams["llmtop_check_missing"].GetMetric() {
		if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "reason" {
			t.Fatalf("labels %v", m.GetLabel())
		}
		got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	want := map[string]float64{"no_log": 1, "not_exposed": 2, "probe": 1, "no_host": 1, "other": 1}
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for code, n := range want {
		if got[code] != n {
			t.Errorf("reason %q: %v, want %v (all: %v)", code, got[code], n, got)
		}
	}
	for code := range got {
		if !codes[code] {
			t.Errorf("reason %q is not a code", code)
		}
	}
	for _, outside := range []string{"pwned", "10.0.0.1", "/proc/stat", "permission denied"} {
		if strings.Contains(body, outside) {
			t.Errorf("%q reached /metrics", outside)
		}
	}
	// Prometheus's own checker, where installed (make deps installs it)
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
