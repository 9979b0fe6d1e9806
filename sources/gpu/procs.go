package gpu

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// ProcFS is the /proc the process table reads: os.DirFS("/proc") in
// production, a fstest.MapFS in tests.
func ProcFS() fs.FS { return os.DirFS("/proc") }

// procTable maps the PIDs NVML reports to processes in /proc.
//
// The NVIDIA driver does not know PID namespaces: NVML always reports PIDs
// as the host sees them. Inside a container without --pid=host those PIDs
// mean nothing (or, by chance, another process), so when llmtop runs in a
// nested PID namespace every GPU process is Foreign, and the pane says how to
// fix it instead of showing an empty or wrong table.
type procTable struct {
	fsys   fs.FS
	nested int // 1 nested PID namespace, 0 not, -1 unknown (no NSpid line)
}

func newProcTable(fsys fs.FS) *procTable {
	return &procTable{fsys: fsys, nested: nestedPIDNamespace(fsys)}
}

// nestedPIDNamespace reads NSpid from self/status: one PID per namespace
// level, so more than one means we are inside a container's PID namespace.
func nestedPIDNamespace(fsys fs.FS) int {
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

// process resolves one NVML PID.
func (t *procTable) process(pid int) model.GPUProcess {
	p := model.GPUProcess{PID: pid}
	if t.nested == 1 {
		p.Foreign = true
		return p
	}
	raw, err := fs.ReadFile(t.fsys, strconv.Itoa(pid)+"/cmdline")
	if err != nil {
		// Outside a container a missing PID has exited between the NVML
		// call and now; when we cannot tell, it is most likely foreign.
		if errors.Is(err, fs.ErrPermission) {
			p.Name = "(no permission)"
		} else if t.nested == -1 {
			p.Foreign = true
		} else {
			p.Name = "(exited)"
		}
		return p
	}
	args := splitCmdline(raw)
	if len(args) == 0 {
		// Kernel threads and zombies have an empty cmdline; comm still names them.
		if c, err := fs.ReadFile(t.fsys, strconv.Itoa(pid)+"/comm"); err == nil {
			p.Name = strings.TrimSpace(string(c))
		}
		return p
	}
	p.Name = path.Base(args[0])
	p.Cmdline = strings.Join(args, " ")
	p.Engine = string(engineOf(args))
	return p
}

// splitCmdline splits /proc/<pid>/cmdline (NUL-separated argv). Processes
// that rewrite their title (setproctitle: "VLLM::EngineCore",
// "sglang::scheduler") leave one space-separated string padded with NULs or
// spaces; that is split on spaces.
func splitCmdline(raw []byte) []string {
	raw = bytes.TrimRight(raw, "\x00 ")
	if len(raw) == 0 {
		return nil
	}
	if bytes.IndexByte(raw, 0) < 0 {
		return strings.Fields(string(raw))
	}
	parts := strings.Split(string(raw), "\x00")
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// engineOf labels a serving engine's processes by their command line:
// vllm (also "VLLM::EngineCore", "VLLM::Worker_TP0"), sglang
// ("sglang::scheduler"), TGI's launcher/router/shards, llama-server, the
// Ollama runner, trtllm-serve and tritonserver.
func engineOf(args []string) model.Engine {
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

// foreignNote says why processes are missing and how to see them.
func foreignNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d GPU process(es) belong to another PID namespace: run llmtop with --pid=host (docker) or hostPID: true (Kubernetes) to see which", n)
}
