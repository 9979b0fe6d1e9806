package diagnosis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The machine around the engine (Endpoint.Host, from sources/host): the API
// server's CPU, host and cgroup memory, the kernel OOM killer, /dev/shm
// against tensor parallelism, free disk, and memory that only grows.

func init() {
	register(
		rule{id: "api_server_cpu", checks: "the API server's busiest thread has CPU to spare", needs: needHost | needMetrics, hold: holdShort, eval: ruleFrontCPU},
		rule{id: "host_memory", checks: "host and cgroup memory have room, no swapping", needs: needHost, hold: holdShort, eval: ruleHostMemory},
		rule{id: "shm_small", checks: "/dev/shm fits the tensor-parallel degree", needs: needHost, hold: holdNone, eval: ruleShm},
		rule{id: "disk_low", checks: "the model store's and the log's disks have room", needs: needHost, hold: holdShort, eval: ruleDisk},
		rule{id: "memory_leak", checks: "no engine process's memory grows steadily", needs: needHost, hold: holdNone, eval: ruleLeak},
		rule{id: "kernel_oom_kill", checks: "the kernel's OOM killer left the engine alone", needs: needHost, hold: holdNone, eval: ruleOOMKill},
	)
}

// Thresholds of the host rules (runbook figures, not tunables yet).
const (
	// threadSaturated is the share of one core a thread wants (on a CPU
	// or runnable, waiting for one) for it to count as saturated.
	threadSaturated = 0.9
	// frontGPUUnder is the GPU utilisation (%) below which a saturated
	// front-end is what holds the GPU back.
	frontGPUUnder = 50.0
	// frontBatchShare is the share of its concurrency cap below which the
	// engine's batch has room the front-end does not fill.
	frontBatchShare = 0.25
	// memAvailLow is the share of host memory available below which,
	// with pages swapped out, the host is short of memory.
	memAvailLow = 0.05
	// cgroupNear is the share of its cgroup limit at which the engine is
	// about to be OOM-killed.
	cgroupNear = 0.9
	// shmPerRank is the /dev/shm a tensor-parallel rank wants (NCCL's
	// buffers and the engine's shared-memory broadcast): Docker's 64 MiB
	// default fails at TP 2.
	shmPerRank = 512 << 20
	// diskLowBytes and diskLowShare: a disk with less free is low.
	diskLowBytes = 10 << 30
	diskLowShare = 0.05
	// leakSpan is how long memory must keep growing before it is a leak;
	// leakFit the least-squares fit (R²) it must hold; leakGrowth the
	// growth over the span (share of the start) and leakMinBytes its floor.
	leakSpan     = 30 * time.Minute
	leakFit      = 0.8
	leakGrowth   = 0.1
	leakMinBytes = 512 << 20
)

// hosted lists the endpoints with a host reading.
func (e *env) hosted() []Endpoint {
	return e.subset(&e.hostedIn, func(ep *Endpoint) bool { return ep.Host != nil })
}

func hostSource(what string) string { return "/proc " + what }

// frontLever is the engine's way to give its front-end more CPU (every
// engine's when it is unknown).
func frontLever(eng model.Engine) []Action { return forEngine(eng, frontLevers()) }

// frontLevers is each engine's front-end lever, by engine, built once (a
// fleet's findings ask for it one by one).
var frontLevers = sync.OnceValue(func() map[model.Engine]Action {
	table := map[model.Engine]Action{}
	for _, sp := range engines.All() {
		if f := sp.Levers.Front; f.Change != "" {
			table[sp.ID] = Action{Change: f.Change, Why: f.Why, TradeOff: f.TradeOff}
		}
	}
	return table
})

