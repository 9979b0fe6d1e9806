// Package procfs reads this machine's /proc: which process listens on a
// port, which processes are inference engines, and whether llmtop runs in a
// nested PID namespace (a container) that hides the host's processes. Every
// function takes the /proc tree as an fs.FS (Dir("/proc") in
// production, fstest.MapFS in tests).
package procfs

import (
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Nested reads NSpid from self/status: one PID per namespace
// level, so more than one means we are inside a container's PID namespace: 1
// nested, 0 not, -1 unknown (no NSpid line, or no /proc).
func Nested(fsys fs.FS) int {
	b, err := fs.ReadFile(fsys, "self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			if len(strings.Fields(rest)) > 1 {
				return 1
			}
			return 0
		}
	}
	return -1
}

// EngineOf labels a serving engine's processes by what their command line
// runs: the program (llama-server, the Ollama runner, trtllm-serve,
// tritonserver, TGI's launcher/router/shards, the vllm and sglang CLIs), a
// process title ("VLLM::EngineCore", "sglang::scheduler"), or the module
// or script an interpreter runs ("python3 -m vllm.entrypoints…", "python3
// /usr/bin/vllm serve"). A word in an argument (a file name such as
// vllm.txt, "tail -F vllm.log", llmtop's own --log) is not an engine.
func EngineOf(args []string) model.Engine {
	if len(args) == 0 {
		return model.Unknown
	}
	base := path.Base(args[0])
	if e := programEngine(base); e != model.Unknown {
		return e
	}
	if strings.Contains(args[0], "::") { // a process title
		for _, tok := range strings.FieldsFunc(strings.ToLower(args[0]), isCmdSep) {
			if e := programEngine(tok); e != model.Unknown {
				return e
			}
		}
		return model.Unknown
	}
	if !interpreter(base) {
		return model.Unknown
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			mod, _, _ := strings.Cut(args[i+1], ".")
			return moduleEngine(mod)
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			mod, _, _ := strings.Cut(a[2:], ".")
			return moduleEngine(mod)
		case a == "run" && base == "uv", strings.HasPrefix(a, "-"):
			continue // uv run …, the interpreter's own flags
		}
		// the script it runs, or the program uv runs
		return programEngine(strings.TrimSuffix(path.Base(a), ".py"))
	}
	return model.Unknown
}

// programEngine is the engine a program (or a process title's word) is:
// engines/, each one's Process.Programs.
func programEngine(name string) model.Engine { return engines.ByProgram(name) }

// moduleEngine is the engine a Python package is (Process.Modules).
func moduleEngine(pkg string) model.Engine { return engines.ByModule(pkg) }

// interpreter reports whether a program runs another one named in its
// arguments (python3.11, uv run, torchrun).
func interpreter(base string) bool {
	return strings.HasPrefix(base, "python") || base == "pypy3" || base == "uv" || base == "torchrun"
}

// portOf is the port a command line names (--port N, --port=N), 0 when it
// names none.
func portOf(args []string) int {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--port=")
		if !ok && a == "--port" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 0
}

// servesOn reports whether an engine process can be the one for port: the
// port its command line names, else its engine's default ports (kept when
// the engine has none known).
func servesOn(args []string, eng model.Engine, port int) bool {
	if p := portOf(args); p != 0 {
		return p == port
	}
	s := engines.Of(eng)
	if s == nil || len(s.Ports) == 0 {
		return true
	}
	for _, p := range s.Ports {
		if p == port {
			return true
		}
	}
	return false
}

// isCmdSep splits "vllm.entrypoints.openai.api_server", "/usr/bin/vllm" and
// "VLLM::EngineCore" into words, but keeps "my_vllm_test" whole.
func isCmdSep(r rune) bool {
	return r == '/' || r == '.' || r == ':' || r == ' ' || r == '='
}
