//go:build linux

package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"
)

// notifier wakes a file follower when its file changes (inotify), so a
// quiet log costs no wake-ups and a line written after a quiet spell is
// read at once. It only wakes: what changed is still found by the
// follower's stat and read, as a poll finds it, so a lost or merged event
// costs nothing but a wait for the follower's slow recheck.
//
// It watches the file itself (written, truncated, attributes) and its
// directory for entries appearing or going (the path created, renamed onto
// or away: rotation), filtered to the path's own name.
type notifier struct {
	f       *os.File
	fd      int           // f's descriptor: f.Fd() would put it back in blocking mode
	done    chan struct{} // closed when read returns
	changed chan struct{}
	name    []byte
	mu      sync.Mutex
	dirWD   int32
	fileWD  int32
}

const (
	fileEvents = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	dirEvents  = syscall.IN_CREATE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM | syscall.IN_DELETE
)

// newNotifier watches path's directory; nil when inotify is not available
// (the follower then polls as often as before).
func newNotifier(path string) *notifier {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	n := &notifier{fd: fd, done: make(chan struct{}), changed: make(chan struct{}, 1), name: []byte(filepath.Base(path)), fileWD: -1}
	wd, err := syscall.InotifyAddWatch(fd, filepath.Dir(path), dirEvents|syscall.IN_ONLYDIR)
	if err != nil {
		syscall.Close(fd)
		return nil
	}
	n.dirWD = int32(wd)
	// non-blocking: reads go through Go's poller, and Close ends them
	n.f = os.NewFile(uintptr(fd), "inotify")
	go n.read()
	return n
}

// watchFile watches the file the path names now (after each open).
func (n *notifier) watchFile(path string) {
	if n == nil {
		return
	}
	wd, err := syscall.InotifyAddWatch(n.fd, path, fileEvents)
	n.mu.Lock()
	defer n.mu.Unlock()
	if old := n.fileWD; old >= 0 && (err != nil || int32(wd) != old) {
		syscall.InotifyRmWatch(n.fd, uint32(old)) // the rotated-away file
	}
	n.fileWD = -1
	if err == nil {
		n.fileWD = int32(wd)
	}
}

// C is signalled (at most one pending) when something may have changed;
// nil for a nil notifier, so a select on it never fires.
func (n *notifier) C() <-chan struct{} {
	if n == nil {
		return nil
	}
	return n.changed
}

// close ends the notifier and waits for its reader to return.
func (n *notifier) close() {
	if n != nil {
		n.f.Close()
		<-n.done
	}
}

// read turns events into wake-ups until the notifier is closed.
func (n *notifier) read() {
	defer close(n.done)
	buf := make([]byte, 16*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		k, err := n.f.Read(buf)
		if err != nil {
			return
		}
		wake := false
		for off := 0; off+syscall.SizeofInotifyEvent <= k; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+syscall.SizeofInotifyEvent : min(k, off+syscall.SizeofInotifyEvent+int(ev.Len))]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			n.mu.Lock()
			fileWD := n.fileWD
			n.mu.Unlock()
			switch {
			case ev.Mask&syscall.IN_Q_OVERFLOW != 0: // events were lost: look anyway
				wake = true
			case ev.Wd == fileWD:
				wake = true
			case ev.Wd == n.dirWD && bytes.Equal(bytes.TrimRight(name, "\x00"), n.name):
				wake = true
			}
		}
		if wake {
			select {
			case n.changed <- struct{}{}:
			default:
			}
		}
	}
}
