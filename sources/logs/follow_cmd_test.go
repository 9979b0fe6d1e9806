package logs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func startCmd(t *testing.T, command string, co CommandOptions) (*collector, context.CancelFunc, chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{}
	src := NewSource(unlimited, c.send)
	go src.Run(ctx)
	done := make(chan struct{})
	go func() { FollowCommand(ctx, command, co, src); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("FollowCommand did not return")
		}
	})
	return c, cancel, done
}

func TestFollowCommandExitIsShownAndRestarted(t *testing.T) {
	c, _, _ := startCmd(t, "echo hello; echo oops >&2; exit 3", CommandOptions{Backoff: 20 * time.Millisecond})
	waitFor(t, "two runs", func() bool { return len(c.events("log_cmd_exited")) >= 2 })
	ev := c.events("log_cmd_exited")[0]
	if !strings.Contains(ev.Title, "exited with status 3") || !strings.Contains(ev.Title, "restarting in 20ms") {
		t.Errorf("exit notice %q", ev.Title)
	}
	if ev2 := c.events("log_cmd_exited")[1]; !strings.Contains(ev2.Title, "restarting in 40ms") {
		t.Errorf("backoff did not grow: %q", ev2.Title)
	}
	got := c.plain()
	if len(got) < 4 || got[0] != "hello" || got[1] != "oops" || got[2] != "hello" {
		t.Errorf("lines %q", got)
	}
}

func TestFollowCommandThatCannotRun(t *testing.T) {
	c, _, _ := startCmd(t, "/nonexistent/engine-logs", CommandOptions{Backoff: 20 * time.Millisecond})
	waitFor(t, "exit notice", func() bool { return len(c.events("log_cmd_exited")) >= 1 })
	if ev := c.events("log_cmd_exited")[0]; !strings.Contains(ev.Title, "status 127") {
		t.Errorf("notice %q", ev.Title)
	}
}

func TestFollowCommandBinaryJunk(t *testing.T) {
	// Random bytes, every escape family, then a line we can recognise.
	cmd := `head -c 200000 /dev/urandom; printf '\n\033]0;pwned\007\033[2J\033[H\233 31m\nAFTER\n'; sleep 1000`
	c, _, _ := startCmd(t, cmd, CommandOptions{})
	waitFor(t, "the line after the junk", func() bool {
		for _, l := range c.plain() {
			if l == "AFTER" {
				return true
			}
		}
		return false
	})
	for _, l := range c.lines() {
		if !utf8.ValidString(l) {
			t.Fatalf("invalid UTF-8 delivered: %q", l)
		}
		for _, r := range l {
			if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("control %U delivered in %q", r, l)
			}
		}
		if len(l) > 1024+64 {
			t.Fatalf("display line of %d bytes", len(l))
		}
	}
}

// A command that never ends (with a grandchild, and one that ignores
// SIGTERM) is stopped with its whole process group on cancel.
func TestFollowCommandCancelLeavesNoProcess(t *testing.T) {
	marker := strconv.FormatFloat(900+float64(os.Getpid()%1000)/1000, 'f', 3, 64)
	// The inner shell ignores SIGTERM and keeps looping: only SIGKILL ends it.
	cmd := "echo pgid=$$; sleep " + marker + " & sh -c \"trap '' TERM; while :; do sleep 0.05; done; : " + marker + "\" & sleep " + marker + "; wait"
	c, cancel, done := startCmd(t, cmd, CommandOptions{Grace: 300 * time.Millisecond})
	waitFor(t, "pgid line", func() bool { return len(c.plain()) > 0 })
	pgid, err := strconv.Atoi(strings.TrimPrefix(c.plain()[0], "pgid="))
	if err != nil {
		t.Fatal(c.plain())
	}
	waitFor(t, "the shells and sleeps", func() bool { return len(procsWith(marker)) >= 4 })
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("FollowCommand did not return after cancel")
	}
	waitFor(t, "process group gone", func() bool {
		return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) && len(procsWith(marker)) == 0
	})
	if n := len(c.events("log_cmd_exited")); n != 0 {
		t.Errorf("a cancelled command is not an exit to report (%d notices)", n)
	}
}

// procsWith lists live (not zombie) processes whose command line holds s.
func procsWith(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cl, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.Contains(string(cl), s) {
			continue
		}
		if st, err := os.ReadFile(d + "/stat"); err == nil {
			if f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// A notice quotes the command; a credential in it is not shown.
func TestFollowCommandNoticeRedactsCredentials(t *testing.T) {
	c, _, _ := startCmd(t, "exit 3; curl -s 'http://alice:PASSWORD42@gpu1/log?token=TOKEN1234'", CommandOptions{Backoff: 20 * time.Millisecond})
	waitFor(t, "exit notice", func() bool { return len(c.events("log_cmd_exited")) >= 1 })
	for _, l := range c.lines() {
		if strings.Contains(l, "PASSWORD42") || strings.Contains(l, "TOKEN1234") {
			t.Errorf("secret shown: %q", l)
		}
	}
	if ev := c.events("log_cmd_exited")[0]; !strings.Contains(ev.Title, "REDACTED") {
		t.Errorf("notice %q", ev.Title)
	}
}
