package host

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/llmtop/llmtop/model"
)

// fakeProc is a /proc with a vLLM API server (PID 100, holding the port)
// and its EngineCore child (PID 200), at one moment. ticks are utime per
// process and thread; run/wait the threads' schedstat in ns.
type fakeProc struct {
	apiTicks, coreTicks     uint64
	busyRun, busyWait, idle uint64
	swapIn, swapOut         uint64
	cpuBusy, cpuTotal       uint64
}

func statLine(pid, ppid int, comm string, ticks uint64, threads int, rssPages uint64) string {
	// Fields 3… : state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime vsize rss
	return fmt.Sprintf("%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0 %d 0 0 0 20 0 %d 0 5000 1000000 %d 0 0",
		pid, comm, ppid, pid, pid, ticks, threads, rssPages)
}

func (f fakeProc) fs() fstest.MapFS {
	m := fstest.MapFS{
		"stat":    {Data: []byte(fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\nbtime 1700000000\n", f.cpuBusy, f.cpuTotal-f.cpuBusy))},
		"meminfo": {Data: []byte("MemTotal:       263000000 kB\nMemFree:         1000000 kB\nMemAvailable:    2000000 kB\nSwapTotal:       8000000 kB\nSwapFree:        1000000 kB\n")},
		"vmstat":  {Data: []byte(fmt.Sprintf("nr_free_pages 100\npswpin %d\npswpout %d\n", f.swapIn, f.swapOut))},

		"100/stat":               {Data: []byte(statLine(100, 1, "vllm", f.apiTicks, 2, 2_000_000))},
		"100/cmdline":            {Data: []byte("/usr/bin/python3\x00-m\x00vllm.entrypoints.openai.api_server\x00--tensor-parallel-size\x004\x00--api-key\x00sk-secret\x00")},
		"100/environ":            {Data: []byte("HOME=/root\x00HF_HOME=/data/hf\x00")},
		"100/cgroup":             {Data: []byte("0::/system.slice/vllm.service\n")},
		"100/task/100/stat":      {Data: []byte(statLine(100, 1, "vllm", f.apiTicks/10, 2, 0))},
		"100/task/100/schedstat": {Data: []byte(fmt.Sprintf("%d 0 10\n", f.idle))},
		"100/task/100/children":  {Data: []byte("200 ")},
		"100/task/101/stat":      {Data: []byte(statLine(101, 1, "APIServer", f.apiTicks, 2, 0))},
		"100/task/101/schedstat": {Data: []byte(fmt.Sprintf("%d %d 500\n", f.busyRun, f.busyWait))},
		"100/task/101/children":  {Data: []byte("")},
		"200/stat":               {Data: []byte(statLine(200, 100, "VLLM::EngineCor", f.coreTicks, 1, 4_000_000))},
		"200/cmdline":            {Data: []byte("VLLM::EngineCore_DP0                ")},
		"200/task/200/stat":      {Data: []byte(statLine(200, 100, "VLLM::EngineCor", f.coreTicks, 1, 0))},
		"200/task/200/schedstat": {Data: []byte(fmt.Sprintf("%d 0 10\n", f.coreTicks*10_000_000))},
		"200/task/200/children":  {Data: []byte("")},
		"self/status":            {Data: []byte("Name:\tllmtop\nNSpid:\t42\n")},
	}
	return m
}

// cgroupFS is a cgroup v2 mount with the engine's service at a 64 GiB limit
// and 3 OOM kills.
func cgroupFS() fstest.MapFS {
	return fstest.MapFS{
		"system.slice/vllm.service/memory.max":     {Data: []byte("68719476736\n")},
		"system.slice/vllm.service/memory.current": {Data: []byte("60000000000\n")},
		"system.slice/vllm.service/memory.events":  {Data: []byte("low 0\nhigh 0\nmax 12\noom 3\noom_kill 3\noom_group_kill 0\n")},
	}
}

func statfsFake(paths map[string][2]uint64) func(string) (uint64, uint64, error) {
	return func(p string) (uint64, uint64, error) {
		if v, ok := paths[p]; ok {
			return v[0], v[1], nil
		}
		return 0, 0, &os.PathError{Op: "statfs", Path: p, Err: os.ErrNotExist}
	}
}

// A fake /proc read twice, 2 s apart: the engine's two processes with
// their CPU, busiest thread (by schedstat: running and waiting), RSS and
// threads; host memory and swap rates; the cgroup's limit and OOM kills;
// /dev/shm and the model cache's disk as the engine sees them; the
// tensor-parallel degree; and a secret kept out of the command line.
func TestReadFakeProc(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	first := fakeProc{apiTicks: 1000, coreTicks: 500, busyRun: 1e9, busyWait: 0, idle: 1e8, cpuBusy: 1000, cpuTotal: 4000}
	// 2 s later: the APIServer thread ran 1.4 s and waited 0.56 s for a
	// CPU (it wants 98 % of a core on a busy box); the engine core ran 0.5 s.
	second := fakeProc{apiTicks: 1000 + 160, coreTicks: 550, busyRun: 1e9 + 1.4e9, busyWait: 0.56e9, idle: 1e8 + 2e7,
		swapIn: 600, swapOut: 1000, cpuBusy: 1300, cpuTotal: 4400}
	kmsg := [][]string{nil, {"6,1,1,-;Out of memory: Killed process 200 (VLLM::EngineCor) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB oom_score_adj:0\n"}}
	calls := 0
	cfg := Config{Cgroup: cgroupFS(), ProcPath: "/proc",
		Statfs: statfsFake(map[string][2]uint64{
			"/proc/100/root/dev/shm": {64 << 20, 64 << 20},
			"/proc/100/root/data/hf": {5 << 30, 500 << 30},
		}),
		Kmsg: func() ([]string, error) { calls++; return kmsg[min(calls-1, 1)], nil },
	}
	cfg.Proc = first.fs()
	r := New(cfg)
	tg := []Target{{Endpoint: "http://127.0.0.1:8000", PID: 100, Note: "caveat"}}
	hs, evs := r.Read(t0, tg)
	if len(hs) != 1 || len(evs) != 0 {
		t.Fatalf("first look: %+v %+v", hs, evs)
	}
	if hs[0].Procs[0].CPU.OK || hs[0].CPUBusy.OK || hs[0].SwapIn.OK {
		t.Errorf("a first look has no rates: %+v", hs[0])
	}
	r.cfg.Proc = second.fs()
	hs, evs = r.Read(t0.Add(2*time.Second), tg)
	h := hs[0]
	if len(h.Procs) != 2 {
		t.Fatalf("procs %+v", h.Procs)
	}
	api, core := h.Procs[0], h.Procs[1]
	if !api.Front || api.PID != 100 || core.PID != 200 || core.PPID != 100 || core.Front {
		t.Errorf("tree: %+v %+v", api, core)
	}
	if strings.Contains(api.Cmdline, "sk-secret") || !strings.Contains(api.Cmdline, "--tensor-parallel-size") {
		t.Errorf("cmdline %q", api.Cmdline)
	}
	near := func(what string, o model.Opt, want float64) {
		t.Helper()
		if !o.OK || o.V < want-0.005 || o.V > want+0.005 {
			t.Errorf("%s = %+v, want %.3f", what, o, want)
		}
	}
	near("api cpu", api.CPU, 0.8)
	near("core cpu", core.CPU, 0.25)
	b := api.Busiest
	if b.TID != 101 || b.Name != "APIServer" {
		t.Errorf("busiest %+v", b)
	}
	near("busiest cpu", b.CPU, 0.7)
	near("busiest want", b.Want, 0.98)
	if api.RSS.V != 2_000_000*4096 || api.Threads != 2 {
		t.Errorf("rss %v threads %d", api.RSS, api.Threads)
	}
	near("host busy", h.CPUBusy, 0.75)
	near("swap in", h.SwapIn, 300)
	near("swap out", h.SwapOut, 500)
	if h.CPUs != 2 || h.MemAvailable.V != 2_000_000*1024 || h.SwapFree.V != 1_000_000*1024 {
		t.Errorf("host %+v", h)
	}
	if h.Cgroup != "/system.slice/vllm.service" || h.CgroupMemLimit.V != 64<<30 || h.CgroupOOMKills.V != 3 || h.CgroupMemUsage.V != 60e9 {
		t.Errorf("cgroup %q %v %v %v", h.Cgroup, h.CgroupMemLimit, h.CgroupOOMKills, h.CgroupMemUsage)
	}
	if h.ShmTotal.V != 64<<20 {
		t.Errorf("shm %v", h.ShmTotal)
	}
	if len(h.Disks) != 1 || h.Disks[0].Path != "/data/hf/hub" || h.Disks[0].Free.V != 5<<30 {
		t.Errorf("disks %+v (the cache dir does not exist: its parent's disk)", h.Disks)
	}
	if h.Note != "caveat" || len(h.NotChecked) != 0 {
		t.Errorf("note %q not checked %q", h.Note, h.NotChecked)
	}
	// The kernel killed the engine core: a crash event for the endpoint.
	if len(evs) != 1 || evs[0].Kind != model.KindOOMKilled || evs[0].Endpoint != tg[0].Endpoint ||
		evs[0].Fields["phase"] != model.PhaseCrash || evs[0].Fields["pid"] != "200" || !strings.Contains(evs[0].Line, "Killed process 200") {
		t.Errorf("events %+v", evs)
	}
}

// Unreadable files are "not checked, because …", never zero.
func TestReadSaysWhatItCouldNotRead(t *testing.T) {
	proc := fstest.MapFS{
		"100/stat":    {Data: []byte(statLine(100, 1, "llama-server", 10, 1, 100))},
		"100/cmdline": {Data: []byte("llama-server\x00-m\x00x.gguf\x00")},
	}
	r := New(Config{Proc: proc, Kmsg: func() ([]string, error) { return nil, errors.New("/dev/kmsg: permission denied") }})
	hs, _ := r.Read(time.Unix(0, 0), []Target{{Endpoint: "a", PID: 100}, {Endpoint: "b"}})
	got := strings.Join(hs[0].NotChecked, "\n")
	for _, want := range []string{"host CPU: not checked, because", "host memory: not checked", "swap activity: not checked",
		"memory cgroup: not checked", "/dev/shm and free disk: not checked", "kernel OOM kills: not checked, because the kernel log is not readable: /dev/kmsg: permission denied"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if hs[0].MemAvailable.OK || hs[0].CgroupMemLimit.OK {
		t.Errorf("unread is not zero: %+v", hs[0])
	}
	if !strings.Contains(strings.Join(hs[1].NotChecked, "\n"), "engine processes: not checked, because no process visible to llmtop holds the endpoint's port") {
		t.Errorf("b: %q", hs[1].NotChecked)
	}
}

// Real OOM-killer lines (testdata/oom-kills.txt, with where each was
// printed) parse to the PID and name they kill; the reaper's line does not.
func TestParseKmsgRealLines(t *testing.T) {
	f, err := os.Open("testdata/oom-kills.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var line string
	n := 0
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "#") || l == "":
		case strings.HasPrefix(l, "want "):
			n++
			w := strings.Fields(l)
			k, ok := parseKmsg(line)
			if w[1] == "none" {
				if ok {
					t.Errorf("%q: parsed %+v", line, k)
				}
				continue
			}
			pid, _ := strconv.Atoi(w[1])
			if !ok || k.pid != pid || k.comm != w[2] || k.cgroup != (w[3] == "cgroup") {
				t.Errorf("%q: got %+v ok=%v, want %v", line, k, ok, w[1:])
			}
		default:
			line = l
		}
	}
	if n < 5 {
		t.Fatalf("only %d examples read", n)
	}
}

// v1 cgroups: the memory controller's own path and file names; the v1
// "unlimited" value is no limit.
func TestCgroupV1(t *testing.T) {
	p, v1, ok := memCgroup([]byte("12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n"))
	if !ok || !v1 || p != "/docker/abc" {
		t.Fatalf("%q %v %v", p, v1, ok)
	}
	root := fstest.MapFS{
		"memory/docker/abc/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")},
		"memory/docker/abc/memory.usage_in_bytes": {Data: []byte("1000\n")},
		"memory/docker/abc/memory.oom_control":    {Data: []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")},
	}
	_, usage, kills, limited, err := readCgroup(root, p, v1)
	if err != nil || limited || usage != 1000 || kills != 2 {
		t.Fatalf("usage %d kills %d limited %v err %v", usage, kills, limited, err)
	}
}

