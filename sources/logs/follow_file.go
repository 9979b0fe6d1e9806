package logs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/model"
)

// FileOptions tune file following.
type FileOptions struct {
	// Poll is the poll interval where the file's changes cannot be watched
	// (default 500 ms), and the least time between two reads of a watched
	// file that keeps changing. Each read goes to the end of the file, so a
	// busy log costs no more wake-ups than that; the monitor draws once a
	// second, so a line is on screen within that second either way.
	Poll time.Duration
	// Recheck is the poll interval while inotify watches the file (default
	// 2 s): a quiet log then costs one wake-up every Recheck, and a line
	// written after a quiet spell is read at once. The recheck finds what
	// inotify does not see (a file written from another machine over NFS).
	Recheck time.Duration
	// Beat, when set, reads the file every Beat on the beat grid (package
	// beat) and does not watch it: each read falls in the wake-up the
	// monitor's scrape makes at the same instant, so a log, quiet or busy,
	// costs no wake-up of its own. A line then waits up to Beat to be read
	// (a second: the screen draws log lines with its next frame anyway).
	// Poll and Recheck are not used.
	Beat time.Duration
	// Backlog is how much of an existing file's end is shown first
	// (default 64 KiB; the first, partial line is skipped). 0 = default,
	// negative = start at the end.
	Backlog int64
	// NoHistory: the file was written since llmtop started (the log of
	// the engine it launched), so its backlog is now, not history.
	NoHistory bool
}

// FollowFile follows path like tail -F until ctx is done: it waits for the
// file to exist, reads what is appended, notices truncation (size shrank or
// the first bytes changed), rotation (the path now names another file: the
// old one is drained first) and deletion (keeps reading the old file until
// the path comes back). What changed is always found by one stat and one
// 64-byte read, which behave the same on every filesystem (NFS, overlay,
// bind mounts) and avoid nxadm/tail's lost/duplicated lines on
// truncate-then-rewrite; inotify (notify_linux.go) only says when to look.
func FollowFile(ctx context.Context, path string, fo FileOptions, src *Source) {
	if fo.Poll <= 0 {
		fo.Poll = 500 * time.Millisecond
	}
	if fo.Recheck <= 0 {
		fo.Recheck = 2 * time.Second
	}
	if fo.Backlog == 0 {
		fo.Backlog = 64 << 10
	}

	f := &fileFollower{path: path, src: src, sp: newSplitter(), buf: make([]byte, 64<<10)}
	defer f.close()
	var n *notifier
	if fo.Beat <= 0 {
		n = newNotifier(path)
		defer n.close()
	}
	wait := fo.Poll
	if n != nil {
		wait = fo.Recheck
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	first := true
	var read time.Time // the last read of the file
	for ctx.Err() == nil {
		if f.file == nil {
			if isFIFO(path) { // a pipe a log is written into: read as a stream
				followFIFO(ctx, path, fo.Poll, src)
				return
			}
			if f.open(first, fo.Backlog, fo.NoHistory) {
				n.watchFile(path)
				first = false
				continue
			}
			first = false
		} else {
			f.step()
			read = time.Now()
			if f.file == nil {
				continue // rotated: the new file is opened (and watched) now
			}
		}
		if fo.Beat > 0 {
			wait = beat.Until(time.Now(), fo.Beat)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-n.C():
			// a file that keeps changing is read at most every Poll
			if gap := fo.Poll - time.Since(read); gap > 0 {
				timer.Reset(gap)
				select {
				case <-ctx.Done():
				case <-timer.C:
				}
			}
		}
	}
}

type fileFollower struct {
	path    string
	src     *Source
	sp      *splitter
	buf     []byte
	file    *os.File
	info    os.FileInfo
	off     int64
	head    []byte // the file's first bytes, to notice a rewrite in place
	waiting bool   // "waiting for the file" was said
	gone    bool   // "the file disappeared" was said
	failed  string // last read error said
	// histEnd is the file's size when llmtop first opened it: the lines
	// before it (the backlog) were written before llmtop was watching.
	histEnd int64
	inHist  bool // the bytes being split are the backlog's
}

func (f *fileFollower) emit(line []byte) {
	if f.inHist {
		f.src.backlogLine(line)
		return
	}
	f.src.Line(line)
}

// open opens the path; on the first open of a file that already exists it
// starts near the end (tail's backlog), otherwise at the start.
func (f *fileFollower) open(first bool, backlog int64, noHistory bool) bool {
	// Non-blocking: a FIFO that replaced the file must not hang the open.
	file, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !f.waiting {
			f.waiting = true
			if errors.Is(err, fs.ErrNotExist) {
				f.src.notice("log_waiting", model.SevInfo, "waiting for %s to appear", f.path)
			} else {
				f.src.notice("log_error", model.SevWarn, "cannot open %s: %v (retrying)", f.path, err)
			}
		}
		return false
	}
	info, err := file.Stat()
	if err == nil {
		err = notALog(f.path, info.Mode())
	}
	if err != nil {
		// Never read a device: /dev/zero would be read forever.
		file.Close()
		if !f.waiting {
			f.waiting = true
			f.src.notice("log_error", model.SevWarn, "%v (retrying)", err)
		}
		return false
	}
	f.file, f.info, f.off, f.head, f.waiting, f.gone, f.histEnd = file, info, 0, nil, false, false, 0
	f.sp.reset()
	if first && !noHistory {
		// What the file holds now was written before llmtop watched it:
		// shown as history, never as the engine starting now.
		f.histEnd = info.Size()
	}
	switch {
	case first && backlog < 0:
		f.off = f.lastLineStart(info.Size())
	case first && backlog > 0 && info.Size() > backlog:
		f.off = info.Size() - backlog
		f.skipPartial()
	}
	return true
}

