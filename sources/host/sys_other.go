//go:build !linux

package host

import (
	"errors"
	"os/exec"
)

var errNotLinux = errors.New("only Linux has /proc, cgroups and /dev/kmsg")

func statfs(string) (uint64, uint64, error) { return 0, 0, errNotLinux }

func kmsgReader(string) func() ([]string, error) {
	return func() ([]string, error) { return nil, errNotLinux }
}

func setDeathSignal(*exec.Cmd) {}