// A model cache that does not exist yet, nor its parent (a fresh
// ~/.cache/huggingface/hub), is on the disk of the nearest directory that
// does: it read "not checked, because no such file or directory".
func TestModelCacheDiskOfNearestDirectory(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cfg := Config{Cgroup: cgroupFS(), ProcPath: "/proc",
		Statfs: statfsFake(map[string][2]uint64{
			"/proc/100/root/dev/shm": {64 << 20, 64 << 20},
			"/proc/100/root":         {7 << 30, 500 << 30},
		}),
	}
	cfg.Proc = fakeProc{apiTicks: 1000, coreTicks: 500, busyRun: 1e9, idle: 1e8, cpuBusy: 1000, cpuTotal: 4000}.fs()
	hs, _ := New(cfg).Read(t0, []Target{{Endpoint: "http://127.0.0.1:8000", PID: 100}})
	if len(hs) != 1 {
		t.Fatalf("readings %+v", hs)
	}
	found := false
	for _, d := range hs[0].Disks {
		if d.What == "model cache" && d.Free.OK && d.Free.V == 7<<30 {
			found = true
		}
	}
	if !found || strings.Contains(strings.Join(hs[0].NotChecked, "\n"), "model cache") {
		t.Errorf("disks %+v, not checked %q", hs[0].Disks, hs[0].NotChecked)
	}
}

