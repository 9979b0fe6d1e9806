package procfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Dir is os.DirFS(root) whose ReadFile costs three system calls (open,
// read, close; a second read for a long file) instead of eight: os.Open
// puts a /proc or /sys file in non-blocking mode and registers it with Go's
// poller (fcntl twice, epoll_ctl twice, fstat), which a file that never
// blocks does not need. The host source reads some forty of them at each
// look (make monitor-cost). Open, ReadDir, ReadLink and Stat are DirFS's.
func Dir(root string) fs.FS { return dirFS{FS: os.DirFS(root), root: root} }

// FS is the machine's /proc.
func FS() fs.FS { return Dir("/proc") }

type dirFS struct {
	fs.FS
	root string
}

// ReadFile reads name whole with plain system calls.
func (d dirFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	p := d.root + "/" + name
	if name == "." {
		p = d.root
	}
	fd, err := openRetry(p)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func openRetry(p string) (int, error) {
	for {
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(d.FS, name)
}

func (d dirFS) ReadLink(name string) (string, error) {
	return fs.ReadLink(d.FS, name)
}

func (d dirFS) Lstat(name string) (fs.FileInfo, error) {
	return fs.Lstat(d.FS, name)
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	return fs.Stat(d.FS, name)
}