func ruleFrontCPU(e *env) []Finding {
	var out []Finding
	for _, ep := range e.hosted() {
		f := ep.Host.FrontProc()
		if f == nil {
			continue
		}
		if s := engines.Of(ep.Engine()); s != nil && s.Levers.FrontRunsModel {
			// A busy CPU engine is not a saturated API server.
			e.lack(&ep, "the API server's CPU apart from the model's: "+s.Name+" runs the model in the process that holds the port")
			continue
		}
		t := f.Busiest
		want := t.Want
		if !want.OK {
			want = t.CPU
		}
		if !want.OK {
			e.lack(&ep, "the API server's thread CPU (a first look has no rate yet)")
			continue
		}
		if want.V < threadSaturated {
			continue
		}
		st := endpointState(e, ep.URL)
		var why []Evidence
		if g := e.in.GPU; g != nil {
			if util, n := engineUtil(g); n > 0 && util < frontGPUUnder {
				why = append(why, Evidence{Text: fmt.Sprintf("GPU utilisation %.0f %% < %.0f %% over %d device(s)", util, frontGPUUnder, n), Source: gpuSource(g)})
			}
		}
		// The engine has room: a small batch against its cap means the
		// requests are not reaching it.
		// (NVML counts a GPU busy while any kernel runs: one decode
		// stream reads as 100 %.)
		if run := st.State.Running; run.OK {
			if c, ok := currentCap(st); ok && run.V < frontBatchShare*float64(c) {
				why = append(why, Evidence{Text: fmt.Sprintf("running %s of a cap of %d: the engine has room", num(run.V), c), Source: metricSource(st, "running")})
			} else if kv := st.State.KVUsage; !ok && kv.OK && kv.V < frontBatchShare {
				why = append(why, Evidence{Text: fmt.Sprintf("KV cache %s used, running %s: the engine has room", pct(kv.V), num(run.V)), Source: metricSource(st, "kv")})
			}
		}
		if w := st.State.Waiting; w.OK && w.V >= 1 {
			why = append(why, Evidence{Text: "waiting " + num(w.V) + ", running " + optNum(st.State.Running), Source: metricSource(st, "waiting")})
		}
		if len(why) == 0 {
			// Saturated, but nothing waits, the batch is full and the
			// GPU busy (or unread): not yet the bottleneck.
			if e.in.GPU == nil && !st.State.Waiting.OK && !st.State.Running.OK {
				e.lack(&ep, "whether the saturated API server holds the GPU back (no GPU reading, no waiting count)")
			}
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("%s wants %s of a core (on a CPU %s)", t.Describe(f.PID), pct(want.V), optPct(t.CPU)),
			Source: hostSource(fmt.Sprintf("%d/task/%d/schedstat", f.PID, t.TID)), Window: seconds(ep.Host.IntervalS)},
			{Text: fmt.Sprintf("API server PID %d (%s): %s cores over %d threads, RSS %s", f.PID, nonEmpty(f.Cmdline, f.Name), optNum(f.CPU), f.Threads, optBytes(f.RSS)),
				Source: hostSource(fmt.Sprintf("%d/stat", f.PID)), Window: seconds(ep.Host.IntervalS)}}
		ev = append(ev, why...)
		out = append(out, Finding{Endpoint: ep.URL, Category: Queueing, Severity: model.SevWarn,
			Title:    fmt.Sprintf("API server's thread %q at %s of a core: the front-end is the bottleneck", t.Name, pct(want.V)),
			Evidence: ev, Breach: want.V / threadSaturated,
			Cause:   "one Python thread tokenises, detokenises and writes JSON for every request: at a full core, requests wait in front of the engine and the GPU starves",
			Actions: frontLever(ep.Engine())})
	}
	return out
}

// frontThread describes the API server's busiest thread from the host
// reading ("" when none was read).
func frontThread(ep Endpoint) string {
	if ep.Host == nil {
		return ""
	}
	f := ep.Host.FrontProc()
	if f == nil || !(f.Busiest.Want.OK || f.Busiest.CPU.OK) {
		return ""
	}
	return fmt.Sprintf("API server's busiest %s wants %s of a core", f.Busiest.Describe(f.PID), pct(f.Busiest.Want.Or(f.Busiest.CPU.V)))
}