// The model store is each engine's own (engines/ Process.Store): the HF
// cache for vLLM, the GGUF file's directory for llama-server (relative to
// its working directory), OLLAMA_MODELS or ~/.ollama/models for Ollama.
// The Host pane showed ~/.cache/huggingface/hub for llama.cpp and Ollama.
func TestModelStoreIsTheEngines(t *testing.T) {
	env := func(kv ...string) []byte { return []byte(strings.Join(kv, "\x00") + "\x00") }
	cases := []struct {
		name    string
		args    []string
		environ []byte
		dir     string
		what    string
		rel     bool
	}{
		{"vLLM --download-dir", []string{"vllm", "serve", "m", "--download-dir", "/models"}, env("HOME=/root"), "/models", "model cache", false},
		{"vLLM --download_dir=", []string{"vllm", "serve", "m", "--download_dir=/m2"}, env("HOME=/root"), "/m2", "model cache", false},
		{"vLLM HF_HOME", []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, env("HOME=/root", "HF_HOME=/data/hf/"), "/data/hf/hub", "model cache", false},
		{"SGLang XDG cache", []string{"python3", "-m", "sglang.launch_server"}, env("HOME=/root", "XDG_CACHE_HOME=/c"), "/c/huggingface/hub", "model cache", false},
		{"llama-server -m relative", []string{"llama-server", "-m", "models/q4.gguf", "--port", "8080"}, env("HOME=/root"), "models", "model files", true},
		{"llama-server --model= absolute", []string{"/opt/llama-server", "--model=/srv/m/q4.gguf"}, env("HOME=/root"), "/srv/m", "model files", false},
		{"llama-server -hf", []string{"llama-server", "-hf", "org/repo"}, env("HOME=/home/u"), "/home/u/.cache/llama.cpp", "model files", false},
		{"llama-server LLAMA_CACHE", []string{"llama-server", "-hf", "org/repo"}, env("HOME=/home/u", "LLAMA_CACHE=/lc"), "/lc", "model files", false},
		{"Ollama OLLAMA_MODELS", []string{"/usr/local/bin/ollama", "serve"}, env("HOME=/usr/share/ollama", "OLLAMA_MODELS=/mnt/ollama"), "/mnt/ollama", "Ollama models", false},
		{"Ollama default", []string{"ollama", "serve"}, env("HOME=/usr/share/ollama"), "/usr/share/ollama/.ollama/models", "Ollama models", false},
		{"no environment", []string{"ollama", "serve"}, nil, "", "Ollama models", false},
	}
	for _, c := range cases {
		dir, what, rel := modelStore(c.args, c.environ)
		if dir != c.dir || what != c.what || rel != c.rel {
			t.Errorf("%s: got %q %q rel=%v, want %q %q rel=%v", c.name, dir, what, rel, c.dir, c.what, c.rel)
		}
	}

	// Read: a relative GGUF path is stat'ed under the engine's cwd.
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cfg := Config{Cgroup: cgroupFS(), ProcPath: "/proc",
		Statfs: statfsFake(map[string][2]uint64{
			"/proc/100/root/dev/shm": {64 << 20, 64 << 20},
			"/proc/100/cwd/models":   {3 << 30, 100 << 30},
		}),
	}
	proc := fakeProc{apiTicks: 1000, coreTicks: 500, busyRun: 1e9, idle: 1e8, cpuBusy: 1000, cpuTotal: 4000}.fs()
	proc["100/cmdline"] = &fstest.MapFile{Data: []byte("llama-server\x00-m\x00models/q4.gguf\x00")}
	cfg.Proc = proc
	hs, _ := New(cfg).Read(t0, []Target{{Endpoint: "http://127.0.0.1:8080", PID: 100}})
	if len(hs) != 1 {
		t.Fatalf("readings %+v", hs)
	}
	found := false
	for _, d := range hs[0].Disks {
		if d.What == "model files" && d.Path == "models" && d.Free.OK && d.Free.V == 3<<30 {
			found = true
		}
	}
	if !found {
		t.Errorf("disks %+v, not checked %q", hs[0].Disks, hs[0].NotChecked)
	}
}

