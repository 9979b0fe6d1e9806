//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/llmtop/llmtop/sources/bench/report"
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

// monitorOnPTY runs llmtop with args on a fresh pseudo-terminal that is not
// its controlling terminal, and keeps what it draws in screen.
func monitorOnPTY(t *testing.T, env []string, args ...string) (cmd *exec.Cmd, master *os.File, screen *screenLog) {
	t.Helper()
	master, slave := openPTY(t)
	t.Cleanup(func() { master.Close() })
	cmd = exec.Command(os.Args[0], "-test.run=^TestRunLlmtop$")
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(),
		"LLMTOP_TEST_ARGS="+strings.Join(args, "\n"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	screen = &screenLog{}
	go func() { _, _ = io.Copy(screen, master) }()
	return cmd, master, screen
}

// waitFor polls cond for up to limit; on failure it kills cmd and fails.
func waitFor(t *testing.T, cmd *exec.Cmd, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMonitorEndsWhenItsTerminalGoes: the monitor runs on a terminal that
// is not its controlling terminal, so no SIGHUP reaches it when the
// terminal closes; that is llmtop under `make run`, where make is the
// session leader and gets the hangup. When the terminal's other side
// closes, llmtop must end by itself as q does: exit 0, its log command
// stopped.
func TestMonitorEndsWhenItsTerminalGoes(t *testing.T) {
	marker := uniqueSleep(98771)
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Skipf("%q is already running here: %q", marker, p)
	}
	defer killLeftovers(t, marker)
	cmd, master, screen := monitorOnPTY(t, nil, "--no-gpu", "--log-cmd", marker, "http://127.0.0.1:1")
	waitFor(t, cmd, 20*time.Second, "a frame and the log command", func() bool {
		return strings.Contains(screen.String(), "Diagnosis") && len(logstest.Running(t, marker)) > 0
	})

	master.Close() // the terminal goes away
	code, took := exitCode(t, cmd, 20*time.Second)
	t.Logf("llmtop ended %s after its terminal closed", took.Round(time.Millisecond))
	if code != 0 {
		t.Errorf("exit status %d after the terminal went away, want 0 (as q)", code)
	}
	if p := logstest.Running(t, marker); len(p) > 0 {
		t.Errorf("llmtop ended, its log command still runs: %q", p)
	}
}

// endlessBenchServer answers the monitor's benchmark: the first two requests (the
// warmup) stream a short answer, every later one streams forever.
func endlessBenchServer(t *testing.T) (url string, inFlight *atomic.Int64) {
	var n atomic.Int64
	inFlight = new(atomic.Int64)
	tok := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},\"finish_reason\":null}]}\n\n"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		case r.Method != http.MethodPost:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n.Add(1) <= 2 {
			io.WriteString(w, tok+"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			io.WriteString(w, tok)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(s.Close)
	return s.URL, inFlight
}

// TestMonitorQuitSavesTheRunningBenchmark: a benchmark runs in the monitor
// (b, enter: the quick preset's 16 streams, here against streams that never
// end) when it is cancelled (b) or the monitor ends, by q or by losing its
// terminal: what it measured is saved, the 16 requests in flight counted as
// cancelled.
func TestMonitorQuitSavesTheRunningBenchmark(t *testing.T) {
	for _, end := range []string{"b cancels", "q", "terminal gone"} {
		t.Run(end, func(t *testing.T) {
			url, inFlight := endlessBenchServer(t)
			state := t.TempDir()
			cmd, master, screen := monitorOnPTY(t, []string{"XDG_STATE_HOME=" + state}, "--no-gpu", url)
			waitFor(t, cmd, 20*time.Second, "the first frame", func() bool { return strings.Contains(screen.String(), "Diagnosis") })
			if _, err := master.WriteString("b"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, cmd, 10*time.Second, "the benchmark form", func() bool { return strings.Contains(screen.String(), "quick") })
			if _, err := master.WriteString("\r"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, cmd, 20*time.Second, "16 streams in flight", func() bool { return inFlight.Load() == 16 })
			saved := func() []string {
				files, _ := filepath.Glob(filepath.Join(state, "llmtop", "bench", "*.json"))
				return files
			}
			switch end {
			case "b cancels":
				_, _ = master.WriteString("b")
				waitFor(t, cmd, 20*time.Second, "the cancelled run saved", func() bool { return len(saved()) > 0 })
				_, _ = master.WriteString("q")
			case "q":
				_, _ = master.WriteString("q")
			default:
				master.Close()
			}
			if code, _ := exitCode(t, cmd, 20*time.Second); code != 0 {
				t.Errorf("exit status %d, want 0", code)
			}
			files := saved()
			if len(files) != 1 {
				t.Fatalf("saved results: %q, want one", files)
			}
			b, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var got report.Result
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Cancelled != 16 || got.Failed != 0 || got.Duration <= 0 {
				t.Errorf("saved cancelled %d failed %d duration %.2fs: want the 16 in flight as cancelled and a real duration",
					got.Cancelled, got.Failed, got.Duration)
			}
		})
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
