// Package logstest holds helpers for tests of log commands: which
// processes are still alive after a follower was told to stop.
package logstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Running lists the live processes ("PID: command line") whose command
// line, arguments joined by spaces, contains want followed by a space or
// its end: "sleep 98765" is not found in "sleep 987655", another test's
// process. Zombies have an empty command line and do not count: they hold
// nothing but a process table entry. The test is skipped where there is no
// /proc.
func Running(t testing.TB, want string) []string {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		if line := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")); holds(line, want) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+line)
		}
	}
	return found
}

// holds reports whether want occurs in line followed by a space or the end.
func holds(line, want string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], want)
		if j < 0 {
			return false
		}
		end := i + j + len(want)
		if end == len(line) || line[end] == ' ' {
			return true
		}
		i += j + 1
	}
}
