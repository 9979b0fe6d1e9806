// Package host reads the machine around a local engine: the engine's
// processes (the port's owner and its descendants) with their CPU, busiest
// thread, RSS and threads from /proc/PID/stat, task/*/stat and schedstat;
// host CPU, memory and swap; the engine's memory cgroup (limit, usage,
// OOM kills); /dev/shm as the engine sees it against its tensor-parallel
// degree; free disk where the model cache and the log live; and the kernel
// OOM killer's lines about the engine's processes (/dev/kmsg, else
// journalctl -k).
//
// It judges nothing (that is diagnosis's); it says what it could not read:
// every reading lists "what: not checked, because …". Every file is read
// through an fs.FS, so tests drive a fake /proc (fstest.MapFS).
package host

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/procfs"
)

// Config is where the readings come from.
type Config struct {
	Proc   fs.FS // /proc
	Cgroup fs.FS // the cgroup mount, /sys/fs/cgroup
	// Statfs reports a file system's free and total bytes (nil: disks and
	// /dev/shm are not checked).
	Statfs func(path string) (free, total uint64, err error)
	// Kmsg returns the kernel log records written since its last call
	// (nil: OOM kills are not checked; an error says why not).
	Kmsg func() ([]string, error)
	// ProcPath is where Proc is mounted, for statfs through
	// /proc/PID/root (the engine's own view of its file systems).
	ProcPath string
}

// Target is one local endpoint: its ID, the PID that holds its port (0
// unknown), the log files attached to it, and a caveat about what this
// PID namespace hides (procfs says).
type Target struct {
	Endpoint string
	PID      int
	Logs     []string
	Note     string
}

// Reader keeps the previous counters so each look reports rates.
type Reader struct {
	cfg     Config
	procs   map[int]counter // by PID
	threads map[int]counter // by TID
	cpu     counter
	swapIn  counter
	swapOut counter
	// known are the engine PIDs seen, with their endpoint and name, so a
	// kernel line about one after it died names it.
	known map[int]knownProc
	// weightsBy caches each engine process's model weights (its files do
	// not change while it runs).
	weightsBy map[int]weightsFound
	// trees caches each front process's tree, cmds each process's command
	// line (and the front's environment): they change slowly, and reading
	// them is most of a look's system calls (a children file per thread).
	trees map[int]treeSeen
	cmds  map[int]cmdSeen
	now   time.Time
	last  time.Time // the previous Read
}

type counter struct {
	at        time.Time
	a, b      uint64 // ticks or run ns; total ticks or wait ns
	schedstat bool
}

type knownProc struct {
	endpoint, name string
	seen           time.Time
}

// New returns a Reader with nothing seen yet.
func New(cfg Config) *Reader {
	return &Reader{cfg: cfg, procs: map[int]counter{}, threads: map[int]counter{}, known: map[int]knownProc{}, weightsBy: map[int]weightsFound{},
		trees: map[int]treeSeen{}, cmds: map[int]cmdSeen{}}
}

// Default reads this machine.
func Default() Config {
	return Config{Proc: procfs.FS(), Cgroup: procfs.Dir("/sys/fs/cgroup"), Statfs: statfs, Kmsg: kernelLog(kmsgReader("/dev/kmsg"), journalFollower(journalCmd)), ProcPath: "/proc"}
}

// clockTicks is USER_HZ, 100 on every Linux llmtop runs on.
const clockTicks = 100

// Read looks once at every target; events are kernel OOM kills of their
// engine processes.
func (r *Reader) Read(now time.Time, targets []Target) ([]model.HostReading, []model.Event) {
	r.now = now
	base := r.hostWide()
	if !r.last.IsZero() && now.After(r.last) {
		base.IntervalS = now.Sub(r.last).Seconds()
	}
	r.last = now
	out := make([]model.HostReading, 0, len(targets))
	live := map[int]bool{}
	liveT := map[int]bool{}
	for _, t := range targets {
		h := base
		h.NotChecked = append([]string(nil), base.NotChecked...)
		h.Endpoint, h.Time = t.Endpoint, now
		r.engine(&h, t, live, liveT)
		out = append(out, h)
	}
	for pid := range r.procs {
		if !live[pid] {
			delete(r.procs, pid)
			delete(r.weightsBy, pid)
		}
	}
	for pid := range r.cmds {
		if !live[pid] {
			delete(r.cmds, pid)
		}
	}
	for pid := range r.trees {
		if !live[pid] {
			delete(r.trees, pid)
		}
	}
	for tid := range r.threads {
		if !liveT[tid] {
			delete(r.threads, tid)
		}
	}
	return out, r.oomKills(&out)
}

