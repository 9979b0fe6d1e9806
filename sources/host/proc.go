package host

import (
	"bytes"
	"io/fs"
	"strconv"
	"strings"
)

// maxProcs bounds the processes one look follows (an engine with a few
// hundred workers is the most llmtop expects; a fork bomb must not cost a
// second of CPU per look), maxThreads the threads read per process.
const (
	maxProcs   = 256
	maxThreads = 2048
)

// stat is what llmtop reads from /proc/PID/stat (or a task's).
type stat struct {
	comm       string
	ppid       int
	ticks      uint64 // utime + stime, clock ticks
	threads    int
	rssPages   uint64
	startTicks uint64
}

// parseStat reads a stat line. The command name (field 2) may hold spaces
// and parentheses: the fields are counted after its last ')'.
func parseStat(b []byte) (stat, bool) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 {
		return stat{}, false
	}
	u := func(n int) uint64 { v, _ := strconv.ParseUint(f[n-3], 10, 64); return v }
	ppid, _ := strconv.Atoi(f[1])
	return stat{comm: string(b[open+1 : end]), ppid: ppid, ticks: u(14) + u(15),
		threads: int(u(20)), startTicks: u(22), rssPages: u(24)}, true
}

// schedstat is /proc/PID/task/TID/schedstat: nanoseconds on a CPU, and
// nanoseconds runnable but waiting for one.
func parseSchedstat(b []byte) (run, wait uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false
	}
	r, err1 := strconv.ParseUint(f[0], 10, 64)
	w, err2 := strconv.ParseUint(f[1], 10, 64)
	return r, w, err1 == nil && err2 == nil
}

// tree lists root and its descendants, root first, at most maxProcs. It
// reads each thread's children file (CONFIG_PROC_CHILDREN); without them
// it falls back to every process's PPID.
func tree(fsys fs.FS, root int) []int {
	out := []int{root}
	seen := map[int]bool{root: true}
	viaChildren := true
	for i := 0; i < len(out) && len(out) < maxProcs; i++ {
		kids, ok := children(fsys, out[i])
		if !ok {
			viaChildren = false
			break
		}
		for _, k := range kids {
			if !seen[k] && len(out) < maxProcs {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	if viaChildren {
		return out
	}
	return treeByPPID(fsys, root)
}

func children(fsys fs.FS, pid int) ([]int, bool) {
	dir := strconv.Itoa(pid) + "/task"
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, false
	}
	var out []int
	any := false
	for _, e := range ents {
		b, err := fs.ReadFile(fsys, dir+"/"+e.Name()+"/children")
		if err != nil {
			continue
		}
		any = true
		for _, s := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(s); err == nil {
				out = append(out, k)
			}
		}
	}
	return out, any
}

func treeByPPID(fsys fs.FS, root int) []int {
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return []int{root}
	}
	parent := map[int]int{}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if n++; n > 8*maxProcs {
			break
		}
		b, err := fs.ReadFile(fsys, e.Name()+"/stat")
		if err != nil {
			continue
		}
		if st, ok := parseStat(b); ok {
			parent[pid] = st.ppid
		}
	}
	out := []int{root}
	in := map[int]bool{root: true}
	for grew := true; grew && len(out) < maxProcs; {
		grew = false
		for pid, pp := range parent {
			if in[pp] && !in[pid] && len(out) < maxProcs {
				in[pid] = true
				out = append(out, pid)
				grew = true
			}
		}
	}
	return out
}
