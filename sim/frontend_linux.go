package sim

import (
	"syscall"
	"unsafe"
)

// nameThread sets the calling OS thread's name (prctl PR_SET_NAME, at
// most 15 bytes), as Python's threading names do not but setproctitle and
// native engines' threads do: top -H and /proc/PID/task/TID/comm show it.
func nameThread(name string) {
	b := append([]byte(name), 0)
	const prSetName = 15
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetName, uintptr(unsafe.Pointer(&b[0])), 0)
}