// hostWide reads what every target shares: CPU, memory, swap.
func (r *Reader) hostWide() model.HostReading {
	var h model.HostReading
	if b, err := fs.ReadFile(r.cfg.Proc, "stat"); err == nil {
		h.CPUs = onlineCPUs(b)
		if busy, total, ok := cpuTotals(b); ok {
			prev := r.cpu
			r.cpu = counter{at: r.now, a: busy, b: total}
			if !prev.at.IsZero() && total > prev.b && busy >= prev.a {
				h.CPUBusy = model.Some(float64(busy-prev.a) / float64(total-prev.b))
			}
		}
	} else {
		h.NotChecked = append(h.NotChecked, "host CPU: not checked, because /proc/stat is not readable: "+errText(err))
	}
	if b, err := fs.ReadFile(r.cfg.Proc, "meminfo"); err == nil {
		opt := func(k string) model.Opt {
			if v, ok := keyValue(b, k); ok {
				return model.Some(float64(v))
			}
			return model.Opt{}
		}
		h.MemTotal, h.MemAvailable, h.SwapTotal, h.SwapFree = opt("MemTotal"), opt("MemAvailable"), opt("SwapTotal"), opt("SwapFree")
	} else {
		h.NotChecked = append(h.NotChecked, "host memory: not checked, because /proc/meminfo is not readable: "+errText(err))
	}
	if h.SwapTotal.OK && h.SwapTotal.V == 0 {
		// No swap: nothing can be swapped in or out (vmstat, whose read
		// is most of this look's host-wide cost, is not asked). A swap
		// device added later starts its rates afresh.
		h.SwapIn, h.SwapOut = model.Some(0), model.Some(0)
		r.swapIn, r.swapOut = counter{}, counter{}
	} else if b, err := fs.ReadFile(r.cfg.Proc, "vmstat"); err == nil {
		in, _ := keyValue(b, "pswpin")
		out, _ := keyValue(b, "pswpout")
		h.SwapIn = r.rate(&r.swapIn, in)
		h.SwapOut = r.rate(&r.swapOut, out)
	} else {
		h.NotChecked = append(h.NotChecked, "swap activity: not checked, because /proc/vmstat is not readable: "+errText(err))
	}
	return h
}

// rate turns a counter into a per-second rate since its previous reading.
func (r *Reader) rate(c *counter, v uint64) model.Opt {
	prev := *c
	*c = counter{at: r.now, a: v}
	dt := r.now.Sub(prev.at).Seconds()
	if prev.at.IsZero() || dt <= 0 || v < prev.a {
		return model.Opt{}
	}
	return model.Some(float64(v-prev.a) / dt)
}

// engine reads one target's processes, cgroup, shared memory and disks.
func (r *Reader) engine(h *model.HostReading, t Target, live, liveT map[int]bool) {
	h.Note = t.Note
	if t.PID <= 0 {
		h.NotChecked = append(h.NotChecked, "engine processes: not checked, because no process visible to llmtop holds the endpoint's port")
		return
	}
	var front cmdSeen
	for _, pid := range r.tree(t.PID) {
		p, c, ok := r.process(pid, pid == t.PID, live, liveT)
		if !ok {
			if pid == t.PID {
				h.NotChecked = append(h.NotChecked, fmt.Sprintf("engine processes: not checked, because /proc/%d/stat is not readable", pid))
				return
			}
			r.trees[t.PID] = treeSeen{} // one gone: walk again next look
			continue
		}
		if pid == t.PID {
			p.Front, front = true, c
		}
		h.Procs = append(h.Procs, p)
		r.known[pid] = knownProc{endpoint: t.Endpoint, name: p.Name, seen: r.now}
	}
	r.cgroup(h, t.PID)
	r.disks(h, t, front)
	if w := r.modelWeights(t.PID, front.args, front.cache); w.ok {
		h.Weights, h.WeightsFrom = model.Some(w.bytes), model.Clean(w.from)
	}
}

