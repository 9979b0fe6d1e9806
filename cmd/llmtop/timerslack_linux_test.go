//go:build linux && cgo

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every thread of llmtop, the runtime's sysmon among them, sleeps with a
// millisecond of timer slack: the constructor set it on the main thread
// before the runtime started any other.
//
// The threads are read in a process of their own (this test binary run
// again for this test alone): in the package's full run another test's
// engine start holds one thread at the kernel's default for its fork
// (sources/launch), which this check would catch mid-way.
func TestThreadsSleepWithAMillisecondOfSlack(t *testing.T) {
	if os.Getenv("LLMTOP_SLACK_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestThreadsSleepWithAMillisecondOfSlack$", "-test.v")
		cmd.Env = append(os.Environ(), "LLMTOP_SLACK_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") && !strings.Contains(string(out), "--- SKIP") {
			t.Fatalf("in a process of its own: %v\n%s", err, out)
		}
		if strings.Contains(string(out), "--- SKIP") {
			t.Skip(strings.TrimSpace(string(out)))
		}
		return
	}
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(tasks) < 2 {
		t.Fatalf("threads: %v %v", tasks, err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", filepath.Base(task), "timerslack_ns"))
		if os.IsNotExist(err) {
			t.Skip("this kernel has no timerslack_ns (before Linux 4.6)")
		}
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.TrimSpace(string(b)); s != "1000000" {
			t.Errorf("thread %s sleeps with %s ns of slack, want 1000000", filepath.Base(task), s)
		}
	}
}
