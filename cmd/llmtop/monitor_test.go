package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/llmtop/llmtop/sources/probe"
)

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8000":         "http://127.0.0.1:8000",
		"http://gpu1:8000/":      "http://gpu1:8000",
		" https://x.example/v1 ": "https://x.example/v1",
	} {
		if got := normalizeURL(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestIntervalFromFlagOrConfig(t *testing.T) {
	if got := pick(time.Second, 5*time.Second, false); got != 5*time.Second {
		t.Errorf("config should win over a default flag: %v", got)
	}
	if got := pick(2*time.Second, 5*time.Second, true); got != 2*time.Second {
		t.Errorf("a given flag should win: %v", got)
	}
}

// An --interval or --window the monitor cannot honour is an error that
// names the flag and the values it takes, before the screen starts: never
// a silent 250 ms for 100ms, nor a 7m window no key can return to.
func TestIntervalAndWindowFlagsOutOfRange(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	defer func() { monitorFlags.interval, monitorFlags.window = time.Second, time.Minute }()
	cases := []struct {
		interval, window time.Duration
		want             string
	}{
		{100 * time.Millisecond, time.Minute, "--interval 100ms: want 250ms to 1m"},
		{2 * time.Minute, time.Minute, "--interval 2m: want 250ms to 1m"},
		{time.Second, 7 * time.Minute, "--window 7m: want 1m, 5m or 15m (the windows [ and ] step through)"},
		{time.Second, time.Hour, "--window 1h: want 1m, 5m or 15m"},
	}
	for _, c := range cases {
		monitorFlags.interval, monitorFlags.window = c.interval, c.window
		err := runMonitor(context.Background(), monitorOptions{URLs: []string{"http://127.0.0.1:1"}})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("--interval %v --window %v: err %v, want %q", c.interval, c.window, err, c.want)
		}
	}

	// diagnose takes --interval too: refused before any watch.
	cmd, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	cmd.SetOut(&bytes.Buffer{})
	defer cmd.SetOut(nil)
	diagnoseFlags.duration = 300 * time.Millisecond
	defer func() { diagnoseFlags.duration = 30 * time.Second }()
	monitorFlags.interval, monitorFlags.window = 100*time.Millisecond, time.Minute
	err = runDiagnose(context.Background(), cmd, []string{"http://127.0.0.1:1"})
	if err == nil || !strings.HasPrefix(err.Error(), "--interval 100ms: want 250ms to 1m") {
		t.Errorf("diagnose --interval 100ms: err %v", err)
	}

	// snapshot's own --interval, the time between its two scrapes.
	err = runSnapshot(context.Background(), &bytes.Buffer{}, []string{"http://127.0.0.1:1"}, true, 100*time.Millisecond)
	if err == nil || !strings.HasPrefix(err.Error(), "--interval 100ms: want at least 250ms") {
		t.Errorf("snapshot --interval 100ms: err %v", err)
	}
}

func TestNothingFoundOffersDemo(t *testing.T) {
	saved := discoverLocal
	defer func() { discoverLocal = saved }()
	discoverLocal = func(context.Context) []probe.Found { return nil }
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out bytes.Buffer
	root.SetOut(&out)
	defer root.SetOut(nil)
	err := runRoot(root, nil)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 || ee.Error() != "" {
		t.Fatalf("err %v, want a silent exit 3", err)
	}
	if !strings.Contains(out.String(), "llmtop demo") || !strings.Contains(out.String(), "llmtop http://HOST:PORT") {
		t.Fatalf("screen:\n%s", out.String())
	}
}

func TestConfigFileErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	if _, err := loadConfig(""); err != nil {
		t.Fatalf("a missing default config is fine: %v", err)
	}
	path := filepath.Join(dir, "llmtop", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("theme = \"dark\"\n[thresholds]\nttft_p99_ms = x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig("")
	if err == nil || !strings.HasPrefix(err.Error(), path+":3: ttft_p99_ms") {
		t.Fatalf("err %v, want it to name %s:3", err, path)
	}
	if _, err := loadConfig(filepath.Join(dir, "nope.toml")); err == nil {
		t.Fatal("a missing --config file must be an error")
	}
}

// Discovery probes the ports the machine's engine processes listen on
// beside the usual ones: llama-server --port 50095 is found (it was
// reported "No LLM inference server found on this machine").
func TestDiscoveryPortsAddEngineListeners(t *testing.T) {
	link := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s), Mode: fs.ModeSymlink} }
	fsys := fstest.MapFS{
		"net/tcp": {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: 0100007F:C3AF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n" +
			"   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n")},
		"100/cmdline": {Data: []byte("/opt/llama-server\x00--port\x0050095\x00")},
		"100/stat":    {Data: []byte("100 (llama-server) S 1 100 100 0 -1 0")},
		"100/fd/3":    link("socket:[111]"),
		"200/cmdline": {Data: []byte("/opt/llama-server\x00")},
		"200/stat":    {Data: []byte("200 (llama-server) S 1 200 200 0 -1 0")},
		"200/fd/3":    link("socket:[222]"), // 8080, a usual port: listed once
	}
	got := discoveryPorts(fsys)
	if !slices.Equal(got[:len(probe.DefaultPorts)], probe.DefaultPorts) || !slices.Equal(got[len(probe.DefaultPorts):], []int{50095}) {
		t.Fatalf("ports %v, want the usual ones then 50095", got)
	}
	if !strings.Contains(nothingFound, "engine processes listen on") {
		t.Fatalf("the nothing-found text does not say where else llmtop looked:\n%s", nothingFound)
	}
}
