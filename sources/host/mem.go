package host

import (
	"bufio"
	"bytes"
	"io/fs"
	"strconv"
	"strings"
)

// keyValues reads "Key: 123 kB" / "key 123" lines (meminfo, vmstat,
// memory.events) into a map of the numbers, kB converted to bytes.
func keyValues(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 2 && f[2] == "kB" {
			v *= 1024
		}
		out[strings.TrimSuffix(f[0], ":")] = v
	}
	return out
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
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
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
		kills = keyValues(b)["oom_kill"]
	}
	return limit, usage, kills, limited, nil
}

// modelCache is where the engine keeps downloaded weights: --download-dir
// in its arguments, else HF_HUB_CACHE, HF_HOME/hub, $HOME/.cache/huggingface/hub
// from its environment.
func modelCache(args []string, environ []byte) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--download-dir="); ok {
			return v
		}
		if (a == "--download-dir" || a == "--download_dir") && i+1 < len(args) {
			return args[i+1]
		}
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	switch {
	case env["HF_HUB_CACHE"] != "":
		return env["HF_HUB_CACHE"]
	case env["HUGGINGFACE_HUB_CACHE"] != "":
		return env["HUGGINGFACE_HUB_CACHE"]
	case env["HF_HOME"] != "":
		return strings.TrimRight(env["HF_HOME"], "/") + "/hub"
	case env["HOME"] != "":
		return strings.TrimRight(env["HOME"], "/") + "/.cache/huggingface/hub"
	}
	return ""
}
