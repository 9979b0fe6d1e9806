package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
	"github.com/llmtop/llmtop/tui"
)

// evil is a model id an attacker serves: a title change (OSC 0), a screen
// clear, an OSC 52 clipboard write, SGR blink on red and a C1 CSI.
const evil = "evil\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b[41;5mBLINK\u009b31mX"

// The secrets a user may put in an endpoint URL.
const (
	password = "PASSWORD42"
	token    = "TOKEN1234"
)

// serveHostile is a vLLM endpoint whose model id, version and metrics
// label carry evil. It returns the URL with credentials in it.
func serveHostile(t *testing.T) string {
	t.Helper()
	metrics := strings.ReplaceAll(string(enginetest.Fixture("vllm.txt")), enginetest.VLLMModel, evil)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{map[string]any{"id": evil, "object": "model", "owned_by": "vllm", "max_model_len": 4096}}})
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"version": "0.11.2" + evil})
	})
	mux.HandleFunc("/health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(metrics)) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "http://alice:"+password+"@", 1) + "/metrics?token=" + token
}

// assertSafe fails when raw output holds an escape, a C1 control, or a
// secret of the URL.
func assertSafe(t *testing.T, face string, raw []byte) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\u009b", "\x07", password, token} {
		if bytes.Contains(raw, []byte(bad)) {
			t.Errorf("%s: output holds %q:\n%q", face, bad, raw)
		}
	}
}

func TestHostileSnapshotFaces(t *testing.T) {
	engineFlags.engine, engineFlags.apiKey, engineFlags.metricsPath, engineFlags.timeout = "", "", "", 2*time.Second
	url := serveHostile(t)
	cmd, _, err := root.Find([]string{"snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		cmd.SetOut(&out)
		snapshotFlags.json, snapshotFlags.interval = asJSON, 300*time.Millisecond
		err := cmd.RunE(cmd, []string{url})
		cmd.SetOut(nil)
		snapshotFlags.json, snapshotFlags.interval = false, 2*time.Second
		if err != nil {
			t.Fatalf("snapshot json=%v: %v\n%s", asJSON, err, out.String())
		}
		if !strings.Contains(out.String(), "BLINK") || !strings.Contains(out.String(), "REDACTED") {
			t.Errorf("json=%v: the model id (cleaned) or the redacted URL is missing:\n%s", asJSON, out.String())
		}
		assertSafe(t, "snapshot", out.Bytes())
		if asJSON && !json.Valid(out.Bytes()) {
			t.Errorf("snapshot --json is no longer JSON:\n%s", out.String())
		}
	}
}

func TestHostileDiagnoseFaces(t *testing.T) {
	engineFlags.engine, engineFlags.apiKey, engineFlags.metricsPath, engineFlags.timeout = "", "", "", 2*time.Second
	url := serveHostile(t)
	cmd, _, err := root.Find([]string{"diagnose"})
	if err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		cmd.SetOut(&out)
		diagnoseFlags.duration, diagnoseFlags.json = 600*time.Millisecond, asJSON
		err := runDiagnose(context.Background(), cmd, []string{url})
		cmd.SetOut(nil)
		diagnoseFlags.duration, diagnoseFlags.json = 30*time.Second, false
		var ee *exitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "REDACTED") {
			t.Errorf("json=%v: the endpoint's URL is not shown redacted:\n%s", asJSON, out.String())
		}
		assertSafe(t, "diagnose", out.Bytes())
	}
}

// The monitor: a scrape of the hostile endpoint, drawn without colour,
// holds no escape sequence but the frame's own bold (ESC[1m … ESC[m), and
// the header shows the URL redacted.
func TestHostileTUIView(t *testing.T) {
	url := serveHostile(t)
	id := model.RedactURL(normalizeURL(url))
	sc := engine.ScrapeOnce(context.Background(), engine.Config{URL: url})
	if !sc.OK() {
		t.Fatalf("scrape: %s", sc.Err)
	}
	m := tui.New(tui.Options{Endpoints: []string{id}, NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m.Update(withEndpoint(sc, id))
	frame := m.Render()
	if !strings.Contains(frame, "BLINK") {
		t.Errorf("the model id is not on screen:\n%s", frame)
	}
	own := strings.NewReplacer("\x1b[1m", "", "\x1b[m", "")
	assertSafe(t, "TUI", []byte(own.Replace(frame)))
}

// A config line with escapes is reported without them; a config that is
// not a config (a device that never ends) is refused after 1 MiB.
func TestConfigErrorsAreSafeAndBounded(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte("[\x1b]0;pwned\x07\x1b[2J]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := readConfig(p)
	if err == nil || !strings.Contains(err.Error(), "unknown section") {
		t.Fatalf("err = %v", err)
	}
	assertSafe(t, "config error", []byte(err.Error()))

	_, err = readConfig("/dev/zero") // a device: refused before any read
	if err == nil || !strings.Contains(err.Error(), "not a regular file (a device)") {
		t.Fatalf("--config /dev/zero: %v", err)
	}
}

// What llmtop saves is private and carries no URL secret.
func TestSavedFilesArePrivateAndRedacted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "result.json")
	if err := writeJSONFile(p, map[string]string{"url": "http://alice:" + password + "@h:8000/v1?api_key=" + token + "&x=1"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("saved result is %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(p)
	assertSafe(t, "saved result", b)
	if !json.Valid(b) {
		t.Errorf("saved result is not JSON: %s", b)
	}
	t.Chdir(dir)
	name, err := saveSnapshot([]byte(`{"url": "http://bob:` + password + `@h/?token=` + token + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(name)
	b, _ = os.ReadFile(name)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("snapshot file is %v, want 0600", st.Mode().Perm())
	}
	assertSafe(t, "saved snapshot", b)
}
