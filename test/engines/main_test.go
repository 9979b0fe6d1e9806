//go:build engines

// Package engines tests llmtop against real inference engines: llama.cpp's llama-server and Ollama,
// built from source by scripts/engines.sh and serving a tiny generated model (cmd/tinygguf) on
// loopback ports. Run it with `make test-engines`; by hand:
//
//	scripts/engines.sh build
//	LLMTOP_LLAMA_SERVER=… LLMTOP_OLLAMA=… LLMTOP_BIN=bin/llmtop go test -tags engines -p 1 -v ./test/engines/...
//
// Each engine starts on first use and is stopped (its whole process group) when the package's tests
// end, pass or fail. An engine whose build was UNAVAILABLE (a registry could not be reached) makes
// its tests skip with a loud message; an engine that was built but does not start fails them.
package engines

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/llmtop/llmtop/cmd/tinygguf/gguf"
)

// workDir holds the generated models, the engines' homes and logs; kept when a test failed.
var workDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	workDir, err = os.MkdirTemp("", "llmtop-engines-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		fmt.Fprintf(os.Stderr, "engines: %v: stopping engines\n", s)
		stopAll()
		os.Exit(1)
	}()
	code := m.Run()
	stopAll()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "engines: tests failed; engine logs kept in %s\n", workDir)
	} else {
		os.RemoveAll(workDir)
	}
	return code
}

// writeModel writes a generated model into the work dir once per shape name.
func writeModel(t *testing.T, s gguf.Shape) string {
	t.Helper()
	path := filepath.Join(workDir, s.Name+".gguf")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	f, err := gguf.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := gguf.Write(out, f); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// engineBin returns an engine binary from the environment or skips/fails the test with the reason.
// env is LLMTOP_LLAMA_SERVER or LLMTOP_OLLAMA; scripts/engines.sh sets it, <env>_UNAVAILABLE when the
// build could not fetch its sources, and LLMTOP_ENGINES_REQUIRED=1 so a missing binary fails.
func engineBin(t *testing.T, env string) string {
	t.Helper()
	if why := os.Getenv(env + "_UNAVAILABLE"); why != "" {
		t.Skip(loud(fmt.Sprintf("SKIPPED, ENGINE UNAVAILABLE: %s", why)))
	}
	path := os.Getenv(env)
	if st, err := os.Stat(path); path == "" || err != nil || st.Mode()&0o111 == 0 {
		msg := fmt.Sprintf("%s=%q is not an executable engine binary: run `make test-engines` (scripts/engines.sh builds it)", env, path)
		if os.Getenv("LLMTOP_ENGINES_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(loud(msg))
	}
	return path
}

// llmtopBin returns the llmtop binary under test (bin/llmtop, built by make).
func llmtopBin(t *testing.T) string {
	t.Helper()
	path := os.Getenv("LLMTOP_BIN")
	if path == "" {
		path = "../../bin/llmtop"
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("llmtop binary %s missing: run `make build` first (%v)", abs, err)
	}
	return abs
}

func loud(msg string) string {
	bar := strings.Repeat("!", 78)
	return "\n" + bar + "\n!!! " + msg + "\n" + bar
}
