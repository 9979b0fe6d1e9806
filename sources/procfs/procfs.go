// Package procfs reads this machine's /proc: which process listens on a
// port, which processes are inference engines, and whether llmtop runs in a
// nested PID namespace (a container) that hides the host's processes. Every
// function takes the /proc tree as an fs.FS (os.DirFS("/proc") in
// production, fstest.MapFS in tests).
package procfs

import (
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// FS is the machine's /proc.
func FS() fs.FS { return os.DirFS("/proc") }

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

// EngineOf labels a serving engine's processes by their command line:
// vllm (also "VLLM::EngineCore", "VLLM::Worker_TP0"), sglang
// ("sglang::scheduler"), TGI's launcher/router/shards, llama-server, the
// Ollama runner, trtllm-serve and tritonserver.
func EngineOf(args []string) model.Engine {
	base := path.Base(args[0])
	switch base {
	case "llama-server":
		return model.LlamaCpp
	case "ollama", "ollama_llama_server":
		return model.Ollama
	case "tritonserver":
		return model.Triton
	case "trtllm-serve":
		return model.TRTLLM
	case "text-generation-launcher", "text-generation-router", "text-generation-server":
		return model.TGI
	}
	for _, a := range args {
		for _, tok := range strings.FieldsFunc(strings.ToLower(a), isCmdSep) {
			switch tok {
			case "vllm":
				return model.VLLM
			case "sglang":
				return model.SGLang
			case "trtllm-serve", "tensorrt_llm":
				return model.TRTLLM
			case "text-generation-server", "text_generation_server", "text-generation-launcher", "text-generation-router":
				return model.TGI
			case "llama-server":
				return model.LlamaCpp
			case "tritonserver":
				return model.Triton
			}
		}
	}
	return model.Unknown
}

// isCmdSep splits "vllm.entrypoints.openai.api_server", "/usr/bin/vllm" and
// "VLLM::EngineCore" into words, but keeps "my_vllm_test" whole.
func isCmdSep(r rune) bool {
	return r == '/' || r == '.' || r == ':' || r == ' ' || r == '='
}
