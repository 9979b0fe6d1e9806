package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if got := clampInterval(10 * time.Millisecond); got != 250*time.Millisecond {
		t.Errorf("clamp low: %v", got)
	}
	if got := clampInterval(time.Hour); got != time.Minute {
		t.Errorf("clamp high: %v", got)
	}
}

func TestNothingFoundOffersDemo(t *testing.T) {
	saved := discoverLocal
	defer func() { discoverLocal = saved }()
	discoverLocal = func(context.Context) []string { return nil }
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
