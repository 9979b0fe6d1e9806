// Package launch starts and restarts an inference engine for `llmtop run`
// and `llmtop tune`: the engine runs in its own session (Ctrl+C and a lost
// terminal never reach it) with its output appended to a log file, its
// endpoint is read from its command line, and a finding's flag change is
// turned into a new command line with the exact diff.
package launch

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// engineDefaults is where each engine listens when its command line does
// not say: the flag names and defaults of ../shared/reference/ENGINES.md.
type engineDefaults struct {
	engine    model.Engine
	port      int
	host      string   // default bind address
	portFlags []string // the port flag and its aliases
	hostFlags []string
	envHost   string // Ollama: OLLAMA_HOST
}

var (
	vllmDefaults  = engineDefaults{engine: model.VLLM, port: 8000, host: "0.0.0.0", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}
	simDefaults   = engineDefaults{engine: model.VLLM, port: 8000, host: "127.0.0.1", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}
	sglangDefault = engineDefaults{engine: model.SGLang, port: 30000, host: "127.0.0.1", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}
	llamaDefaults = engineDefaults{engine: model.LlamaCpp, port: 8080, host: "127.0.0.1", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}
	tgiDefaults   = engineDefaults{engine: model.TGI, port: 3000, host: "0.0.0.0", portFlags: []string{"--port", "-p"}, hostFlags: []string{"--hostname"}}
	trtDefaults   = engineDefaults{engine: model.TRTLLM, port: 8000, host: "localhost", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}
	ollamaDefault = engineDefaults{engine: model.Ollama, port: 11434, host: "127.0.0.1", envHost: "OLLAMA_HOST"}
)

// defaultsFor recognises the engine a command line starts: by the program's
// name, its subcommand or the Python module it runs.
func defaultsFor(args []string) (engineDefaults, bool) {
	if len(args) == 0 {
		return engineDefaults{}, false
	}
	prog := filepath.Base(args[0])
	sub := ""
	if len(args) > 1 {
		sub = args[1]
	}
	switch {
	case prog == "llmtop" && sub == "sim":
		return simDefaults, true
	case prog == "vllm":
		return vllmDefaults, true
	case strings.HasPrefix(prog, "llama-server"):
		return llamaDefaults, true
	case prog == "ollama" && sub == "serve":
		return ollamaDefault, true
	case prog == "text-generation-launcher":
		return tgiDefaults, true
	case prog == "trtllm-serve":
		return trtDefaults, true
	case strings.HasPrefix(prog, "python"):
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				switch m := args[i+1]; {
				case strings.HasPrefix(m, "vllm."):
					return vllmDefaults, true
				case strings.HasPrefix(m, "sglang."):
					return sglangDefault, true
				}
			}
		}
	}
	return engineDefaults{}, false
}

// Endpoint reads where the engine that args start will answer, as a URL on
// this machine, and which engine it is. env is the command's environment
// (Ollama reads OLLAMA_HOST from it).
func Endpoint(args, env []string) (string, model.Engine, error) {
	d, ok := defaultsFor(args)
	if !ok {
		name := "(empty)"
		if len(args) > 0 {
			name = filepath.Base(args[0])
		}
		return "", "", fmt.Errorf("cannot tell from the command line where %q will listen (known: vllm serve, python -m vllm/sglang, llama-server, ollama serve, text-generation-launcher, trtllm-serve, llmtop sim): give it with --url", name)
	}
	host, port := d.host, d.port
	if d.envHost != "" {
		if v, ok := lookupEnv(env, d.envHost); ok && v != "" {
			h, p, err := splitHostPort(v, d.port)
			if err != nil {
				return "", "", fmt.Errorf("%s=%q: %v", d.envHost, v, err)
			}
			host, port = h, p
		}
	}
	if v, ok := flagValue(args, d.portFlags); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 65535 {
			return "", "", fmt.Errorf("%s %q: want a port number from 1 to 65535 (llmtop must know the port: 0 picks one it cannot see)", d.portFlags[0], v)
		}
		port = n
	}
	if v, ok := flagValue(args, d.hostFlags); ok {
		host = v
	}
	return "http://" + net.JoinHostPort(connectHost(host), strconv.Itoa(port)), d.engine, nil
}

// connectHost is the address to reach a server bound to host from this
// machine: a wildcard bind is reached on the loopback.
func connectHost(host string) string {
	switch host {
	case "", "0.0.0.0", "::", "[::]", "*":
		return "127.0.0.1"
	}
	return strings.Trim(host, "[]")
}

func splitHostPort(v string, defPort int) (string, int, error) {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "http://"), "https://")
	v = strings.TrimRight(v, "/")
	h, p, err := net.SplitHostPort(v)
	if err != nil {
		return v, defPort, nil // a host alone
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q is not a number", p)
	}
	return h, n, nil
}

func lookupEnv(env []string, name string) (string, bool) {
	if env == nil {
		return os.LookupEnv(name)
	}
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return os.LookupEnv(name)
}

// flagValue is the last value given to one of names ("--port 8001" or
// "--port=8001"): the engines' argument parsers let the last one win.
func flagValue(args []string, names []string) (string, bool) {
	val, found := "", false
	for i := 1; i < len(args); i++ {
		for _, n := range names {
			switch {
			case args[i] == n && i+1 < len(args):
				val, found = args[i+1], true
			case strings.HasPrefix(args[i], n+"="):
				val, found = strings.TrimPrefix(args[i], n+"="), true
			}
		}
	}
	return val, found
}
