package host

import (
	"bufio"
	"bytes"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/sources/procfs"
)

// keyValue reads key's value from "Key: 123 kB" / "key 123" lines
// (meminfo, vmstat, memory.events), kB in bytes, without a map or a
// string per line: a look reads a few keys of files of hundreds of lines.
func keyValue(b []byte, key string) (uint64, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		rest, _ = bytes.CutPrefix(rest, []byte(":"))
		if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
			continue // a longer key that starts with this one
		}
		rest = bytes.TrimLeft(rest, " \t")
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		v, err := strconv.ParseUint(string(rest[:end]), 10, 64)
		if err != nil {
			return 0, false
		}
		if bytes.HasPrefix(bytes.TrimLeft(rest[end:], " \t"), []byte("kB")) {
			v *= 1024
		}
		return v, true
	}
	return 0, false
}

// cpuTotals is /proc/stat's first line: all CPUs' busy and total ticks.
func cpuTotals(b []byte) (busy, total uint64, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i >= 8 { // guest and guest_nice are already in user and nice
			break
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, true
}

// onlineCPUs counts the "cpuN" lines of /proc/stat.
func onlineCPUs(b []byte) int {
	n := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) > 3 && string(line[:3]) == "cpu" && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// memCgroup finds a process's memory cgroup in /proc/PID/cgroup: the v2
// unified path ("0::/…"), else v1's memory controller. v1 reports whether
// it is v1 (its files have other names).
func memCgroup(b []byte) (path string, v1, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var unified string
	haveUnified := false
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified, haveUnified = parts[2], true
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return parts[2], true, true
			}
		}
	}
	return unified, false, haveUnified
}

// cgroupFiles names the limit, usage and events files of cgroup v2 and v1.
func cgroupFiles(v1 bool) (limit, usage, events, dir string) {
	if v1 {
		return "memory.limit_in_bytes", "memory.usage_in_bytes", "memory.oom_control", "memory"
	}
	return "memory.max", "memory.current", "memory.events", ""
}

// readCgroup reads the memory limit (ok false when unlimited), usage and
// OOM kills of cgroup path under root (the cgroup mount, fs.FS).
func readCgroup(root fs.FS, path string, v1 bool) (limit, usage, kills uint64, limited bool, err error) {
	lf, uf, ef, dir := cgroupFiles(v1)
	base := strings.Trim(dir+"/"+strings.TrimPrefix(path, "/"), "/")
	if base == "" {
		base = "."
	}
	b, err := fs.ReadFile(root, base+"/"+lf)
	if err != nil {
		return 0, 0, 0, false, err
	}
	s := strings.TrimSpace(string(b))
	if s != "max" {
		v, perr := strconv.ParseUint(s, 10, 64)
		// v1 writes "unlimited" as the largest page-aligned int64.
		limited = perr == nil && v < 1<<62
		limit = v
	}
	if b, err := fs.ReadFile(root, base+"/"+uf); err == nil {
		usage, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := fs.ReadFile(root, base+"/"+ef); err == nil {
		kills, _ = keyValue(b, "oom_kill")
	}
	return limit, usage, kills, limited, nil
}

// modelCache is the Hugging Face hub cache the engine would find an
// org/name model in (its weights, for the weights check).
func modelCache(args []string, environ []byte) string {
	dir, _ := storeDir(engines.HFStore, args, envOf(environ))
	return dir
}

// modelStore is where the engine keeps its models (engines/: the flag, the
// model file's directory, the environment, the default under $HOME), how
// the screen names it, and whether dir is relative to the engine's
// working directory (llama-server -m models/x.gguf).
func modelStore(args []string, environ []byte) (dir, what string, rel bool) {
	st := engines.StoreOf(procfs.EngineOf(args))
	dir, rel = storeDir(st, args, envOf(environ))
	return dir, st.What, rel
}

func storeDir(st engines.ModelStore, args []string, env map[string]string) (dir string, rel bool) {
	for i, a := range args {
		name, v, eq := strings.Cut(a, "=")
		if strings.HasPrefix(name, "--") {
			name = "--" + strings.ReplaceAll(name[2:], "_", "-") // vLLM takes --download_dir too
		}
		for _, f := range st.Flags {
			switch {
			case name == f && eq:
				return v, false
			case name == f && i+1 < len(args):
				return args[i+1], false
			}
		}
	}
	if st.FileSuffix != "" {
		for _, a := range args[min(1, len(args)):] {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
				a = v // --model=/models/x.gguf
			}
			if strings.HasSuffix(a, st.FileSuffix) && !strings.HasPrefix(a, "-") {
				return path.Dir(a), !path.IsAbs(a)
			}
		}
	}
	for _, e := range st.Env {
		if v := env[e.Var]; v != "" {
			return path.Join(strings.TrimRight(v, "/"), e.Sub), false
		}
	}
	if h := env["HOME"]; h != "" && st.Home != "" {
		return path.Join(strings.TrimRight(h, "/"), st.Home), false
	}
	return "", false
}

// envOf reads a /proc/PID/environ.
func envOf(environ []byte) map[string]string {
	env := map[string]string{}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return env
}
