package config

import (
	"strings"
	"testing"
	"time"
)

// A headless face (diagnose, export, snapshot, rules) reads the same file
// without the screen: its thresholds reach the rules, and [keys] and
// [panes] are kept as written, unchecked (the screen checks them).
func TestParseWithoutTheScreen(t *testing.T) {
	c, err := Parse("c.toml", []byte("window = \"5m\"\n[thresholds]\nttft_p99_ms = 500\nkv_crit_pct = 90\n[keys]\nquit = \"Q\"\n[panes]\nhide = [\"anything\"]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Window != 5*time.Minute || c.Thresholds.TTFTp99 != 500*time.Millisecond || len(c.Rebinds) != 1 || c.Panes.Hide[0] != "anything" {
		t.Errorf("%+v", c)
	}
	d := DiagnosisConfig(c.Thresholds)
	if d.SLOTTFT != 500*time.Millisecond || d.KVHigh != 0.9 {
		t.Errorf("the rules got SLO %s, KV high %g", d.SLOTTFT, d.KVHigh)
	}
	if _, err := Parse("c.toml", []byte("window = \"7m\"\n"), nil); err == nil || !strings.Contains(err.Error(), "c.toml:1") {
		t.Errorf("a window not among %v: %v", Windows, err)
	}
}

// The router rules' thresholds (issue 26) reach the rules from the file;
// unset, the diagnosis defaults stay.
func TestRouterThresholdsFromTheFile(t *testing.T) {
	c, err := Parse("c.toml", []byte("[thresholds]\nroute_dead_qps = 0.5\nroute_router_window_s = 60\nroute_router_queue_min = 8\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := DiagnosisConfig(c.Thresholds)
	if d.RouteDeadQPS != 0.5 || d.RouteRouterWindow != time.Minute || d.RouteRouterQueueMin != 8 {
		t.Errorf("dead qps %g, window %s, queue min %g", d.RouteDeadQPS, d.RouteRouterWindow, d.RouteRouterQueueMin)
	}
	c, err = Parse("c.toml", []byte("[thresholds]\nttft_p99_ms = 500\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiagnosisConfig(c.Thresholds); d.RouteRouterQueueMin != 4 || d.RouteRouterWindow != 30*time.Second {
		t.Errorf("defaults lost: %+v", d)
	}
}