// slowEvery is how often what changes slowly is read again: a process's
// descendants (once the tree has stopped growing) and command lines.
const slowEvery = 30 * time.Second

// treeSeen is a front process's tree as last walked: stable is set once
// two walks in a row found the same processes.
type treeSeen struct {
	pids   []int
	at     time.Time
	stable bool
}

// tree is root's processes, root first: walked every look while the tree
// grows (an engine starting its workers), then every slowEvery, and at once
// when one of them is gone.
func (r *Reader) tree(root int) []int {
	c, ok := r.trees[root]
	if ok && c.stable && r.now.Sub(c.at) < slowEvery && r.now.After(c.at) {
		return c.pids
	}
	pids := tree(r.cfg.Proc, root)
	r.trees[root] = treeSeen{pids: pids, at: r.now, stable: ok && slices.Equal(pids, c.pids)}
	return pids
}

// cmdSeen is a process's command line (and, for a front process, its
// environment) as read at at, for the process that started at start.
type cmdSeen struct {
	start    uint64
	at       time.Time
	args     []string
	redacted string
	front    bool
	// A front process's: where its model store is (modelStore) and the
	// Hugging Face cache it would find a model in (modelCache).
	store, storeWhat string
	storeRel         bool
	cache            string
}

// command reads pid's command line, and its environment when front, again
// every slowEvery or when the PID is another process's.
func (r *Reader) command(pid int, st stat, front bool) cmdSeen {
	c, ok := r.cmds[pid]
	if ok && c.start == st.startTicks && c.front == front && r.now.Sub(c.at) < slowEvery && r.now.After(c.at) {
		return c
	}
	dir := strconv.Itoa(pid)
	raw, _ := fs.ReadFile(r.cfg.Proc, dir+"/cmdline")
	c = cmdSeen{start: st.startTicks, at: r.now, front: front, args: model.SplitCmdline(raw)}
	c.redacted = model.RedactCmdline(strings.Join(c.args, " "))
	if front {
		environ, _ := fs.ReadFile(r.cfg.Proc, dir+"/environ")
		c.store, c.storeWhat, c.storeRel = modelStore(c.args, environ)
		c.cache = modelCache(c.args, environ)
	}
	r.cmds[pid] = c
	return c
}

// process reads one process and its busiest thread.
func (r *Reader) process(pid int, front bool, live, liveT map[int]bool) (model.ProcUsage, cmdSeen, bool) {
	dir := strconv.Itoa(pid)
	b, err := fs.ReadFile(r.cfg.Proc, dir+"/stat")
	if err != nil {
		return model.ProcUsage{}, cmdSeen{}, false
	}
	st, ok := parseStat(b)
	if !ok {
		return model.ProcUsage{}, cmdSeen{}, false
	}
	live[pid] = true
	p := model.ProcUsage{PID: pid, PPID: st.ppid, Name: model.Clean(st.comm), Threads: st.threads,
		RSS: model.Some(float64(st.rssPages) * pageSize)}
	c := r.command(pid, st, front)
	p.Cmdline = c.redacted
	p.CPU, _ = r.usage(r.procs, pid, st.ticks, nil)
	p.Busiest = r.busiest(dir, liveT)
	return p, c, true
}

// usage turns a task's counters into its share of one core over the
// interval and, with schedstat (sched: run and wait ns), the share it
// wanted: on a CPU or waiting for one.
func (r *Reader) usage(m map[int]counter, id int, ticks uint64, sched []uint64) (cpu, want model.Opt) {
	cur := counter{at: r.now, a: ticks}
	if sched != nil {
		cur = counter{at: r.now, a: sched[0], b: sched[1], schedstat: true}
	}
	prev, seen := m[id]
	m[id] = cur
	dt := r.now.Sub(prev.at).Seconds()
	if !seen || dt <= 0 || cur.schedstat != prev.schedstat || cur.a < prev.a || cur.b < prev.b {
		return model.Opt{}, model.Opt{}
	}
	if !cur.schedstat {
		return model.Some(float64(cur.a-prev.a) / clockTicks / dt), model.Opt{}
	}
	run := float64(cur.a-prev.a) / 1e9 / dt
	return model.Some(run), model.Some(run + float64(cur.b-prev.b)/1e9/dt)
}

