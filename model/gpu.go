package model

import "time"

// GPUOwner is the host and Kubernetes workload a device serves, as labels
// name them. A device shared by several pods lists them comma-separated.
type GPUOwner struct {
	Host      string `json:"host,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Container string `json:"container,omitempty"`
}

// GPU is one device's state at one refresh. Every field is an Opt: a field
// the device does not support (MIG, unified memory, consumer cards) is absent,
// named in Unsupported, shown "n/a", and does not hide the others. A field
// that is absent but not named there was not read (an error, a lost device,
// no sample yet) and shows "--".
type GPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Name  string `json:"name"`

	Util    Opt `json:"util_pct"`     // SM utilisation, %
	MemUtil Opt `json:"mem_util_pct"` // memory-controller utilisation, %

	MemUsed  Opt `json:"mem_used_bytes"`
	MemTotal Opt `json:"mem_total_bytes"`

	Power      Opt `json:"power_w"`
	PowerLimit Opt `json:"power_limit_w"`

	Temp         Opt `json:"temp_c"`
	TempSlowdown Opt `json:"temp_slowdown_c"`

	SMClock     Opt `json:"sm_clock_mhz"`
	SMClockMax  Opt `json:"sm_clock_max_mhz"`
	MemClock    Opt `json:"mem_clock_mhz"`
	MemClockMax Opt `json:"mem_clock_max_mhz"`

	Fan    Opt `json:"fan_pct"`
	PCIeRx Opt `json:"pcie_rx_bytes_per_s"`
	PCIeTx Opt `json:"pcie_tx_bytes_per_s"`

	// Throttle lists active clock-event reasons in words ("power cap",
	// "thermal", "HW slowdown"…); idle and application-clock reasons are
	// left out because they are not a problem.
	Throttle    []string `json:"throttle"`
	ECCVolatile Opt      `json:"ecc_volatile_errors"`
	// RemappedRows counts the HBM rows remapped after memory errors
	// (correctable and uncorrectable); RemapPending says a remap waits for
	// a GPU reset, RemapFailed that remapping failed (Ampere and newer;
	// absent elsewhere).
	RemappedRows Opt  `json:"remapped_rows"`
	RemapPending bool `json:"remap_pending,omitempty"`
	RemapFailed  bool `json:"remap_failed,omitempty"`

	// ComputeCap is the CUDA compute capability ("8.0" A100, "8.9" L4,
	// "9.0" H100): which number formats the device computes in (bf16
	// from 8.0, fp8 from 8.9).
	ComputeCap string `json:"compute_capability,omitempty"`
	// PCIeGen and PCIeWidth are the link's current generation and lanes;
	// the …Max fields what this device and slot can do. The link trains
	// down while idle, so only a busy device's shortfall means anything.
	PCIeGen      Opt `json:"pcie_gen"`
	PCIeGenMax   Opt `json:"pcie_gen_max"`
	PCIeWidth    Opt `json:"pcie_width"`
	PCIeWidthMax Opt `json:"pcie_width_max"`
	// PCIeReplays counts link-level retransmissions since the driver
	// loaded: a rising count is a bad riser, cable or slot.
	PCIeReplays Opt `json:"pcie_replays"`
	// PCIeReplaysPS is their rate since the previous read (NVML's
	// source reads the counter and PCIe rx/tx every 10 s: they are slow).
	PCIeReplaysPS Opt `json:"pcie_replays_per_s"`
	// NVLinks is how many of the device's NVLink links are active, and
	// NVLinksMax how many it has (absent: no NVLink, a PCIe-only card).
	NVLinks    Opt `json:"nvlinks_active"`
	NVLinksMax Opt `json:"nvlinks"`
	// NVLinkRx and NVLinkTx are the data over all its NVLink links, bytes
	// per second since the previous refresh (tensor parallelism's
	// all-reduce traffic).
	NVLinkRx Opt `json:"nvlink_rx_bytes_per_s"`
	NVLinkTx Opt `json:"nvlink_tx_bytes_per_s"`
	// Peers is how this device reaches each other visible GPU: the PCIe
	// path between them and whether they can access each other's memory
	// directly (peer-to-peer), which tensor parallelism's all-reduce
	// needs to avoid a copy through host memory.
	Peers []GPUPeer `json:"peers,omitempty"`

	Processes []GPUProcess `json:"processes"`

	// Owner is who the device belongs to where a cluster exporter says
	// so (DCGM's Hostname and Kubernetes pod labels); nil from NVML.
	Owner *GPUOwner `json:"owner,omitempty"`

	// Unsupported names, by their JSON names (the GPUField… constants), the
	// fields the device answered NOT_SUPPORTED for.
	Unsupported []string `json:"unsupported,omitempty"`

	// Lost is set when the device stopped answering (GPU_IS_LOST).
	Lost bool   `json:"lost,omitempty"`
	Err  string `json:"error,omitempty"`
}

// The JSON names of GPU's fields, as Unsupported lists them.
const (
	GPUFieldUtil         = "util_pct"
	GPUFieldMemUtil      = "mem_util_pct"
	GPUFieldMemUsed      = "mem_used_bytes"
	GPUFieldMemTotal     = "mem_total_bytes"
	GPUFieldPower        = "power_w"
	GPUFieldPowerLimit   = "power_limit_w"
	GPUFieldTemp         = "temp_c"
	GPUFieldTempSlowdown = "temp_slowdown_c"
	GPUFieldSMClock      = "sm_clock_mhz"
	GPUFieldSMClockMax   = "sm_clock_max_mhz"
	GPUFieldMemClock     = "mem_clock_mhz"
	GPUFieldMemClockMax  = "mem_clock_max_mhz"
	GPUFieldFan          = "fan_pct"
	GPUFieldPCIeRx       = "pcie_rx_bytes_per_s"
	GPUFieldPCIeTx       = "pcie_tx_bytes_per_s"
	GPUFieldThrottle     = "throttle"
	GPUFieldECC          = "ecc_volatile_errors"
	GPUFieldRemapped     = "remapped_rows"
	GPUFieldProcesses    = "processes"
	GPUFieldPCIeGen      = "pcie_gen"
	GPUFieldPCIeReplays  = "pcie_replays"
	GPUFieldNVLinks      = "nvlinks_active"
)

// IsUnsupported reports whether the device said it does not support field
// (a GPUField… name).
func (g *GPU) IsUnsupported(field string) bool {
	for _, f := range g.Unsupported {
		if f == field {
			return true
		}
	}
	return false
}

// GPUPeer is the link from one GPU to another (Index).
type GPUPeer struct {
	Index int `json:"index"`
	// Path is the nearest common point of the two on the PCIe tree:
	// "same board", "one PCIe switch", "several PCIe switches", "host
	// bridge", "NUMA node" or "across CPU sockets" ("" unknown).
	Path string `json:"path,omitempty"`
	// P2P is "ok" or why peer-to-peer reads are not possible ("" unknown).
	P2P string `json:"p2p,omitempty"`
}

// GPUProcess is a process holding memory on a GPU.
type GPUProcess struct {
	PID     int    `json:"pid"`
	Name    string `json:"name"`
	Cmdline string `json:"cmdline,omitempty"`
	UsedMem Opt    `json:"used_mem_bytes"`
	// Engine is the serving engine this process belongs to ("vllm",
	// "llama-server"…), empty for other processes.
	Engine string `json:"engine,omitempty"`
	// Foreign is set when the PID is not in our PID namespace (a container
	// without --pid=host): name and cmdline are unknown.
	Foreign bool `json:"foreign,omitempty"`
}

// GPUSnapshot is one refresh of every visible GPU.
type GPUSnapshot struct {
	Time      time.Time `json:"time"`
	GPUs      []GPU     `json:"gpus"`
	Driver    string    `json:"driver,omitempty"`
	CUDA      string    `json:"cuda,omitempty"`
	Simulated bool      `json:"simulated,omitempty"`
	// Err is set when no GPU can be read at all (no driver), with the reason
	// in one line, e.g. "no NVIDIA driver: libnvidia-ml.so.1 not found".
	Err string `json:"error,omitempty"`
	// Note is a remark the pane shows, e.g. how to see processes in other
	// PID namespaces.
	Note string `json:"note,omitempty"`
}
