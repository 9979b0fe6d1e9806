//go:build linux && cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every thread of llmtop, the runtime's sysmon among them, sleeps with a
// millisecond of timer slack: the constructor set it on the main thread
// before the runtime started any other.
func TestThreadsSleepWithAMillisecondOfSlack(t *testing.T) {
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
