package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/llmtop/llmtop/model"
)

// CheckFile says why path cannot be followed as a log file: a directory, a
// device (/dev/zero never ends and is no log), a socket. A path that does
// not exist yet, a regular file and a FIFO (a pipe someone writes a log
// into) are fine.
func CheckFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return nil // it may appear later; FollowFile waits for it
	}
	return notALog(path, info.Mode())
}

func notALog(path string, m fs.FileMode) error {
	switch {
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not a log file: name the log file in it", path)
	case m&fs.ModeDevice != 0:
		return fmt.Errorf("%s is a device, not a log file: pass the engine's log file, or the command that prints it with --log-cmd", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s is a socket, not a log file: pass the command that reads it with --log-cmd", path)
	}
	return nil
}

// isFIFO reports whether path names a named pipe now.
func isFIFO(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode()&fs.ModeNamedPipe != 0
}

// followFIFO reads a named pipe as a stream (it cannot seek: offsets,
// truncation and rotation mean nothing there) until ctx is done. When the
// writer closes its end, the next writer is waited for, as tail -F does.
// The pipe is opened non-blocking, so neither the open nor a read with no
// writer holds the goroutine past ctx.
func followFIFO(ctx context.Context, path string, poll time.Duration, src *Source) {
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		src.notice("log_error", model.SevWarn, "cannot open the pipe %s: %v", path, err)
		return
	}
	defer file.Close()
	stop := context.AfterFunc(ctx, func() { _ = file.SetReadDeadline(time.Now()) })
	defer stop()
	sp := newSplitter()
	buf := make([]byte, 64<<10)
	for ctx.Err() == nil {
		n, err := file.Read(buf)
		if n > 0 {
			sp.write(buf[:n], src.Line)
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF): // no writer now: wait for the next
			sp.flush(src.Line)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return
		default:
			src.notice("log_error", model.SevWarn, "reading the pipe %s: %v", path, err)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}
