// Command llmtop is a terminal monitor for LLM inference servers (vLLM,
// SGLang, TGI, llama.cpp, TensorRT-LLM, Ollama): GPU, engine metrics, logs,
// diagnosis and a quick benchmark on one screen.
//
// This file is the composition root's entry: each subcommand lives in its own
// file and registers itself with root in an init function.
package main

import (
	"errors"
	"fmt"
	"os"

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

func main() {
	if err := root.Execute(); err != nil {
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if err.Error() != "" {
			fmt.Fprintln(os.Stderr, "llmtop:", err)
		}
		os.Exit(code)
	}
}
