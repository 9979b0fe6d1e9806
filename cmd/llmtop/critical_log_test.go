package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 27: every critical log line is a finding in `diagnose --json`.
// The log holds the real lines of sources/logs/testdata/real-lines.txt
// (one per row, behind docker's timestamp) and vLLM's "EngineCore failed to start." as gpustack/gpustack#2097
// shows it (a critical line without a fix of its own: log_critical).
func TestDiagnoseJSONReportsCriticalLogLines(t *testing.T) {
	f, err := os.Open("../../sources/logs/testdata/real-lines.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		id, line, _ := strings.Cut(l, ": ")
		if !seen[id] {
			seen[id] = true
			lines = append(lines, line)
		}
	}
	lines = append(lines, "ERROR 05-26 07:50:26 [core.py:396] EngineCore failed to start.")
	// As `docker logs --timestamps` hands them over: the stamp of now in
	// front (the lines' own are from when they were published, outside
	// the rules' ten-minute window).
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range lines {
		lines[i] = now + " " + lines[i]
	}
	log := filepath.Join(t.TempDir(), "vllm.log")
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logFlags.files = []string{log}
	defer func() { logFlags.files = nil }()

	res, _ := diagnoseOnce(t, 3*time.Second, "http://127.0.0.1:1")
	got := map[string]string{}
	for _, f := range res.Findings {
		got[f.ID] = f.Severity
	}
	for _, id := range []string{"cuda_device_assert", "worker_died", "startup_model_unavailable", "startup_trust_remote_code",
		"startup_unsupported_gpu", "lora_not_found", "mm_limit", "log_critical"} {
		if _, ok := got[id]; !ok {
			t.Errorf("%s missing from diagnose --json; findings %v", id, got)
		}
	}
	if got["log_critical"] != "crit" || got["cuda_device_assert"] != "crit" {
		t.Errorf("critical lines are critical findings: %v", got)
	}
}
