//go:build linux && cgo

package main

// llmtop's threads sleep with a timer slack of a millisecond (the kernel's
// default is 50 µs). The slack is set by a C constructor, which runs before
// the Go runtime starts: its threads, sysmon the first, inherit it from the
// main thread.
//
// While the monitor works (a scrape and a frame, about 2 ms a second)
// sysmon sleeps 20 µs at a time, each sleep stretched by the slack: it
// woke 22 times a second and took 0.55 ms of CPU, a fifth of the monitor's
// cost (/proc/PID/task/*/schedstat, tid by tid). With a millisecond it
// sleeps a millisecond: 8 context switches a second for the whole process
// instead of 25, and 1.92 ms of CPU a second instead of 2.26 (alternated,
// 20 s each, load 3–4 on two cores). sysmon's 20 µs are for handing a
// processor blocked in a system call to another goroutine and preempting
// one that ran 10 ms: nothing of the monitor's waits on a millisecond.
// Every timer of the process may fire up to a millisecond late: the beat,
// the frame, `llmtop bench`'s arrival schedule (its latencies are read
// from timestamps, not timers), the simulator's token pacing. A process
// llmtop starts inherits the slack of the thread that starts it: the
// engine of `llmtop run` is started with the kernel's default
// (sources/launch).

/*
#include <sys/prctl.h>

__attribute__((constructor)) static void llmtop_timer_slack(void) {
	prctl(PR_SET_TIMERSLACK, 1000000UL, 0UL, 0UL, 0UL);
}
*/
import "C"
