package logs

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/llmtop/llmtop/model"
)

// CommandOptions tune command following.
type CommandOptions struct {
	// Backoff is the first restart delay (default 1 s); it doubles up to
	// MaxBackoff (default 30 s) and starts over after a run that lasted
	// longer than MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Grace is how long the command gets after SIGTERM before SIGKILL
	// (default 2 s).
	Grace time.Duration
	// Stamped says the command's lines carry the time they were logged
	// in a zone llmtop reads right (Input.Stamps): what each start prints
	// stamped before it started (docker logs --tail 200) is its backlog.
	Stamped bool
}

// FollowCommand runs command with /bin/sh -c, feeding its stdout and stderr
// (one pipe, so their lines interleave as written) to src, and restarts it
// with backoff whenever it exits, saying so in the log. The command runs in
// its own process group; when ctx is done the whole group gets SIGTERM,
// then SIGKILL, so nothing it started outlives llmtop.
func FollowCommand(ctx context.Context, command string, co CommandOptions, src *Source) {
	if co.Backoff <= 0 {
		co.Backoff = time.Second
	}
	if co.MaxBackoff <= 0 {
		co.MaxBackoff = 30 * time.Second
	}
	if co.Grace <= 0 {
		co.Grace = 2 * time.Second
	}
	backoff := co.Backoff
	for ctx.Err() == nil {
		start := time.Now()
		if co.Stamped {
			src.since = start // read by the command's reader, started after this
		}
		status, err := runOnce(ctx, command, co.Grace, src)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > co.MaxBackoff {
			backoff = co.Backoff
		}
		if err != nil {
			src.notice("log_cmd_failed", model.SevWarn, "log command %q could not start: %v; retrying in %s", command, err, backoff)
		} else {
			src.notice("log_cmd_exited", model.SevWarn, "log command %q %s after %s; restarting in %s", command, status, time.Since(start).Round(time.Millisecond), backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, co.MaxBackoff)
	}
}

// runOnce runs the command to its end (or ctx's) and describes how it
// ended; err is set when it could not start.
func runOnce(ctx context.Context, command string, grace time.Duration, src *Source) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer pr.Close()
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close() // the child holds its own copy; EOF comes when every holder exits
	if err != nil {
		return "", err
	}
	pgid := cmd.Process.Pid
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		readAll(pr, src)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var werr error
	select {
	case werr = <-waited:
		// The shell is gone; give what it started a moment to finish
		// writing, then end the group so the pipe closes.
		select {
		case <-readDone:
		case <-time.After(500 * time.Millisecond):
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	case <-ctx.Done():
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case werr = <-waited:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			werr = <-waited
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // stragglers that ignored SIGTERM
	}
	select {
	case <-readDone:
	case <-time.After(time.Second):
		// Something outside the group (it called setsid) still holds the
		// pipe: stop reading rather than hang.
		pr.Close()
		<-readDone
	}
	return describeExit(werr), nil
}

func readAll(r io.Reader, src *Source) {
	sp := newSplitter()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			sp.write(buf[:n], src.Line)
		}
		if err != nil {
			sp.flush(src.Line)
			return
		}
	}
}

func describeExit(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "was killed by signal " + ws.Signal().String()
		}
		return "exited with status " + strconv.Itoa(ee.ExitCode())
	}
	return "failed: " + err.Error()
}
