//go:build linux && cgo

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every thread of llmtop, the runtime's sysmon among them, sleeps with the
// slack the constructor set on the main thread before the runtime started
// any other: 4 ms in the monitor, a millisecond where a command's timers
// pace what is measured (here this test binary with "sim" among its words).
//
// The threads are read in a process of their own (this test binary run
// again for this test alone): in the package's full run another test's
// engine start holds one thread at the kernel's default for its fork
// (sources/launch), which this check would catch mid-way.
func TestThreadsSleepWithTheMonitorsSlack(t *testing.T) {
	if want := os.Getenv("LLMTOP_SLACK_CHILD"); want != "" {
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
			if s := strings.TrimSpace(string(b)); s != want {
				t.Errorf("thread %s sleeps with %s ns of slack, want %s", filepath.Base(task), s, want)
			}
		}
		return
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{{nil, "4000000"}, {[]string{"sim"}, "1000000"}} {
		args := append([]string{"-test.run", "^TestThreadsSleepWithTheMonitorsSlack$", "-test.v"}, c.extra...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "LLMTOP_SLACK_CHILD="+c.want)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") && !strings.Contains(string(out), "--- SKIP") {
			t.Fatalf("%q in a process of its own: %v\n%s", c.extra, err, out)
		}
		if strings.Contains(string(out), "--- SKIP") {
			t.Skip(strings.TrimSpace(string(out)))
		}
	}
}

// The monitor's faces sleep with 4 ms; a command whose timers pace what is
// measured, named anywhere after the program's name, with a millisecond.
func TestSlackByCommand(t *testing.T) {
	for cmdline, want := range map[string]uint64{
		"llmtop\x00http://127.0.0.1:8000\x00": 4000000,
		"llmtop\x00":                          4000000,
		"/usr/bin/llmtop\x00--no-gpu\x00--log\x00x.log\x00URL\x00": 4000000,
		"llmtop\x00replay\x00day.rec\x00":                          4000000,
		"llmtop\x00run\x00--\x00vllm\x00serve\x00m\x00":            4000000,
		"llmtop\x00sim\x00--port\x000\x00":                         1000000,
		"llmtop\x00--no-color\x00demo\x00":                         1000000,
		"llmtop\x00bench\x00http://x\x00":                          1000000,
		"llmtop\x00tune\x00--\x00vllm\x00":                         1000000,
		"llmtop\x00probe\x00http://x\x00":                          1000000,
		"llmtop\x00simulated\x00":                                  4000000, // a word, not a prefix
		"llmtop\x00sim":                                            1000000, // the last word without its NUL
		"sim\x00":                                                  4000000, // the program's own name does not count
	} {
		if got := slackFor(cmdline); got != want {
			t.Errorf("slack for %q = %d, want %d", cmdline, got, want)
		}
	}
}
