//go:build cgo

package gpu

import (
	"fmt"
	"os"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmtop/llmtop/model"
)

// NewSimulated returns the demo's GPU source: n simulated devices that
// follow the simulator's load, read through the same NVML code path as real
// ones, and badged Simulated.
func NewSimulated(cfg Config, n int, load func() SimLoad) *Source {
	now := cfg.now
	lib := newSimLib(max(n, 1), load, now)
	r := newNVMLReader(lib, cfg.Filter, simProcs{pid: os.Getpid()})
	r.simulated = true
	return newSource(cfg, r)
}

// simLib is a fake nvml.Interface over simulated devices. It implements the
// calls nvmlReader makes; the embedded interface is nil, so any other call
// fails loudly (and Source.Refresh turns that into the snapshot's Err).
type simLib struct {
	nvml.Interface
	devs []*simDevice
}

func newSimLib(n int, load func() SimLoad, now func() time.Time) *simLib {
	l := &simLib{}
	for i := range n {
		l.devs = append(l.devs, &simDevice{sim: newSimGPU(i, load, now),
			uuid: fmt.Sprintf("GPU-5111a7ed-0000-4000-8000-%012d", i)})
	}
	return l
}

func (l *simLib) Init() nvml.Return                             { return nvml.SUCCESS }
func (l *simLib) Shutdown() nvml.Return                         { return nvml.SUCCESS }
func (l *simLib) DeviceGetCount() (int, nvml.Return)            { return len(l.devs), nvml.SUCCESS }
func (l *simLib) SystemGetDriverVersion() (string, nvml.Return) { return "simulated", nvml.SUCCESS }
func (l *simLib) SystemGetCudaDriverVersion() (int, nvml.Return) {
	return 0, nvml.ERROR_NOT_SUPPORTED
}
func (l *simLib) Extensions() nvml.ExtendedInterface { return l }
func (l *simLib) LookupSymbol(string) error          { return nil }

// EventSetCreate: simulated GPUs raise no Xid events.
func (l *simLib) EventSetCreate() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }

func (l *simLib) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	if i < 0 || i >= len(l.devs) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return l.devs[i], nvml.SUCCESS
}

// simDevice answers NVML device calls from a simGPU. The reading is taken on
// the first call of a refresh (utilisation) and reused for the others, so one
// refresh sees one consistent state.
type simDevice struct {
	nvml.Device
	sim  *simGPU
	uuid string
	cur  simReading
}

func (d *simDevice) GetUUID() (string, nvml.Return) { return d.uuid, nvml.SUCCESS }
func (d *simDevice) GetName() (string, nvml.Return) { return simName, nvml.SUCCESS }

// The simulated H100: compute capability 9.0 on a PCIe Gen5 x16 link
// that never retransmits, without NVLink.
func (d *simDevice) GetCudaComputeCapability() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS }
func (d *simDevice) GetMaxPcieLinkGeneration() (int, nvml.Return)      { return 5, nvml.SUCCESS }
func (d *simDevice) GetMaxPcieLinkWidth() (int, nvml.Return)           { return 16, nvml.SUCCESS }
func (d *simDevice) GetCurrPcieLinkGeneration() (int, nvml.Return)     { return 5, nvml.SUCCESS }
func (d *simDevice) GetCurrPcieLinkWidth() (int, nvml.Return)          { return 16, nvml.SUCCESS }
func (d *simDevice) GetPcieReplayCounter() (int, nvml.Return)          { return 0, nvml.SUCCESS }
func (d *simDevice) GetTopologyCommonAncestor(nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
	return nvml.TOPOLOGY_SINGLE, nvml.SUCCESS
}
func (d *simDevice) GetP2PStatus(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
	return nvml.P2P_STATUS_OK, nvml.SUCCESS
}
func (d *simDevice) GetNvLinkState(int) (nvml.EnableState, nvml.Return) {
	return 0, nvml.ERROR_NOT_SUPPORTED
}

