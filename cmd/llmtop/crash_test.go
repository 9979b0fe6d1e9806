package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A crash of the Go runtime (out of memory, a bug) must not exit 2, which
// diagnose documents as "critical findings": with crashExit it ends by
// SIGABRT (134 in a shell), and writes no core file.
func TestACrashDoesNotExitAsAVerdict(t *testing.T) {
	if os.Getenv("LLMTOP_TEST_CRASH") == "1" {
		crashExit()
		var m map[string]int
		m["x"]++ // a nil map write: a runtime panic nothing recovers
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestACrashDoesNotExitAsAVerdict$")
	cmd.Env = append(os.Environ(), "LLMTOP_TEST_CRASH=1")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("no crash: %v\n%s", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGABRT || ee.ExitCode() == 2 {
		t.Errorf("exit %d (signal %v), want SIGABRT\n%.300s", ee.ExitCode(), ws.Signal(), out)
	}
	if m, _ := filepath.Glob(filepath.Join(cmd.Dir, "core*")); len(m) > 0 {
		t.Errorf("a core file: %v", m)
	}
}

// --config naming a FIFO (or a directory) is a usage error at once; it
// used to block start-up forever.
func TestConfigMustBeARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cfg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readConfig(fifo); done <- err }()
	select {
	case err := <-done:
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("%v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("--config FIFO blocks")
	}
}

// Output that cannot be written (/dev/full) is an error on every face
// (exit 70, the reason on stderr); text output used to exit 0 with nothing
// written.
func TestAWriteErrorIsReported(t *testing.T) {
	if args := os.Getenv("LLMTOP_TEST_MAIN"); args != "" {
		os.Args = append([]string{"llmtop"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	for _, args := range []string{"rules", "snapshot http://127.0.0.1:1", "snapshot --json http://127.0.0.1:1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAWriteErrorIsReported$")
		cmd.Env = append(os.Environ(), "LLMTOP_TEST_MAIN="+args)
		cmd.Stdout = full
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitFailure || !strings.Contains(stderr.String(), "writing the output") {
			t.Errorf("%s > /dev/full: %v\n%s", args, err, stderr.String())
		}
	}
}
