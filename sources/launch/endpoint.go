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

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// engineDefaults is where an engine listens when its command line does
// not say: its file's Process in engines/.
type engineDefaults struct {
	engine    model.Engine
	port      int
	host      string   // default bind address
	portFlags []string // the port flag and its aliases
	hostFlags []string
	envHost   string // Ollama: OLLAMA_HOST
}

// simDefaults is llmtop's own simulated vLLM (llmtop sim), which binds the
// loopback.
var simDefaults = engineDefaults{engine: model.VLLM, port: 8000, host: "127.0.0.1", portFlags: []string{"--port"}, hostFlags: []string{"--host"}}

func defaultsOf(s *engines.Spec) engineDefaults {
	d := engineDefaults{engine: s.ID, host: s.Process.Host, portFlags: s.Process.PortFlags, hostFlags: s.Process.HostFlags, envHost: s.Process.HostEnv}
	if len(s.Ports) > 0 {
		d.port = s.Ports[0]
	}
	return d
}

// defaultsFor recognises the engine a command line starts: by the program's
// name, its subcommand or the Python module it runs (engines/: each
// one's Process.Serves).
func defaultsFor(args []string) (engineDefaults, bool) {
	if len(args) == 0 {
		return engineDefaults{}, false
	}
	prog := filepath.Base(args[0])
	sub := ""
	if len(args) > 1 {
		sub = args[1]
	}
	if prog == "llmtop" && sub == "sim" {
		return simDefaults, true
	}
	for _, s := range engines.All() {
		for _, serve := range s.Process.Serves {
			if serves(serve, prog, sub, args) {
				return defaultsOf(s), true
			}
		}
	}
	return engineDefaults{}, false
}

// serves reports whether a command line matches one of an engine's
// Process.Serves: "prog", "prog*" (a prefix), "prog sub", or "-m pkg"
// (an interpreter running one of pkg's modules).
func serves(serve, prog, sub string, args []string) bool {
	if pkg, ok := strings.CutPrefix(serve, "-m "); ok {
		if !strings.HasPrefix(prog, "python") {
			return false
		}
		for i, a := range args {
			if a == "-m" && i+1 < len(args) && strings.HasPrefix(args[i+1], pkg+".") {
				return true
			}
		}
		return false
	}
	name, want, hasSub := strings.Cut(serve, " ")
	if hasSub && sub != want {
		return false
	}
	if p, ok := strings.CutSuffix(name, "*"); ok {
		return strings.HasPrefix(prog, p)
	}
	return prog == name
}

// knownServes lists the command lines llmtop run recognises, for its
// error.
func knownServes() string {
	var out []string
	for _, s := range engines.All() {
		for _, serve := range s.Process.Serves {
			if pkg, ok := strings.CutPrefix(serve, "-m "); ok {
				serve = "python -m " + pkg
			}
			out = append(out, strings.TrimSuffix(serve, "*"))
		}
	}
	return strings.Join(append(out, "llmtop sim"), ", ")
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
		return "", "", fmt.Errorf("cannot tell from the command line where %q will listen (known: %s): give it with --url", name, knownServes())
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
