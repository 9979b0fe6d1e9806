//go:build linux

package launch

import (
	"os/exec"
	"runtime"
	"syscall"
)

// defaultSlack is the kernel's timer slack (init's, inherited by every
// process that does not change it).
const defaultSlack = 50_000

// prctl's PR_SET_TIMERSLACK and PR_GET_TIMERSLACK (linux/prctl.h).
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// startPlain starts cmd with the kernel's default timer slack. llmtop's own
// threads sleep with a millisecond of slack (cmd/llmtop), and a child
// inherits that of the thread that starts it: an engine started from one
// would have its timers (its scheduler's, its event loop's) fire up to a
// millisecond late. The thread is held for the start, set to the default,
// and set back after.
func startPlain(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	was, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 || int(was) < 0 {
		return cmd.Start()
	}
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, defaultSlack, 0)
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, was, 0)
	return cmd.Start()
}
