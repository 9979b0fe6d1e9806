package host

import (
	"errors"
	"os/exec"
	"syscall"
)

// setDeathSignal ends a helper process (journalctl -k -f) with llmtop.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// statfs reports the free (available to unprivileged users) and total
// bytes of the file system holding p.
func statfs(p string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// kmsgReader follows the kernel log from now on: the first call opens it
// at its end (a kill before llmtop started is not this run's), later calls
// return the records written since. It reads with raw system calls: an
// os.File on /dev/kmsg would park in the poller instead of answering
// EAGAIN at the end.
func kmsgReader(dev string) func() ([]string, error) {
	fd := -1
	var openErr error
	buf := make([]byte, 8192)
	return func() ([]string, error) {
		if openErr != nil {
			return nil, openErr
		}
		if fd < 0 {
			f, err := syscall.Open(dev, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
			if err != nil {
				openErr = errors.New(dev + ": " + err.Error() + " (it needs root or CAP_SYSLOG; kernel.dmesg_restrict)")
				return nil, openErr
			}
			fd = f
			if _, err := syscall.Seek(fd, 0, 2); err != nil { // SEEK_END
				return nil, nil
			}
			return nil, nil
		}
		var out []string
		for range 4096 {
			n, err := syscall.Read(fd, buf)
			switch {
			case err == syscall.EPIPE: // records overwritten before we read them: go on
				continue
			case err != nil || n <= 0:
				return out, nil
			}
			out = append(out, string(buf[:n]))
		}
		return out, nil
	}
}