// busiest reads every thread of a process and returns the one that wanted
// the most CPU (ran, or waited to run). A thread's schedstat is all it
// needs; its stat is read only where schedstat is not (a kernel without
// CONFIG_SCHEDSTATS) and for the busiest one's name.
func (r *Reader) busiest(dir string, liveT map[int]bool) model.ThreadUsage {
	ents, err := fs.ReadDir(r.cfg.Proc, dir+"/task")
	if err != nil {
		return model.ThreadUsage{}
	}
	var best model.ThreadUsage
	var bestStat *stat // the best one's stat when it was read
	bestV := -1.0
	var sched [2]uint64
	for i, e := range ents {
		if i == maxThreads {
			break
		}
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		td := dir + "/task/" + e.Name()
		var cpu, want model.Opt
		var st *stat
		if sb, err := fs.ReadFile(r.cfg.Proc, td+"/schedstat"); err == nil {
			if run, wait, ok := parseSchedstat(sb); ok {
				sched = [2]uint64{run, wait}
				cpu, want = r.usage(r.threads, tid, 0, sched[:])
				liveT[tid] = true
			}
		}
		if !liveT[tid] {
			b, err := fs.ReadFile(r.cfg.Proc, td+"/stat")
			if err != nil {
				continue
			}
			s, ok := parseStat(b)
			if !ok {
				continue
			}
			st = &s
			liveT[tid] = true
			cpu, want = r.usage(r.threads, tid, s.ticks, nil)
		}
		if v := want.Or(cpu.Or(-1)); v > bestV {
			bestV, bestStat = v, st
			best = model.ThreadUsage{TID: tid, CPU: cpu, Want: want}
		}
	}
	if best.TID != 0 && bestStat == nil {
		if b, err := fs.ReadFile(r.cfg.Proc, dir+"/task/"+strconv.Itoa(best.TID)+"/stat"); err == nil {
			if s, ok := parseStat(b); ok {
				bestStat = &s
			}
		}
	}
	if bestStat != nil {
		best.Name = model.Clean(bestStat.comm)
	}
	return best
}

// pageSize is the kernel's page size for RSS (4 KiB on x86-64 and most
// arm64 kernels llmtop meets).
const pageSize = 4096

// cgroup reads the front process's memory cgroup.
func (r *Reader) cgroup(h *model.HostReading, pid int) {
	b, err := fs.ReadFile(r.cfg.Proc, strconv.Itoa(pid)+"/cgroup")
	if err != nil {
		h.NotChecked = append(h.NotChecked, "the engine's memory cgroup: not checked, because /proc/"+strconv.Itoa(pid)+"/cgroup is not readable: "+errText(err))
		return
	}
	p, v1, ok := memCgroup(b)
	if !ok {
		h.NotChecked = append(h.NotChecked, "the engine's memory cgroup: not checked, because it names no memory controller")
		return
	}
	if r.cfg.Cgroup == nil {
		h.NotChecked = append(h.NotChecked, "the engine's memory cgroup: not checked, because the cgroup mount is not read")
		return
	}
	limit, usage, kills, limited, err := readCgroup(r.cfg.Cgroup, p, v1)
	if err != nil {
		h.NotChecked = append(h.NotChecked, "the engine's memory cgroup "+p+": not checked, because its files are not visible here (another cgroup namespace, or not mounted at /sys/fs/cgroup): "+errText(err))
		return
	}
	h.Cgroup = p
	if limited {
		h.CgroupMemLimit = model.Some(float64(limit))
	}
	h.CgroupMemUsage = model.Some(float64(usage))
	h.CgroupOOMKills = model.Some(float64(kills))
}

