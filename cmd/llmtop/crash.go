package main

import (
	"runtime/debug"
	"syscall"
)

// exitFailure is the exit status of an error that is neither a verdict
// (1 warnings, 2 critical, 3 nothing answered) nor a usage error (64): a
// file llmtop cannot write, a server it cannot listen on… 70 is sysexits'
// EX_SOFTWARE.
const exitFailure = 70

// crashExit makes a crash of the Go runtime (out of memory, a bug) end
// llmtop by SIGABRT (exit status 134 in a shell) instead of the runtime's
// exit status 2, which diagnose and probe document as "critical findings":
// a monitor that ran out of memory must not read as a critical verdict.
// No core file is written (it could hold an API key).
func crashExit() {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	debug.SetTraceback("crash")
}
