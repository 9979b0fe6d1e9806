package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/logs/logstest"
)

// TestDiagnoseLeavesNoLogCommandBehind: when the watch ends, diagnose waits
// for its --log-cmd to be gone, even one that ignores SIGTERM (it gets
// SIGKILL after the grace), and it does not hang: 1 s of watch and 2 s of
// grace, bounded by quitLimit.
func TestDiagnoseLeavesNoLogCommandBehind(t *testing.T) {
	marker := uniqueSleep(98765)
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Skipf("%q is already running here: %q", marker, p)
	}
	logFlags.commands = []string{"trap '' TERM; " + marker}
	defer func() { logFlags.commands = nil }()
	start := time.Now()
	diagnoseOnce(t, time.Second, "http://127.0.0.1:1")
	took := time.Since(start)
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Errorf("after diagnose returned (%s) the log command still runs: %q", took.Round(time.Millisecond), p)
		// leave nothing behind either way
		deadline := time.Now().Add(5 * time.Second)
		for len(logstest.Running(t, marker)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if took > quitLimit {
		t.Errorf("a 1 s diagnose took %s: quitting waited for more than its log command", took)
	}
}

// quitLimit bounds a 1 s diagnose whose log command ignores SIGTERM: 1 s of
// watch, 2 s before SIGKILL, 3 s at most of waiting (quitWait), and a
// process start, with room for a machine busy with other work. What it
// catches is a quit that waits for something else, or forever; how fast a
// quit is belongs to a benchmark, not to this test.
const quitLimit = 15 * time.Second

// uniqueSleep is a log command that sleeps for s seconds, marked with this
// test process's id so that the same test run at the same time from
// another checkout neither skips this one nor gets its processes killed.
func uniqueSleep(s int) string {
	return fmt.Sprintf("sleep %d.%d", s, os.Getpid())
}

// killLeftovers ends (by pid) the processes a failed test left running.
func killLeftovers(t *testing.T, marker string) {
	t.Helper()
	for _, p := range logstest.Running(t, marker) {
		if pid, err := strconv.Atoi(p[:strings.IndexByte(p, ':')]); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestRunLlmtop is not a test: the tests below run this test binary as
// llmtop, with the arguments in LLMTOP_TEST_ARGS (one a line).
func TestRunLlmtop(t *testing.T) {
	args := os.Getenv("LLMTOP_TEST_ARGS")
	if args == "" {
		t.Skip("runs llmtop for the tests that need a process of their own")
	}
	os.Args = append([]string{"llmtop"}, strings.Split(args, "\n")...)
	main()
	os.Exit(0)
}

// startLlmtop runs llmtop with args as a process of its own.
func startLlmtop(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLlmtop$")
	cmd.Env = append(os.Environ(), "LLMTOP_TEST_ARGS="+strings.Join(args, "\n"), "XDG_CONFIG_HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// exitCode waits up to limit for cmd to end and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), time.Since(start)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-waited
		t.Fatalf("llmtop still ran %s later", limit)
		return 0, 0
	}
}

// TestLlmtopExitLeavesNoLogCommand: when llmtop exits, its --log-cmd is
// gone too, even one slow to die: this one ignores SIGTERM, and llmtop used
// to exit before the SIGKILL that follows 2 s later.
func TestLlmtopExitLeavesNoLogCommand(t *testing.T) {
	marker := uniqueSleep(98766)
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Skipf("%q is already running here: %q", marker, p)
	}
	defer killLeftovers(t, marker)
	start := time.Now()
	cmd, out := startLlmtop(t, "diagnose", "--json", "--duration", "1s", "--log-cmd", "trap '' TERM; "+marker, "http://127.0.0.1:1")
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	// The log command must have run, or this test proves nothing: it
	// lives at least the 2 s it ignores SIGTERM for, so polling sees it.
	seen, exited := false, false
	var err error
	limit := time.After(quitLimit)
	for !exited {
		seen = seen || len(logstest.Running(t, marker)) > 0
		select {
		case err = <-waited:
			exited = true
		case <-limit:
			_ = cmd.Process.Kill()
			<-waited
			t.Fatalf("llmtop still ran %s after it started: quitting waits for more than its log command\n%s", quitLimit, out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !seen {
		t.Fatalf("the log command never ran (llmtop exited after %s)\n%s", time.Since(start), out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	if code != 3 {
		t.Errorf("exit status %d (%v), want 3 (unreachable)\n%s", code, err, out)
	}
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Errorf("llmtop exited, its log command still runs: %q", p)
	}
}

// TestSignalEndsLlmtopAndItsLogCommand: SIGTERM, SIGHUP (terminal or ssh
// session gone) and SIGINT end a 1-minute diagnose at once, with its report
// and its log command stopped.
func TestSignalEndsLlmtopAndItsLogCommand(t *testing.T) {
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			marker := uniqueSleep(98767 + i)
			if p := logstest.Running(t, marker); len(p) > 0 {
				t.Skipf("%q is already running here: %q", marker, p)
			}
			defer killLeftovers(t, marker)
			cmd, out := startLlmtop(t, "diagnose", "--json", "--duration", "1m", "--log-cmd", marker, "http://127.0.0.1:1")
			deadline := time.Now().Add(30 * time.Second)
			for len(logstest.Running(t, marker)) == 0 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					_ = cmd.Wait() // out is written until then
					t.Fatalf("the log command did not start within 30 s\n%s", out)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, took := exitCode(t, cmd, 20*time.Second)
			if code != 3 || !strings.Contains(out.String(), `"status": "unreachable"`) {
				t.Errorf("exit status %d, want 3 and the report\n%s", code, out)
			}
			// At once, by itself: the exit status above already tells it
			// from the 10 s watchdog (128+signal); this bound has room
			// for a busy machine.
			if took > 9*time.Second {
				t.Errorf("llmtop took %s to end after %v", took, sig)
			}
			if p := logstest.Running(t, marker); len(p) > 0 {
				t.Errorf("llmtop ended on %v, its log command still runs: %q", sig, p)
			}
		})
	}
}