// disks reads /dev/shm as the engine sees it and the file systems of its
// model cache and logs.
func (r *Reader) disks(h *model.HostReading, t Target, front cmdSeen) {
	if r.cfg.Statfs == nil {
		h.NotChecked = append(h.NotChecked, "/dev/shm and free disk: not checked, because file systems are not read here")
		return
	}
	root := path.Join(r.cfg.ProcPath, strconv.Itoa(t.PID), "root")
	if free, total, err := r.statfsIn(root, "/dev/shm"); err == nil {
		h.ShmFree, h.ShmTotal = model.Some(float64(free)), model.Some(float64(total))
	} else {
		h.NotChecked = append(h.NotChecked, "/dev/shm: not checked, because "+errText(err))
	}
	type want struct {
		p, what string
		in      string // the directory p is relative to ("" p is absolute)
	}
	var ws []want
	if c, what, rel := front.store, front.storeWhat, front.storeRel; c != "" {
		w := want{p: c, what: what}
		if rel {
			// llama-server -m models/x.gguf: under the engine's working
			// directory, as it sees it.
			w.in = path.Join(r.cfg.ProcPath, strconv.Itoa(t.PID), "cwd")
		}
		ws = append(ws, w)
	} else {
		h.NotChecked = append(h.NotChecked, "the model store's disk: not checked, because the engine's environment is not readable (another user)")
	}
	for _, l := range t.Logs {
		ws = append(ws, want{p: l, what: "log"})
	}
	for _, w := range ws {
		stat := func(p string) (uint64, uint64, error) { return r.statfsIn(root, p) }
		if w.in != "" {
			stat = func(p string) (uint64, uint64, error) { return r.cfg.Statfs(path.Join(w.in, p)) }
		}
		free, total, err := stat(w.p)
		for up := w.p; err != nil && path.Dir(up) != up; {
			// The cache directory may not exist yet (nor its parent: a
			// fresh $HOME/.cache): the nearest that does is the disk it
			// will go on.
			up = path.Dir(up)
			free, total, err = stat(up)
		}
		if err != nil {
			h.NotChecked = append(h.NotChecked, w.what+" disk ("+w.p+"): not checked, because "+errText(err))
			continue
		}
		h.Disks = append(h.Disks, model.DiskFree{Path: w.p, What: w.what, Free: model.Some(float64(free)), Total: model.Some(float64(total))})
	}
}

// statfsIn stats p inside the engine's root (its mount namespace), then,
// when that is not readable, on this machine.
func (r *Reader) statfsIn(root, p string) (free, total uint64, err error) {
	if r.cfg.ProcPath != "" {
		if free, total, err = r.cfg.Statfs(path.Join(root, p)); err == nil {
			return free, total, nil
		}
	}
	return r.cfg.Statfs(p)
}

// oomKills reads the kernel log and turns OOM kills of known engine
// processes into crash events; without a readable kernel log every
// reading says so.
func (r *Reader) oomKills(out *[]model.HostReading) []model.Event {
	if r.cfg.Kmsg == nil {
		return nil
	}
	recs, err := r.cfg.Kmsg()
	if err != nil {
		for i := range *out {
			(*out)[i].NotChecked = append((*out)[i].NotChecked, "kernel OOM kills: not checked, because the kernel log is not readable: "+errText(err))
		}
		return nil
	}
	var evs []model.Event
	for _, rec := range recs {
		k, ok := parseKmsg(rec)
		if !ok {
			continue
		}
		p, ok := r.known[k.pid]
		if !ok || (p.name != "" && k.comm != p.name) { // a reused PID
			continue
		}
		title := "killed by the kernel OOM killer"
		if k.cgroup {
			title = "killed by the kernel OOM killer (its cgroup's memory limit)"
		}
		evs = append(evs, model.Event{Time: r.now, Endpoint: p.endpoint, Source: "kernel", Kind: model.KindOOMKilled,
			Severity: model.SevCrit, Category: model.CategoryLifecycle, Title: title, Line: model.Clean(k.line),
			Fields: map[string]string{"phase": model.PhaseCrash, "pid": strconv.Itoa(k.pid), "process": model.Clean(k.comm)}})
		delete(r.known, k.pid)
	}
	// Forget processes gone for an hour: their kills would long be read.
	for pid, p := range r.known {
		if r.now.Sub(p.seen) > time.Hour {
			delete(r.known, pid)
		}
	}
	return evs
}

func errText(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
