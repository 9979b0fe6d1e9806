package logs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
)

// ReadTail reads the last max bytes of the log file at path at once (a
// one-shot face such as `llmtop snapshot --log`), through a source built
// from opts, and returns what the source would have delivered, in order:
// log lines, events and log-derived samples. A file that is missing or is
// not a regular log is an error that says what to pass instead.
func ReadTail(path string, max int64, opts Options) ([]any, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--log %s: %w", path, err)
	}
	if err := notALog(path, info.Mode()); err != nil {
		return nil, fmt.Errorf("--log %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--log %s: %w", path, err)
	}
	defer f.Close()
	var r io.Reader = f
	if size := info.Size(); max > 0 && size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, fmt.Errorf("--log %s: %w", path, err)
		}
		br := bufio.NewReader(f)
		if _, err := br.ReadString('\n'); err != nil { // a cut first line is no line
			return nil, nil
		}
		r = br
	}
	var out []any
	src := NewSource(opts, func(m any) { out = append(out, m) })
	readAll(r, src)
	src.mu.Lock()
	batch := src.queue
	src.queue = nil
	src.mu.Unlock()
	src.deliver(context.Background(), batch)
	return out, nil
}