// endpointState finds the endpoint with metrics for url (the host reading
// is per endpoint; the state per endpoint and model).
func endpointState(e *env, url string) Endpoint {
	for ep := range each(e.withMetrics()) {
		if ep.URL == url {
			return *ep
		}
	}
	return Endpoint{URL: url}
}

func ruleHostMemory(e *env) []Finding {
	var out []Finding
	for _, ep := range e.hosted() {
		h := ep.Host
		if h.MemAvailable.OK && h.MemTotal.OK && h.MemTotal.V > 0 && h.MemAvailable.V/h.MemTotal.V < memAvailLow &&
			h.SwapOut.OK && h.SwapOut.V > 0 {
			out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
				Title: fmt.Sprintf("host memory short: %s available of %s, swapping out %s pages/s", gib(h.MemAvailable.V), gib(h.MemTotal.V), num(h.SwapOut.V)),
				Evidence: []Evidence{{Text: "MemAvailable " + gib(h.MemAvailable.V) + " of " + gib(h.MemTotal.V), Source: "/proc/meminfo"},
					{Text: "swap in " + optNum(h.SwapIn) + ", out " + num(h.SwapOut.V) + " pages/s", Source: "/proc/vmstat pswpin/pswpout", Window: seconds(h.IntervalS)}},
				Cause: "the engine's host memory (tokenizer, CPU KV offload, pinned buffers, other processes) outgrows RAM; swapping stalls the API server and the next step is the OOM killer",
				Actions: []Action{{Change: "find the biggest process (the process list below, or top -o RES) and stop what is not the engine", Why: "free RAM before the kernel picks a victim", TradeOff: "none"},
					{Change: "lower the engine's host-memory buffers (" + hostBufferFlags() + ")", Why: "CPU-side KV and weights live in host RAM", TradeOff: "less offload room"}}})
		}
		if h.CgroupMemLimit.OK && h.CgroupMemUsage.OK && h.CgroupMemLimit.V > 0 && h.CgroupMemUsage.V/h.CgroupMemLimit.V >= cgroupNear {
			out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
				Title:    fmt.Sprintf("engine at %s of its cgroup's memory limit (%s)", pct(h.CgroupMemUsage.V/h.CgroupMemLimit.V), gib(h.CgroupMemLimit.V)),
				Evidence: []Evidence{{Text: "memory " + gib(h.CgroupMemUsage.V) + " of " + gib(h.CgroupMemLimit.V) + " in " + h.Cgroup, Source: "cgroup memory.current / memory.max"}},
				Cause:    "the container's limit, not the host's RAM, is what runs out: the kernel OOM-kills inside the cgroup at the limit",
				Actions:  []Action{{Change: "raise the container's memory limit (docker --memory, Kubernetes resources.limits.memory)", Why: "page cache and the tokenizer count against it", TradeOff: "less for other pods"}}})
		}
	}
	return out
}

func ruleOOMKill(e *env) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for i := len(e.in.Events) - 1; i >= 0; i-- {
		x := e.in.Events[i]
		if x.Kind != model.KindOOMKilled || seen[x.Endpoint] || e.past(x.Time, e.cfg.EventWindow) {
			continue
		}
		seen[x.Endpoint] = true
		ev := []Evidence{{Text: x.Time.Format("15:04:05") + " PID " + x.Fields["pid"] + " (" + x.Fields["process"] + ") " + x.Title, Source: "kernel log"}}
		if x.Line != "" {
			ev = append(ev, Evidence{Text: x.Line, Source: "kernel log"})
		}
		out = append(out, Finding{Endpoint: x.Endpoint, Category: Availability, Severity: model.SevCrit,
			Title: "engine " + x.Title, Evidence: ev,
			Cause: "host (or cgroup) memory ran out and the kernel killed the biggest process: the engine's",
			Actions: []Action{{Change: "give the engine more host memory (a higher container limit) or lower its CPU-side buffers (" + hostBufferFlags() + ")", Why: "the kill comes back at the same load", TradeOff: "less for other processes"},
				{Change: "read `dmesg -T | grep -i -B5 'killed process'` for what else held memory", Why: "the kernel lists every process's RSS before the kill", TradeOff: "none"}}})
	}
	for _, ep := range e.hosted() {
		if k := ep.Host.CgroupOOMKills; k.OK && k.V > 0 && !seen[ep.URL] {
			out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
				Title:    fmt.Sprintf("the kernel OOM-killed %s process(es) in the engine's cgroup", num(k.V)),
				Evidence: []Evidence{{Text: "memory.events oom_kill " + num(k.V) + " in " + ep.Host.Cgroup, Source: "cgroup memory.events"}},
				Cause:    "something in the engine's container hit its memory limit (a worker, the tokenizer, a sidecar); it counts since the container started",
				Actions:  []Action{{Change: "raise the container's memory limit, or find which process died (its log, dmesg)", Why: "a killed worker takes the engine down with it", TradeOff: "less for other pods"}}})
		}
	}
	return out
}

