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

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerSlack = 29

// startPlain starts cmd with the kernel's default timer slack. llmtop's own
// threads sleep with a millisecond of slack (cmd/llmtop), and a child
// inherits its parent thread's: an engine started from one would have its
// timers (its scheduler's, its event loop's) fire up to a millisecond late.
// The child is started from a thread of its own, set back to the default,
// which ends with it (a goroutine that exits locked takes its thread).
func startPlain(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is not reused
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, defaultSlack, 0)
		errc <- cmd.Start()
	}()
	return <-errc
}
