package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// hostReading is a vLLM API server (PID 4711) whose busiest thread wants
// want of a core, with an EngineCore child; mut changes it.
func hostReading(want float64, mut func(*model.HostReading)) *model.HostReading {
	h := &model.HostReading{Endpoint: url, Time: t0, IntervalS: 2, CPUs: 16,
		MemTotal: model.Some(256 * gb), MemAvailable: model.Some(200 * gb), SwapOut: model.Some(0),
		Procs: []model.ProcUsage{
			{PID: 4711, Name: "vllm", Cmdline: "vllm serve m", Front: true, CPU: model.Some(1.2), RSS: model.Some(3 * gb), Threads: 60,
				Busiest: model.ThreadUsage{TID: 4711, Name: "vllm", CPU: model.Some(want * 0.8), Want: model.Some(want)}},
			{PID: 4790, PPID: 4711, Name: "VLLM::EngineCor", CPU: model.Some(1), RSS: model.Some(5 * gb), Threads: 40},
		}}
	if mut != nil {
		mut(h)
	}
	return h
}

func withHost(h *model.HostReading, mut func(*Endpoint)) Endpoint {
	return ep(func(e *Endpoint) {
		e.Host = h
		if mut != nil {
			mut(e)
		}
	})
}

func gpuAt(util float64) *model.GPUSnapshot {
	g := gpuSnap(60*gb, 80*gb)
	g.GPUs[0].Util = model.Some(util)
	return g
}

func TestFrontCPURule(t *testing.T) {
	saturated := func(gpu float64, waiting float64) Input {
		in := input(withHost(hostReading(0.99, nil), func(e *Endpoint) { e.State.Waiting = model.Some(waiting) }))
		if gpu >= 0 {
			in.GPU = gpuAt(gpu)
		}
		return in
	}
	runCases(t, []ruleCase{
		{name: "saturated thread, idle GPU", in: saturated(12, 0), want: "api_server_cpu", check: func(t *testing.T, f *Finding) {
			if !strings.Contains(f.Title, `"vllm"`) || !hasEvidence(f, `thread "vllm" (TID 4711) of PID 4711`) || !hasEvidence(f, "GPU utilisation 12 %") {
				t.Errorf("%+v", f)
			}
			if !hasAction(f, "--api-server-count") || f.Severity != model.SevWarn {
				t.Errorf("actions %+v", f.Actions)
			}
		}},
		{name: "saturated thread, requests wait, no GPU", in: saturated(-1, 6), want: "api_server_cpu", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "waiting 6") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "saturated thread, busy GPU, nothing waits", in: saturated(90, 0), none: "api_server_cpu"},
		// llama-server decodes in the process that holds the port: its
		// busiest thread at a full core is the model on a CPU (seen on the
		// real llama-server under 8 streams: "thread llama-server wants 98 %").
		{name: "llama.cpp's busy thread is the model's", in: func() Input {
			in := saturated(-1, 6)
			in.Endpoints[0].Identity.Engine = model.LlamaCpp
			return in
		}(), none: "api_server_cpu"},
		// One decode stream keeps a GPU "utilised": the batch against its
		// cap says the engine has room the front-end does not fill.
		{name: "saturated thread, busy GPU, small batch", in: func() Input {
			in := saturated(90, 0)
			in.Endpoints[0].State.MaxRunning = model.Some(256)
			return in
		}(), want: "api_server_cpu", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "running 8 of a cap of 256") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "saturated thread, busy GPU, KV mostly free", in: func() Input {
			in := saturated(90, 0)
			in.Endpoints[0].State.KVUsage = model.Some(0.04)
			return in
		}(), want: "api_server_cpu", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "KV cache 4.0 % used, running 8") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "saturated thread, full batch", in: func() Input {
			in := saturated(90, 0)
			in.Endpoints[0].State.MaxRunning = model.Some(10)
			return in
		}(), none: "api_server_cpu"},
		{name: "thread with room", in: func() Input {
			in := input(withHost(hostReading(0.6, nil), nil))
			in.GPU = gpuAt(5)
			return in
		}(), none: "api_server_cpu"},
		{name: "SGLang's lever", in: func() Input {
			in := saturated(10, 0)
			in.Endpoints[0].Identity.Engine = model.SGLang
			return in
		}(), want: "api_server_cpu", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--tokenizer-worker-num") || hasAction(f, "--api-server-count") {
				t.Errorf("%+v", f.Actions)
			}
		}},
	})
	// No GPU, no waiting or running count: it says it could not judge.
	in := input(withHost(hostReading(0.99, nil), func(e *Endpoint) { e.State.Waiting, e.State.Running = model.Opt{}, model.Opt{} }))
	rep := Evaluate(in, DefaultConfig())
	if byID(rep, "api_server_cpu") != nil || !strings.Contains(strings.Join(rep.Missing, "\n"), "saturated API server") {
		t.Errorf("findings %v missing %v", ids(rep.Findings), rep.Missing)
	}
}

