// Command llmtop is a terminal monitor for LLM inference servers (vLLM,
// SGLang, TGI, llama.cpp, TensorRT-LLM, Ollama): GPU, engine metrics, logs,
// diagnosis and a quick benchmark on one screen.
//
// This file is the composition root's entry: each subcommand lives in its own
// file and registers itself with root in an init function.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

var root = &cobra.Command{
	Use:           "llmtop [URL...]",
	Short:         "Monitor LLM inference servers: GPU, engine metrics, logs, diagnosis, quick benchmark",
	Version:       version,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// exitError carries a specific exit code out of a command (diagnose uses
// 1/2/3 for warnings/critical/unreachable).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitUsage is the exit status of a command line llmtop cannot run: a flag,
// an argument or a flag's value it does not take. 1, 2 and 3 are the
// commands' verdicts (warnings, critical findings, nothing answered), so a
// typo must not read as "warnings" to a script; 64 is sysexits' EX_USAGE.
const exitUsage = 64

// isUsage reports whether err is a usage error.
func isUsage(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.code == exitUsage
}

// usageErr is an error in the command line (exit status exitUsage).
func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// markUsage makes cobra's own command-line errors (an unknown flag, a
// flag's value it cannot parse, the wrong number of arguments) usage
// errors, in c and every command under it.
func markUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: exitUsage, err: err} })
	if args := c.Args; args != nil {
		c.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsage(sub)
	}
}

func main() {
	crashExit()
	limitMemoryToRlimit()
	markUsage(root)
	root.SetOut(stdout)
	ctx, stop := signalContext()
	err := root.ExecuteContext(ctx)
	stop()
	if werr := stdout.Err(); werr != nil && !isUsage(err) {
		// The output (a report, a document, a verdict's details) went
		// nowhere: whatever the command decided, the caller got nothing.
		err = &exitError{code: exitFailure, err: fmt.Errorf("writing the output: %w", werr)}
	}
	if err != nil {
		code := exitFailure
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" {
			// An error can quote a URL, a config line or an endpoint's
			// answer: cleaned and redacted like every other output.
			fmt.Fprintln(safeOut(os.Stderr), "llmtop:", err)
		}
		os.Exit(code)
	}
}

// signalContext returns the commands' context: SIGINT, SIGTERM and SIGHUP
// (a closed terminal, tmux pane or ssh session) cancel it, so a command
// ends as it does when it is done: the monitor restores the terminal,
// diagnose reports what it saw, and log commands are stopped and waited
// for. Whatever the command does, llmtop exits at most 10 s after the
// signal (status 128+signal).
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-ctx.Done():
			return
		}
		signal.Stop(sigs) // the next one gets the default (exit) unless a command catches it
		cancel()
		time.Sleep(10 * time.Second)
		fmt.Fprintf(os.Stderr, "llmtop: still running 10 s after %v; exiting\n", sig)
		code := 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		os.Exit(code)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}