// countFS counts the files read through it by their last path element.
type countFS struct {
	fstest.MapFS
	n map[string]int
}

func (c countFS) ReadFile(name string) ([]byte, error) {
	c.n[name[strings.LastIndexByte(name, '/')+1:]]++
	return c.MapFS.ReadFile(name)
}

// What changes slowly is read slowly: the process tree is walked each look
// only until two walks agree, then every slowEvery or at once when one of
// its processes is gone; command lines and the front's environment every
// slowEvery or when the PID's process is another; a thread's stat only for
// the busiest one's name (schedstat says the rest). What is shown stays
// the same as a full read's.
func TestSlowChangingReadSlowly(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f := fakeProc{apiTicks: 1000, coreTicks: 500, busyRun: 1e9, idle: 1e8, cpuBusy: 1000, cpuTotal: 4000}
	c := countFS{MapFS: f.fs(), n: map[string]int{}}
	r := New(Config{Proc: c})
	tg := []Target{{Endpoint: "e", PID: 100}}
	look := func(at time.Duration) model.HostReading {
		t.Helper()
		for k := range c.n {
			delete(c.n, k)
		}
		hs, _ := r.Read(t0.Add(at), tg)
		return hs[0]
	}
	h := look(0)
	if len(h.Procs) != 2 || c.n["children"] != 3 || c.n["cmdline"] != 2 || c.n["environ"] != 1 {
		t.Fatalf("first look: procs %d reads %v", len(h.Procs), c.n)
	}
	look(3 * time.Second) // the tree walked again: the same, now stable
	if c.n["children"] != 3 || c.n["cmdline"] != 0 {
		t.Errorf("second look reads %v", c.n)
	}
	h = look(6 * time.Second)
	if c.n["children"] != 0 || c.n["cmdline"] != 0 || c.n["environ"] != 0 {
		t.Errorf("a stable tree's look read %v", c.n)
	}
	// 3 threads with schedstat: one stat read each process for the
	// busiest's name, none for the others.
	if c.n["stat"] != 1+2+2 || c.n["schedstat"] != 3 {
		t.Errorf("stat reads %v", c.n)
	}
	if len(h.Procs) != 2 || h.Procs[0].Busiest != (model.ThreadUsage{TID: 100, Name: "vllm", CPU: model.Some(0), Want: model.Some(0)}) || h.Procs[1].Busiest.Name != "VLLM::EngineCor" ||
		!strings.Contains(h.Procs[0].Cmdline, "--tensor-parallel-size") || !strings.Contains(h.Procs[1].Cmdline, "EngineCore") {
		t.Errorf("cached look shows %+v", h.Procs)
	}
	// The engine core is gone: its absence is seen this look, and the
	// tree is walked again the next.
	delete(c.MapFS, "200/stat")
	h = look(9 * time.Second)
	if len(h.Procs) != 1 {
		t.Errorf("gone child still shown: %+v", h.Procs)
	}
	look(12 * time.Second)
	if c.n["children"] == 0 {
		t.Errorf("a tree with a gone process not walked again: %v", c.n)
	}
	// A new worker, once the tree is stable, appears within slowEvery.
	c.MapFS["200/stat"] = &fstest.MapFile{Data: []byte(statLine(200, 100, "VLLM::EngineCor", 600, 1, 4_000_000))}
	look(15 * time.Second)
	look(18 * time.Second)
	if h = look(18*time.Second + slowEvery); len(h.Procs) != 2 || c.n["cmdline"] == 0 {
		t.Errorf("after slowEvery: procs %+v reads %v", h.Procs, c.n)
	}
	// The front's PID now another process (another start time): its
	// command line is read again at once.
	c.MapFS["100/stat"] = &fstest.MapFile{Data: []byte(strings.Replace(statLine(100, 1, "llama-server", 10, 2, 1000), " 5000 ", " 9000 ", 1))}
	c.MapFS["100/cmdline"] = &fstest.MapFile{Data: []byte("llama-server\x00-m\x00x.gguf\x00")}
	if h = look(21*time.Second + slowEvery); !strings.HasPrefix(h.Procs[0].Cmdline, "llama-server") {
		t.Errorf("reused PID shows the old command line: %q", h.Procs[0].Cmdline)
	}
}

