package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Issue 31 item 23: a usage error exited 1, the status diagnose and probe
// use for "warnings". A flag llmtop does not take, a flag value it cannot
// parse or rejects, and a wrong number of arguments exit 64 (EX_USAGE),
// with the reason on stderr.
func TestUsageErrorExits64(t *testing.T) {
	for _, args := range [][]string{
		{"diagnose", "--no-such-flag"},
		{"snapshot", "--interval", "soon"},
		{"snapshot", "--interval", "10ms", "http://127.0.0.1:9"},
		{"probe"},
		{"bench", "http://127.0.0.1:9", "--rate", "-3"},
		{"replay", "x.llmrec", "--speed", "0"},
	} {
		cmd, out := startLlmtop(t, args...)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("%v: still running", args)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
			t.Errorf("%v: %v, want exit %d\n%s", args, err, exitUsage, out)
			continue
		}
		if !strings.Contains(out.String(), "llmtop:") {
			t.Errorf("%v: no reason given:\n%s", args, out)
		}
	}
}
