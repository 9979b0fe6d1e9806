//go:build linux && cgo

package main

// llmtop's threads sleep with a timer slack of 4 ms in the monitor and of
// a millisecond where timers pace what others measure (`llmtop sim`, the
// demo's simulator, bench, tune, probe); the kernel's default is 50 µs.
// The slack is set by a C constructor, which runs before the Go runtime
// starts: its threads, sysmon the first, inherit it from the main thread.
// The constructor tells the two apart by the command line (a word of it
// naming one of those commands; /proc/self/cmdline not readable: a
// millisecond).
//
// While the monitor works (a scrape and a frame, about 2 ms a second)
// sysmon sleeps 20 µs at a time, each sleep stretched by the slack: it
// woke 22 times a second and took 0.55 ms of CPU, a fifth of the monitor's
// cost (/proc/PID/task/*/schedstat, tid by tid). With a millisecond it
// sleeps a millisecond: 8 context switches a second for the whole process
// instead of 25, and 1.92 ms of CPU a second instead of 2.26 (alternated,
// 20 s each, load 3–4 on two cores). With 4 ms a scrape's burst holds one
// or two of its sleeps instead of three to five: 7 context switches a
// second instead of 13.5, 0.179–0.181 % of a core instead of 0.186–0.202 %
// (side by side in one run, make monitor-cost's setup). sysmon's 20 µs are
// for handing a processor blocked in a system call to another goroutine
// and preempting one that ran 10 ms: nothing of the monitor's waits on
// 4 ms (a key is read by its own thread; a blocked call's hand-off comes
// at most 4 ms later). Every timer of the process may fire up to the
// slack late: in the monitor the beat and the frame, which are a second
// and 50 ms apart; a benchmark started from the monitor runs closed-loop
// streams (no arrival timers) and reads its latencies from timestamps.
// A process llmtop starts inherits the slack of the thread that starts it:
// the engine of `llmtop run` is started with the kernel's default
// (sources/launch).

/*
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

// llmtop_slack_ns is the timer slack for the command line cmd[0:n] (its
// words NUL-terminated, as /proc/self/cmdline has them): a millisecond when
// a word after the program's name is a command whose timers pace what is
// measured, else 4 ms.
static unsigned long llmtop_slack_ns(const char *cmd, long n) {
	static const char *precise[] = {"sim", "demo", "bench", "tune", "probe", 0};
	long i = 0;
	while (i < n && cmd[i]) i++; // the program's name
	for (i++; i < n;) {
		const char *w = cmd + i;
		long l = strnlen(w, n - i);
		for (int k = 0; precise[k]; k++) {
			if ((long)strlen(precise[k]) == l && memcmp(w, precise[k], l) == 0) return 1000000UL;
		}
		i += l + 1;
	}
	return 4000000UL;
}

__attribute__((constructor)) static void llmtop_timer_slack(void) {
	char buf[4096];
	long n = 0;
	unsigned long slack = 1000000UL;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r;
		while (n < (long)sizeof buf && (r = read(fd, buf + n, sizeof buf - n)) > 0) n += r;
		close(fd);
		if (n > 0) slack = llmtop_slack_ns(buf, n);
	}
	prctl(PR_SET_TIMERSLACK, slack, 0UL, 0UL, 0UL);
}
*/
import "C"

import "unsafe"

// slackFor is the constructor's slack for a command line as
// /proc/self/cmdline has it (tests).
func slackFor(cmdline string) uint64 {
	if cmdline == "" {
		return 0
	}
	c := C.CString(cmdline) // its NULs inside are kept: n says where it ends
	defer C.free(unsafe.Pointer(c))
	return uint64(C.llmtop_slack_ns(c, C.long(len(cmdline))))
}