func TestHostRules(t *testing.T) {
	one := func(mut func(*model.HostReading)) Input { return input(withHost(hostReading(0.2, mut), nil)) }
	runCases(t, []ruleCase{
		{name: "healthy host", in: one(nil), none: "host_memory"},
		{name: "swapping", in: one(func(h *model.HostReading) {
			h.MemAvailable, h.SwapOut, h.SwapIn = model.Some(4*gb), model.Some(800), model.Some(120)
		}), want: "host_memory", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "out 800 pages/s") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "cgroup near its limit", in: one(func(h *model.HostReading) {
			h.Cgroup, h.CgroupMemLimit, h.CgroupMemUsage = "/kubepods/pod1", model.Some(32*gb), model.Some(31*gb)
		}), want: "host_memory"},
		{name: "cgroup OOM kills", in: one(func(h *model.HostReading) { h.CgroupOOMKills = model.Some(2) }), want: "kernel_oom_kill"},
		{name: "no cgroup kills", in: one(func(h *model.HostReading) { h.CgroupOOMKills = model.Some(0) }), none: "kernel_oom_kill"},
		{name: "docker's 64 MiB shm at TP 4", in: one(func(h *model.HostReading) {
			h.Procs[0].Cmdline = "vllm serve m --tensor-parallel-size 4"
			h.ShmTotal, h.ShmFree = model.Some(64<<20), model.Some(60<<20)
		}), want: "shm_small", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "--shm-size") || !strings.Contains(f.Title, "64 MiB") {
				t.Errorf("%+v", f)
			}
		}},
		{name: "shm with room", in: one(func(h *model.HostReading) { h.Procs[0].Cmdline, h.ShmTotal = "vllm serve m -tp=4", model.Some(16*gb) }), none: "shm_small"},
		{name: "SGLang's TP flag", in: one(func(h *model.HostReading) {
			h.Procs[0].Cmdline, h.ShmTotal = "python3 -m sglang.launch_server --tp-size 8", model.Some(64<<20)
		}), want: "shm_small"},
		{name: "no TP: any shm", in: one(func(h *model.HostReading) { h.ShmTotal = model.Some(64 << 20) }), none: "shm_small"},
		{name: "model cache disk full", in: one(func(h *model.HostReading) {
			h.Disks = []model.DiskFree{{Path: "/root/.cache/huggingface/hub", What: "model cache", Free: model.Some(3 * gb), Total: model.Some(500 * gb)}}
		}), want: "disk_low", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "HF_HOME") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		// Each engine's own store and knobs (engines/ Process.Store): the
		// advice named HF_HOME for llama.cpp and Ollama too.
		{name: "Ollama's models disk full", in: input(withHost(hostReading(0.2, func(h *model.HostReading) {
			h.Disks = []model.DiskFree{{Path: "/usr/share/ollama/.ollama/models", What: "Ollama models", Free: model.Some(3 * gb), Total: model.Some(500 * gb)}}
		}), func(e *Endpoint) { e.Identity.Engine = model.Ollama })), want: "disk_low", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "move the Ollama models (OLLAMA_MODELS) to a bigger disk") || hasAction(f, "HF_HOME") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "llama.cpp's model files disk full", in: input(withHost(hostReading(0.2, func(h *model.HostReading) {
			h.Disks = []model.DiskFree{{Path: "models", What: "model files", Free: model.Some(3 * gb), Total: model.Some(500 * gb)}}
		}), func(e *Endpoint) { e.Identity.Engine = model.LlamaCpp })), want: "disk_low", check: func(t *testing.T, f *Finding) {
			if !hasAction(f, "(LLAMA_CACHE) to a bigger disk; a model file given by path (.gguf) moves with its path") || hasAction(f, "HF_HOME") {
				t.Errorf("%+v", f.Actions)
			}
		}},
		{name: "disks with room", in: one(func(h *model.HostReading) {
			h.Disks = []model.DiskFree{{Path: "/var/log/vllm.log", What: "log", Free: model.Some(100 * gb), Total: model.Some(500 * gb)}}
		}), none: "disk_low"},
	})
}

