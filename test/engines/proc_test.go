//go:build engines

package engines

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one engine process. It runs in its own process group so that stopping it also stops the
// children it spawned (Ollama's runner), and it dies with the test binary (Pdeathsig) if the binary
// is killed. Its group id is written to runDir so scripts/engines.sh can end a group that survived a
// crashed test binary.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

var (
	procsMu sync.Mutex
	procs   []*proc
)

// runDir is where group ids of running engines are recorded (set by scripts/engines.sh).
func runDir() string { return os.Getenv("LLMTOP_ENGINES_RUNDIR") }

// startProc starts bin with args and env; stdout and stderr go to logPath.
func startProc(name, bin string, args, env []string, logPath string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	if d := runDir(); d != "" {
		_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("%s-%d.pgid", name, cmd.Process.Pid)), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	}
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the whole process group: SIGTERM, then SIGKILL after a grace period.
func (p *proc) stop() { p.stopWithin(10 * time.Second) }

// stopWithin ends the whole process group: SIGTERM, then SIGKILL if the leader has not exited
// after grace. It reports whether the leader exited on SIGTERM alone.
func (p *proc) stopWithin(grace time.Duration) (onTerm bool) {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		onTerm = true
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// The leader is gone; make sure nothing else of its group lingers (a runner ignoring SIGTERM).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if d := runDir(); d != "" {
		_ = os.Remove(filepath.Join(d, fmt.Sprintf("%s-%d.pgid", p.name, pgid)))
	}
	return onTerm
}

// stopAll stops every engine this test binary started. Idle keep-alive connections are closed
// first: llama-server waits for open connections before it exits.
func stopAll() {
	http.DefaultClient.CloseIdleConnections()
	procsMu.Lock()
	defer procsMu.Unlock()
	for _, p := range procs {
		start := time.Now()
		p.stop()
		if d := time.Since(start); d > 3*time.Second {
			fmt.Fprintf(os.Stderr, "engines: stopping %s took %v\n", p.name, d.Round(100*time.Millisecond))
		}
	}
	procs = nil
}

// logTail returns the last n lines of the process log, for failure messages.
func (p *proc) logTail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200 or the process exits or ctx ends.
func waitHTTP(ctx context.Context, p *proc, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if p.exited() {
			return fmt.Errorf("%s exited (%v) before %s answered; log tail:\n%s", p.name, p.waitErr, url, p.logTail(30))
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("%s never answered 200 on %s; log tail:\n%s", p.name, url, p.logTail(30)))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