// keyValue reads what a map of every line read: on this machine's own
// meminfo and vmstat (every key, against a plain split of each line), and
// a key that starts a longer one is not taken for it.
func TestKeyValueReadsEveryKey(t *testing.T) {
	for _, f := range []string{"/proc/meminfo", "/proc/vmstat"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Skip(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		n := 0
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			want, err := strconv.ParseUint(fl[1], 10, 64)
			if err != nil {
				continue
			}
			if len(fl) > 2 && fl[2] == "kB" {
				want *= 1024
			}
			k := strings.TrimSuffix(fl[0], ":")
			if got, ok := keyValue(b, k); !ok || got != want {
				t.Errorf("%s %s = %d %v, want %d", f, k, got, ok, want)
			}
			n++
		}
		if n < 10 {
			t.Errorf("%s: %d keys", f, n)
		}
	}
	b := []byte("Active(anon):     10 kB\nActive:  7 kB\nnr_free_pages_x 3\nnr_free_pages 4")
	for k, want := range map[string]uint64{"Active": 7 << 10, "Active(anon)": 10 << 10, "nr_free_pages": 4} {
		if got, ok := keyValue(b, k); !ok || got != want {
			t.Errorf("%s = %d %v, want %d", k, got, ok, want)
		}
	}
	if _, ok := keyValue(b, "Inactive"); ok {
		t.Error("a missing key read")
	}
}