// GetRemappedRows: a simulated GPU's memory never fails.
func (d *simDevice) GetRemappedRows() (int, int, bool, bool, nvml.Return) {
	return 0, 0, false, false, nvml.SUCCESS
}

func (d *simDevice) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	d.cur = d.sim.read()
	return nvml.Utilization{Gpu: d.cur.UtilPct, Memory: d.cur.MemUtilPct}, nvml.SUCCESS
}

func (d *simDevice) GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return) {
	return nvml.Memory_v2{Total: d.cur.MemTotal, Used: d.cur.MemUsed, Free: d.cur.MemTotal - d.cur.MemUsed}, nvml.SUCCESS
}

func (d *simDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	return nvml.Memory{Total: d.cur.MemTotal, Used: d.cur.MemUsed, Free: d.cur.MemTotal - d.cur.MemUsed}, nvml.SUCCESS
}

func (d *simDevice) GetPowerUsage() (uint32, nvml.Return)         { return d.cur.PowerMW, nvml.SUCCESS }
func (d *simDevice) GetEnforcedPowerLimit() (uint32, nvml.Return) { return d.cur.LimitMW, nvml.SUCCESS }
func (d *simDevice) GetPowerManagementLimit() (uint32, nvml.Return) {
	return d.cur.LimitMW, nvml.SUCCESS
}

func (d *simDevice) GetTemperature(nvml.TemperatureSensors) (uint32, nvml.Return) {
	return d.cur.TempC, nvml.SUCCESS
}

func (d *simDevice) GetTemperatureThreshold(t nvml.TemperatureThresholds) (uint32, nvml.Return) {
	if t != nvml.TEMPERATURE_THRESHOLD_SLOWDOWN {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return simSlowdownC, nvml.SUCCESS
}

func (d *simDevice) GetClockInfo(c nvml.ClockType) (uint32, nvml.Return) {
	switch c {
	case nvml.CLOCK_SM:
		return d.cur.SMMHz, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return d.cur.MemMHz, nvml.SUCCESS
	}
	return 0, nvml.ERROR_NOT_SUPPORTED
}

func (d *simDevice) GetMaxClockInfo(c nvml.ClockType) (uint32, nvml.Return) {
	switch c {
	case nvml.CLOCK_SM:
		return simSMMaxMHz, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return simMemMHz, nvml.SUCCESS
	}
	return 0, nvml.ERROR_NOT_SUPPORTED
}

// A data-centre card has no fan of its own: the pane shows n/a, as on the
// real thing.
func (d *simDevice) GetFanSpeed() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }

func (d *simDevice) GetPcieThroughput(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
	if c == nvml.PCIE_UTIL_RX_BYTES {
		return d.cur.RxKBs, nvml.SUCCESS
	}
	return d.cur.TxKBs, nvml.SUCCESS
}

func (d *simDevice) GetCurrentClocksEventReasons() (uint64, nvml.Return) {
	return d.cur.Reasons, nvml.SUCCESS
}

func (d *simDevice) GetCurrentClocksThrottleReasons() (uint64, nvml.Return) {
	return d.cur.Reasons, nvml.SUCCESS
}

func (d *simDevice) GetTotalEccErrors(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
	return 0, nvml.SUCCESS
}

func (d *simDevice) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	if d.cur.EngineMem == 0 {
		return nil, nvml.SUCCESS
	}
	return []nvml.ProcessInfo{{Pid: uint32(os.Getpid()), UsedGpuMemory: d.cur.EngineMem}}, nvml.SUCCESS
}

// simProcs labels the demo's own process, which plays the engine, as the
// simulated vLLM.
type simProcs struct{ pid int }

func (s simProcs) process(pid int, _ time.Time) model.GPUProcess {
	if pid != s.pid {
		return model.GPUProcess{PID: pid, Name: "(unknown)"}
	}
	return model.GPUProcess{PID: pid, Name: "vllm", Cmdline: "llmtop demo (simulated vLLM)", Engine: string(model.VLLM)}
}
