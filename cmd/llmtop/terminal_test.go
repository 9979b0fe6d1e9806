//go:build linux

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/llmtop/llmtop/sources/logs/logstest"
)

// openPTY opens a pseudo-terminal pair of 120×40: the master (the
// terminal emulator's side) and the slave (the program's terminal).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock, n int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatal(err)
	}
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := [4]uint16{40, 120, 0, 0} // rows, columns
	if err := ioctl(slave, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// screenLog keeps what a terminal's master side read.
type screenLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screenLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screenLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestMonitorEndsWhenItsTerminalGoes: the monitor runs on a terminal that
// is not its controlling terminal, so no SIGHUP reaches it when the
// terminal closes; that is llmtop under `make run`, where make is the
// session leader and gets the hangup. When the terminal's other side
// closes, llmtop must end by itself as q does: exit 0, its log command
// stopped.
func TestMonitorEndsWhenItsTerminalGoes(t *testing.T) {
	const marker = "sleep 98771"
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Skipf("%q is already running here: %q", marker, p)
	}
	defer killLeftovers(t, marker)
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLlmtop$")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(),
		"LLMTOP_TEST_ARGS="+strings.Join([]string{"--no-gpu", "--log-cmd", marker, "http://127.0.0.1:1"}, "\n"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var screen screenLog
	go func() { _, _ = io.Copy(&screen, master) }()

	// Up and drawing, its log command started.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(screen.String(), "Diagnosis") || len(logstest.Running(t, marker)) == 0 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no frame or no log command within 20 s; the terminal showed:\n%q", screen.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	master.Close() // the terminal goes away
	code, _ := exitCode(t, cmd, 20*time.Second)
	if code != 0 {
		t.Errorf("exit status %d after the terminal went away, want 0 (as q)", code)
	}
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Errorf("llmtop ended, its log command still runs: %q", p)
	}
}

// TestTerminalFileReportsLoss: the first read that ends or write that fails
// reports the terminal lost, once; data in between passes through.
func TestTerminalFileReportsLoss(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var lost []error
	g := &terminalGone{lost: func(err error) { lost = append(lost, err) }}
	in, out := terminalFile{r, g}, terminalFile{w, g}
	if _, err := out.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if n, err := in.Read(b); n != 1 || err != nil || len(lost) != 0 {
		t.Fatalf("a working terminal: read %d, %v; lost %v", n, err, lost)
	}
	w.Close()
	if _, err := in.Read(b); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the other side closed: %v, want EOF", err)
	}
	if len(lost) != 1 || !errors.Is(lost[0], io.EOF) {
		t.Fatalf("EOF reported as %v, want one loss wrapping EOF", lost)
	}

	// A write that fails (the reader gone: EPIPE) is reported once,
	// however many fail after it.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	r2.Close()
	lost = nil
	g2 := &terminalGone{lost: func(err error) { lost = append(lost, err) }}
	out2 := terminalFile{w2, g2}
	for range 3 {
		if _, err := out2.Write([]byte("frame")); err == nil {
			t.Fatal("a write to a closed pipe succeeded")
		}
	}
	if len(lost) != 1 || !errors.Is(lost[0], syscall.EPIPE) {
		t.Fatalf("failed writes reported as %v, want one loss wrapping EPIPE", lost)
	}
}
