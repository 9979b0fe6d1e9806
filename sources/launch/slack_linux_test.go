//go:build linux

package launch

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// llmtop's threads sleep with a millisecond of timer slack (cmd/llmtop),
// which a child inherits from the thread that starts it: the engine
// `llmtop run` starts gets the kernel's default back, and the thread that
// started it its millisecond. Here the starting goroutine's thread has a
// millisecond, as llmtop's do.
func TestEngineStartsWithTheDefaultSlack(t *testing.T) {
	if _, err := os.Stat("/proc/self/timerslack_ns"); err != nil {
		t.Skip("no timerslack_ns on this kernel")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1_000_000, 0); e != 0 {
		t.Fatal(e)
	}
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, defaultSlack, 0)
	log := filepath.Join(t.TempDir(), "engine.log")
	p, err := Start([]string{"/bin/sh", "-c", "cat /proc/self/timerslack_ns"}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	if now, _, _ := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0); now != 1_000_000 {
		t.Errorf("the starting thread's slack is %d ns after the start, want its millisecond back", now)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the child did not exit")
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(b)); s != "50000" {
		t.Errorf("the engine sleeps with %q ns of timer slack, want the kernel's 50000", s)
	}
}