// The kernel's OOM kill of an engine process is a critical finding with
// the kernel's line.
func TestOOMKillEvent(t *testing.T) {
	in := input(withHost(hostReading(0.1, nil), nil))
	in.Events = []model.Event{{Time: t0.Add(-time.Minute), Endpoint: url, Source: "kernel", Kind: model.KindOOMKilled, Severity: model.SevCrit,
		Title: "killed by the kernel OOM killer", Line: "Out of memory: Killed process 4790 (VLLM::EngineCor) total-vm:1kB",
		Fields: map[string]string{"phase": model.PhaseCrash, "pid": "4790", "process": "VLLM::EngineCor"}}}
	f := byID(Evaluate(in, DefaultConfig()), "kernel_oom_kill")
	if f == nil || f.Severity != model.SevCrit || f.Title != "engine killed by the kernel OOM killer" || !hasEvidence(f, "Killed process 4790") {
		t.Fatalf("%+v", f)
	}
}

// A leak is a slope held for half an hour with a good fit; the same
// growth over ten minutes, or noise around a flat line, is not.
func TestLeakRule(t *testing.T) {
	series := func(span time.Duration, f func(i int) float64) []model.Point {
		var pts []model.Point
		for i := 0; time.Duration(i)*30*time.Second <= span; i++ {
			pts = append(pts, model.Point{T: t0.Add(-span + time.Duration(i)*30*time.Second), V: f(i), OK: true})
		}
		return pts
	}
	leaking := func(i int) float64 { return 4*gb + float64(i)*(40<<20) + float64(i%3)*(8<<20) } // +80 MiB/min
	flat := func(i int) float64 { return 4*gb + float64(i%5)*(300<<20) }
	withTrend := func(rss []model.Point) Input {
		return input(withHost(hostReading(0.1, nil), func(e *Endpoint) {
			e.Trend = []MemTrend{{PID: 4711, Name: "vllm", Front: true, RSS: rss}}
		}))
	}
	runCases(t, []ruleCase{
		{name: "45 min of growth", in: withTrend(series(45*time.Minute, leaking)), want: "memory_leak", check: func(t *testing.T, f *Finding) {
			if !strings.Contains(f.Title, "RSS of PID 4711 (vllm) grows 4.7 GiB/h") || !hasEvidence(f, "R²") {
				t.Errorf("%+v", f)
			}
		}},
		{name: "10 min of growth", in: withTrend(series(10*time.Minute, leaking)), none: "memory_leak"},
		{name: "noise", in: withTrend(series(60*time.Minute, flat)), none: "memory_leak"},
	})
}
