package procfs

import (
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// EnginePorts lists the TCP ports, reachable on 127.0.0.1, that this
// machine's inference engines listen on: discovery probes them beside the
// usual ports, so an engine started with --port 50095 is found. Only an
// engine process whose parent is not an engine counts: Ollama's runner,
// TGI's shards and vLLM's engine core listen on ports of their own that
// are not the API. Sorted, each once; nil when /proc says nothing.
func EnginePorts(fsys fs.FS) []int {
	socks := loopbackListeners(fsys)
	if len(socks) == 0 {
		return nil
	}
	engine := map[int]bool{}
	parent := map[int]int{}
	for _, pid := range pidsOf(fsys) {
		raw, err := fs.ReadFile(fsys, strconv.Itoa(pid)+"/cmdline")
		if err != nil || EngineOf(model.SplitCmdline(raw)) == model.Unknown {
			continue
		}
		engine[pid] = true
		parent[pid] = ppid(fsys, pid)
	}
	var out []int
	for pid := range engine {
		if engine[parent[pid]] {
			continue
		}
		dir := strconv.Itoa(pid) + "/fd"
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			target, err := fs.ReadLink(fsys, dir+"/"+e.Name())
			if err != nil {
				continue
			}
			if in, ok := strings.CutPrefix(target, "socket:["); ok {
				if port, ok := socks[strings.TrimSuffix(in, "]")]; ok && !slices.Contains(out, port) {
					out = append(out, port)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// loopbackListeners maps the inode of every listening TCP socket that
// 127.0.0.1 reaches (bound to 127.0.0.1, 0.0.0.0 or ::) to its port.
func loopbackListeners(fsys fs.FS) map[string]int {
	out := map[string]int{}
	reach := map[string]bool{"0100007F": true, "00000000": true, strings.Repeat("0", 32): true}
	eachListener(fsys, func(addr, p, inode string) {
		if port, err := strconv.ParseInt(p, 16, 32); err == nil && port > 0 && reach[addr] {
			out[inode] = int(port)
		}
	})
	return out
}

// ppid is field 4 of /proc/<pid>/stat (0 when unreadable).
func ppid(fsys fs.FS, pid int) int {
	f := statFields(fsys, pid)
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
