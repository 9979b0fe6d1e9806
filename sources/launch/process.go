package launch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one engine process llmtop started: in its own session (so a
// Ctrl+C at llmtop's terminal, or the terminal going away, never reaches
// it), its output appended to Log (so it never waits on llmtop to read a
// pipe).
type Proc struct {
	Args    []string
	Env     []string // added to llmtop's environment
	Log     string
	PID     int
	Started time.Time

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// Start starts args with env added, its stdout and stderr appended to
// logPath (created 0600 if missing; its folder too).
func Start(args, env []string, logPath string) (*Proc, error) {
	if len(args) == 0 {
		return nil, errors.New("no command to start: llmtop run -- ENGINE ARGS…")
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, fmt.Errorf("the engine's log folder: %w", err)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the engine's log: %w", err)
	}
	defer f.Close() // the child holds its own descriptor
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := startPlain(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	p := &Proc{Args: args, Env: env, Log: logPath, PID: cmd.Process.Pid, Started: time.Now(), cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Done closes when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited says whether the process has exited, and how.
func (p *Proc) Exited() (bool, string) {
	select {
	case <-p.done:
	default:
		return false, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return true, exitText(p.err)
}

func exitText(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + ws.Signal().String()
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

// Stopped is how a stop went.
type Stopped struct {
	Took   time.Duration
	Killed bool   // SIGKILL after the grace time
	Exit   string // how the process ended
}

func (s Stopped) String() string {
	if s.Killed {
		return fmt.Sprintf("did not stop within the grace time: SIGKILL after %s (%s)", s.Took.Round(100*time.Millisecond), s.Exit)
	}
	return fmt.Sprintf("stopped on SIGTERM in %s (%s)", s.Took.Round(100*time.Millisecond), s.Exit)
}

// Stop asks the engine's process group to stop (SIGTERM: engines drain the
// requests in flight and exit), and kills it (SIGKILL) after grace.
func (p *Proc) Stop(grace time.Duration) Stopped {
	start := time.Now()
	if done, how := p.Exited(); done {
		return Stopped{Exit: how}
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		_, how := p.Exited()
		// What the engine left behind in its group (a worker) goes too.
		_ = syscall.Kill(-p.PID, syscall.SIGKILL)
		return Stopped{Took: time.Since(start), Exit: how}
	case <-t.C:
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	_, how := p.Exited()
	return Stopped{Took: time.Since(start), Killed: true, Exit: how}
}

// Note is what `llmtop run` leaves beside the log, so that an engine left
// running can be found again: its pid, its command line, its log.
func (p *Proc) Note() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid: %d\n", p.PID)
	if len(p.Env) > 0 {
		fmt.Fprintf(&b, "env: %s\n", Quote(p.Env))
	}
	fmt.Fprintf(&b, "command: %s\n", Quote(p.Args))
	fmt.Fprintf(&b, "log: %s\n", p.Log)
	fmt.Fprintf(&b, "started: %s\n", p.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "stop it: kill -TERM -%d   (its process group)\n", p.PID)
	return b.String()
}

// NotePath is where WriteNote writes.
func (p *Proc) NotePath() string { return p.Log + ".pid" }

// WriteNote writes Note beside the log.
func (p *Proc) WriteNote() error {
	return os.WriteFile(p.NotePath(), []byte(p.Note()), 0o600)
}