// A machine without swap (SwapTotal 0) swaps nothing in or out: its rates
// are 0 from the first look, without a read of vmstat (the largest of the
// host-wide files); swap added later is read, its rates from the next look.
func TestNoSwapIsNoSwapActivity(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f := fakeProc{apiTicks: 1000, coreTicks: 500, cpuBusy: 1000, cpuTotal: 4000, swapIn: 7, swapOut: 9}
	c := countFS{MapFS: f.fs(), n: map[string]int{}}
	withSwap := c.MapFS["meminfo"].Data
	c.MapFS["meminfo"] = &fstest.MapFile{Data: []byte("MemTotal:       263000000 kB\nMemAvailable:    2000000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n")}
	r := New(Config{Proc: c})
	for i := range 2 {
		hs, _ := r.Read(t0.Add(time.Duration(i)*3*time.Second), []Target{{Endpoint: "e", PID: 100}})
		h := hs[0]
		if h.SwapIn != model.Some(0) || h.SwapOut != model.Some(0) || c.n["vmstat"] != 0 || h.CPUs != 2 {
			t.Fatalf("look %d without swap: in %v out %v, %d vmstat reads, %d CPUs", i, h.SwapIn, h.SwapOut, c.n["vmstat"], h.CPUs)
		}
		for _, nc := range h.NotChecked {
			if strings.Contains(nc, "swap") {
				t.Fatalf("look %d: %q", i, nc)
			}
		}
	}
	c.MapFS["meminfo"] = &fstest.MapFile{Data: withSwap}
	hs, _ := r.Read(t0.Add(6*time.Second), []Target{{Endpoint: "e", PID: 100}})
	if c.n["vmstat"] != 1 || hs[0].SwapIn.OK {
		t.Fatalf("swap added: %d vmstat reads, swap in %v, want one read and no rate yet", c.n["vmstat"], hs[0].SwapIn)
	}
	c.MapFS["vmstat"] = &fstest.MapFile{Data: []byte("pswpin 13\npswpout 9\n")}
	if hs, _ = r.Read(t0.Add(8*time.Second), []Target{{Endpoint: "e", PID: 100}}); hs[0].SwapIn != model.Some(3) || hs[0].SwapOut != model.Some(0) {
		t.Fatalf("swap in %v out %v 2 s later, want 3/s and 0", hs[0].SwapIn, hs[0].SwapOut)
	}
}