// tensorParallel reads the tensor-parallel degree from the API server's
// command line, by every engine's flags (0: not given).
func tensorParallel(h *model.HostReading) int {
	for _, sp := range engines.All() {
		for _, flag := range sp.Levers.TensorParallel {
			if v, ok := cmdFlag(h, flag); ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 0
}

// cmdFlag is a flag's value on the API server's command line ("--flag v"
// or "--flag=v").
func cmdFlag(h *model.HostReading, flag string) (string, bool) {
	f := h.FrontProc()
	if f == nil {
		return "", false
	}
	args := strings.Fields(f.Cmdline)
	for i, a := range args {
		name, val, hasVal := strings.Cut(a, "=")
		if name != flag {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				continue
			}
			val = args[i+1]
		}
		return val, true
	}
	return "", false
}

func ruleShm(e *env) []Finding {
	var out []Finding
	for _, ep := range e.hosted() {
		h := ep.Host
		tp := tensorParallel(h)
		if tp < 2 || !h.ShmTotal.OK {
			continue
		}
		need := float64(tp) * shmPerRank
		if h.ShmTotal.V >= need {
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevWarn,
			Title: fmt.Sprintf("/dev/shm is %s for tensor parallelism %d", mib(h.ShmTotal.V), tp),
			Evidence: []Evidence{{Text: fmt.Sprintf("/dev/shm %s (free %s) as the engine sees it; TP %d wants about %s", mib(h.ShmTotal.V), optMiB(h.ShmFree), tp, mib(need)),
				Source: "statfs /proc/PID/root/dev/shm; engine arguments"}},
			Cause: "NCCL and the engine's shared-memory broadcast between ranks live in /dev/shm; Docker gives 64 MiB, which fails or hangs at start with 'Bus error' or an NCCL error",
			Actions: []Action{{Change: "docker run --shm-size 16g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory at /dev/shm",
				Why: "room for every rank's buffers", TradeOff: "host memory"}}})
	}
	return out
}

func ruleDisk(e *env) []Finding {
	var out []Finding
	for _, ep := range e.hosted() {
		for _, d := range ep.Host.Disks {
			if !d.Free.OK || !d.Total.OK || d.Total.V <= 0 {
				continue
			}
			if d.Free.V >= diskLowBytes && d.Free.V/d.Total.V >= diskLowShare {
				continue
			}
			act := storeAction(ep.Engine())
			if d.What == "log" {
				act = Action{Change: "rotate or move the log (logrotate, docker --log-opt max-size=100m)", Why: "a full disk stops the log and can stop the engine", TradeOff: "less history"}
			}
			out = append(out, Finding{Endpoint: ep.URL, Category: Availability, Severity: model.SevWarn,
				Title:    fmt.Sprintf("disk of the %s nearly full: %s free of %s", d.What, gib(d.Free.V), gib(d.Total.V)),
				Evidence: []Evidence{{Text: fmt.Sprintf("%s: %s free (%s)", d.Path, gib(d.Free.V), pct(d.Free.V/d.Total.V)), Source: "statfs"}},
				Cause:    "below " + gib(diskLowBytes) + " or " + pct(diskLowShare) + " free",
				Actions:  []Action{act}})
		}
	}
	return out
}

