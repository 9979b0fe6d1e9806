package logs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A log written into a named pipe is followed (it used to fail with
// "illegal seek"), across writers: the next writer is read too.
func TestFollowFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vllm.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	c := startFile(t, path, 20*time.Millisecond)
	for i, line := range []string{"INFO first writer\n", "INFO second writer\n"} {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString(line); err != nil {
			t.Fatal(err)
		}
		w.Close()
		waitFor(t, "line "+line, func() bool { return len(c.plain()) == i+1 })
	}
	if got := strings.Join(c.plain(), "|"); got != "INFO first writer|INFO second writer" {
		t.Fatalf("lines %q", got)
	}
	for _, l := range c.lines() {
		if strings.Contains(l, "illegal seek") || strings.Contains(l, "cannot") {
			t.Errorf("notice %q", l)
		}
	}
}

// A device is refused with a clear message and never read: /dev/zero
// burned 0.6 of a core forever.
func TestDeviceIsNotALog(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	err := CheckFile("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero is a device, not a log file") {
		t.Fatalf("CheckFile(/dev/zero) = %v", err)
	}
	c := startFile(t, "/dev/zero", 10*time.Millisecond)
	waitFor(t, "the refusal", func() bool { return len(c.events("log_error")) > 0 })
	if ev := c.events("log_error")[0]; !strings.Contains(ev.Title, "is a device, not a log file") {
		t.Errorf("notice %q", ev.Title)
	}
	if p := c.plain(); len(p) != 0 {
		t.Errorf("read %d lines from /dev/zero", len(p))
	}
	for _, ok := range []string{filepath.Join(t.TempDir(), "not-yet.log")} {
		if err := CheckFile(ok); err != nil {
			t.Errorf("CheckFile(%s) = %v", ok, err)
		}
	}
}