// lastLineStart is where the file's last, unfinished line begins (size if
// the file ends with a newline), so starting at the end still reads a line
// being written whole rather than its tail. It looks back at most 64 KiB;
// past that it starts at size.
func (f *fileFollower) lastLineStart(size int64) int64 {
	const window = 64 << 10
	for end := size; end > 0 && size-end < window; {
		start := max(end-4096, 0)
		n, _ := f.file.ReadAt(f.buf[:end-start], start)
		if i := bytes.LastIndexByte(f.buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1
		}
		if start == 0 {
			return 0 // the file is one unfinished line
		}
		if n == 0 {
			break
		}
		end = start
	}
	return size
}

// skipPartial moves past the first (cut) line of the backlog window.
func (f *fileFollower) skipPartial() {
	for {
		n, err := f.file.ReadAt(f.buf[:4096], f.off)
		if i := bytes.IndexByte(f.buf[:n], '\n'); i >= 0 {
			f.off += int64(i + 1)
			return
		}
		f.off += int64(n)
		if err != nil || n == 0 {
			return
		}
	}
}

// step checks the path for truncation, reads what was appended, then
// checks for deletion and rotation; it reports whether data was read.
func (f *fileFollower) step() bool {
	info, err := os.Stat(f.path)
	if err == nil && os.SameFile(info, f.info) && (info.Size() < f.off || f.rewritten()) {
		// Checked before reading, or the rewritten file's tail would be
		// read from the old offset as if it were appended.
		f.src.notice("log_truncated", model.SevInfo, "%s was truncated; reading it from the start", f.path)
		f.off, f.head, f.histEnd = 0, nil, 0
		f.sp.reset()
	}
	got := f.drain()
	switch {
	case err != nil:
		if !f.gone {
			f.gone = true
			f.src.notice("log_removed", model.SevWarn, "%s was removed or renamed; still reading the old file and waiting for a new one", f.path)
		}
	case !os.SameFile(info, f.info):
		f.drain() // lines the writer added before it reopened
		f.sp.flush(f.emit)
		f.close()
		f.src.notice("log_rotated", model.SevInfo, "%s was rotated; following the new file", f.path)
	}
	return got
}

// drain reads from the current offset to the end of the file.
func (f *fileFollower) drain() bool {
	got := false
	for {
		buf := f.buf
		// The backlog is read apart from what follows it, so each line
		// is told history or now by where it ends; a line cut by the
		// backlog's end was still being written: now.
		f.inHist = f.off < f.histEnd
		if f.inHist {
			buf = buf[:min(int64(len(buf)), f.histEnd-f.off)]
		}
		n, err := f.file.ReadAt(buf, f.off)
		if n > 0 {
			got = true
			f.off += int64(n)
			f.sp.write(buf[:n], f.emit)
		}
		if err != nil {
			if got {
				f.captureHead()
			}
			if err != io.EOF && f.failed != err.Error() {
				f.failed = err.Error()
				f.src.notice("log_error", model.SevWarn, "reading %s: %v", f.path, err)
			}
			return got
		}
	}
}

// captureHead remembers the file's first bytes (up to 64) once they have
// been read, to notice a truncate-and-rewrite later.
func (f *fileFollower) captureHead() {
	n := min(int64(64), f.off)
	if int64(len(f.head)) >= n {
		return
	}
	m, _ := f.file.ReadAt(f.buf[:n], 0)
	f.head = append(f.head[:0], f.buf[:m]...)
}

// rewritten reports whether the file's first bytes changed: truncated and
// rewritten past the old offset between two polls.
func (f *fileFollower) rewritten() bool {
	if len(f.head) == 0 {
		return false
	}
	var cur [64]byte
	m, _ := f.file.ReadAt(cur[:len(f.head)], 0)
	return !bytes.Equal(cur[:m], f.head)
}

func (f *fileFollower) close() {
	if f.file != nil {
		f.file.Close()
		f.file = nil
	}
}
