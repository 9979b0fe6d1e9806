package model

import (
	"fmt"
	"time"
)

// HostReading is one look at the machine around a local endpoint's engine:
// its processes and their busiest threads, host memory and swap, the
// engine's cgroup, shared memory and free disk. sources/host sends one
// every few seconds for each endpoint on this machine; the core keeps the
// newest and the per-process memory trend, and the rules judge them.
//
// Rates (CPU, swap) cover IntervalS seconds before Time; the first look of
// a process has none (absent, not zero). What could not be read is listed
// in NotChecked as "what: not checked, because …".
type HostReading struct {
	Endpoint  string    `json:"endpoint"`
	Time      time.Time `json:"time"`
	IntervalS float64   `json:"interval_s"`
	// Procs are the engine's processes: the port's owner (the API server,
	// Front) first, then its descendants (engine core, workers).
	Procs []ProcUsage `json:"procs"`
	// CPUs is the number of online CPUs; CPUBusy the share of all of them
	// busy (0–1).
	CPUs    int `json:"cpus"`
	CPUBusy Opt `json:"cpu_busy"`
	// MemTotal and MemAvailable are /proc/meminfo's, in bytes.
	MemTotal     Opt `json:"mem_total_bytes"`
	MemAvailable Opt `json:"mem_available_bytes"`
	SwapTotal    Opt `json:"swap_total_bytes"`
	SwapFree     Opt `json:"swap_free_bytes"`
	// SwapIn and SwapOut are pages per second (/proc/vmstat pswpin/out).
	SwapIn  Opt `json:"swap_in_pages_per_s"`
	SwapOut Opt `json:"swap_out_pages_per_s"`
	// Cgroup is the front process's memory cgroup; its limit (absent when
	// unlimited), usage and OOM kills (memory.events oom_kill).
	Cgroup         string `json:"cgroup,omitempty"`
	CgroupMemLimit Opt    `json:"cgroup_mem_limit_bytes"`
	CgroupMemUsage Opt    `json:"cgroup_mem_usage_bytes"`
	CgroupOOMKills Opt    `json:"cgroup_oom_kills"`
	// ShmTotal and ShmFree are /dev/shm as the engine sees it.
	ShmTotal Opt `json:"shm_total_bytes"`
	ShmFree  Opt `json:"shm_free_bytes"`
	// Disks are the file systems the model cache and the log live on.
	Disks []DiskFree `json:"disks,omitempty"`
	// Weights are the bytes of the model's weights on disk (a checkpoint's
	// safetensors index total, a safetensors or GGUF file), WeightsFrom the
	// file that said so, as the engine sees it; absent when its arguments
	// name no model file llmtop can read.
	Weights     Opt    `json:"model_weights_bytes"`
	WeightsFrom string `json:"model_weights_from,omitempty"`
	// NotChecked says what could not be read, and why.
	NotChecked []string `json:"not_checked,omitempty"`
	// Note is a caveat that covers the whole reading (a container's PID
	// namespace).
	Note string `json:"note,omitempty"`
}

// ProcUsage is one engine process over the interval.
type ProcUsage struct {
	PID  int    `json:"pid"`
	PPID int    `json:"ppid"`
	Name string `json:"name"` // the kernel's comm (setproctitle's, e.g. "VLLM::EngineCor")
	// Cmdline is redacted (RedactCmdline).
	Cmdline string `json:"cmdline,omitempty"`
	// Front marks the process that holds the endpoint's port: the API
	// server.
	Front bool `json:"front,omitempty"`
	// CPU is the cores it used (1 = one core busy).
	CPU     Opt         `json:"cpu_cores"`
	RSS     Opt         `json:"rss_bytes"`
	Threads int         `json:"threads"`
	Busiest ThreadUsage `json:"busiest_thread"`
}

// ThreadUsage is one thread over the interval.
type ThreadUsage struct {
	TID  int    `json:"tid"`
	Name string `json:"name"`
	// CPU is the share of one core it ran (0–1); Want adds the time it
	// waited, runnable, for a CPU (schedstat): a thread that wants a whole
	// core is saturated, whether or not a busy machine gave it one.
	CPU  Opt `json:"cpu"`
	Want Opt `json:"want"`
}

// FrontProc returns the process that holds the port (nil when unknown).
func (h *HostReading) FrontProc() *ProcUsage {
	for i := range h.Procs {
		if h.Procs[i].Front {
			return &h.Procs[i]
		}
	}
	return nil
}

// DiskFree is one file system that holds something the engine needs.
type DiskFree struct {
	Path  string `json:"path"`
	What  string `json:"what"` // "model cache", "log"
	Free  Opt    `json:"free_bytes"`
	Total Opt    `json:"total_bytes"`
}

// Describe names the thread as a person would look it up: "thread
// APIServer (TID 4712) of PID 4711".
func (t ThreadUsage) Describe(pid int) string {
	return fmt.Sprintf("thread %q (TID %d) of PID %d", t.Name, t.TID, pid)
}

// KindGPUXid is the event a GPU source raises for an Xid error the driver
// reported (Fields: gpu, uuid, xid); diagnosis turns it into a finding.
const KindGPUXid = "gpu_xid"

// KindOOMKilled is the event the host source raises when the kernel's OOM
// killer names one of an endpoint's engine processes (Fields["phase"] is
// PhaseCrash: the run ends there).
const KindOOMKilled = "kernel_oom_kill"