// storeAction is the advice for a full model-store disk, in the engine's
// own words (engines/ Process.Store): where it keeps its models and what
// moves them.
func storeAction(eng model.Engine) Action {
	st := engines.StoreOf(eng)
	var knobs []string
	for _, v := range st.Env {
		if v.Var != "XDG_CACHE_HOME" { // moves every cache, not the models'
			knobs = append(knobs, v.Var)
		}
	}
	knobs = append(knobs, st.Flags...)
	change := "free space, or move the " + st.What
	if len(knobs) > 0 {
		change += " (" + strings.Join(knobs, " / ") + ")"
	}
	change += " to a bigger disk"
	if st.FileSuffix != "" {
		change += "; a model file given by path (" + st.FileSuffix + ") moves with its path"
	}
	return Action{Change: change, Why: "the next model download fails part-way", TradeOff: "none"}
}

func ruleLeak(e *env) []Finding {
	var out []Finding
	for _, ep := range e.hosted() {
		for _, tr := range ep.Trend {
			for _, s := range []struct {
				what, source string
				pts          []model.Point
			}{{"RSS", "/proc/PID/stat rss", tr.RSS}, {"VRAM", "nvml process list", tr.VRAM}} {
				slope, span, start, fit, ok := growth(s.pts)
				if !ok || span < leakSpan || fit < leakFit || slope <= 0 {
					continue
				}
				grown := slope * span.Seconds()
				if grown < leakMinBytes || grown < leakGrowth*start {
					continue
				}
				out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: model.SevWarn,
					Title: fmt.Sprintf("%s of PID %d (%s) grows %s/h, steadily for %s", s.what, tr.PID, tr.Name, gib(slope*3600), span.Round(time.Minute)),
					Evidence: []Evidence{{Text: fmt.Sprintf("%s %s → %s, least-squares fit R² %.2f over %d points", s.what, gib(start), gib(start+grown), fit, len(s.pts)),
						Source: s.source, Window: span}},
					Cause: "memory that only grows under steady load is a leak (a cache without a bound, requests never freed): at this slope it runs out",
					Actions: []Action{{Change: "note the version and the request mix, and restart the engine before it runs out (a planned restart, at low traffic)", Why: "a restart returns the memory", TradeOff: "a short outage"},
						{Change: "search the engine's issues for a memory leak in this version, and try the next release", Why: "leaks are fixed upstream", TradeOff: "an upgrade"}}})
			}
		}
	}
	return out
}

// growth fits a line to the present points: its slope (per second), the
// span it covers, the fitted value at the start, and R².
func growth(pts []model.Point) (slope float64, span time.Duration, start, r2 float64, ok bool) {
	var xs, ys []float64
	var t0 time.Time
	for _, p := range pts {
		if !p.OK {
			continue
		}
		if t0.IsZero() {
			t0 = p.T
		}
		xs = append(xs, p.T.Sub(t0).Seconds())
		ys = append(ys, p.V)
	}
	if len(xs) < 10 {
		return 0, 0, 0, 0, false
	}
	n := float64(len(xs))
	var sx, sy, sxx, sxy, syy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
		syy += ys[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den <= 0 {
		return 0, 0, 0, 0, false
	}
	slope = (n*sxy - sx*sy) / den
	icept := (sy - slope*sx) / n
	vy := n*syy - sy*sy
	if vy <= 0 {
		return 0, 0, 0, 0, false
	}
	r := (n*sxy - sx*sy) / math.Sqrt(den*vy)
	return slope, time.Duration(xs[len(xs)-1] * float64(time.Second)), icept, r * r, true
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// optBytes formats bytes as GiB, or MiB under one GiB.
func optBytes(o model.Opt) string {
	switch {
	case !o.OK:
		return "--"
	case o.V < 1<<30:
		return mib(o.V)
	}
	return gib(o.V)
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

func optMiB(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return mib(o.V)
}
