//go:build !linux

package launch

import "os/exec"

// startPlain starts cmd (timer slack is Linux's: see slack_linux.go).
func startPlain(cmd *exec.Cmd) error { return cmd.Start() }
