//go:build cgo

package gpu

import (
	"encoding/binary"
	"strconv"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// Test fixtures over go-nvml's mocks. dgxa100 gives 8 A100s with names, UUIDs
// and memory but no utilisation, power, clocks… (calling those panics), so
// fillA100 sets every call the reader makes, with per-device values.

const gib = 1 << 30

// fillA100 sets the calls dgxa100 leaves out on device i.
func fillA100(d *dgxa100.Device, i int) {
	u := uint32(10 * (i + 1))
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return nvml.Utilization{Gpu: u, Memory: u / 2}, nvml.SUCCESS
	}
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		return nvml.Memory_v2{Total: 40 * gib, Reserved: gib / 2, Used: uint64(i+1) * gib, Free: 40*gib - uint64(i+1)*gib - gib/2}, nvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(100000 + 10000*i), nvml.SUCCESS }
	d.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400000, nvml.SUCCESS }
	d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
		return uint32(40 + i), nvml.SUCCESS
	}
	d.GetTemperatureThresholdFunc = func(t nvml.TemperatureThresholds) (uint32, nvml.Return) {
		if t == nvml.TEMPERATURE_THRESHOLD_SLOWDOWN {
			return 89, nvml.SUCCESS
		}
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_SM {
			return 1410, nvml.SUCCESS
		}
		return 1215, nvml.SUCCESS
	}
	d.GetMaxClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
		if c == nvml.CLOCK_SM {
			return 1410, nvml.SUCCESS
		}
		return 1215, nvml.SUCCESS
	}
	d.GetFanSpeedFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		if c == nvml.PCIE_UTIL_RX_BYTES {
			return 1000, nvml.SUCCESS
		}
		return 250, nvml.SUCCESS
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
		if i == 3 {
			return reasonSwPowerCap | reasonGpuIdle, nvml.SUCCESS
		}
		return 0, nvml.SUCCESS
	}
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return uint64(i % 2), nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: uint32(1000 + i), UsedGpuMemory: uint64(i+1) * gib}}, nvml.SUCCESS
	}
	// A100s: compute capability 8.0, PCIe Gen4 x16, 12 NVLinks. GPU 2's
	// link trained down to Gen1 x8 and retransmits; GPU 6 lost a link.
	d.GetCudaComputeCapabilityFunc = func() (int, int, nvml.Return) { return 8, 0, nvml.SUCCESS }
	d.GetMaxPcieLinkGenerationFunc = func() (int, nvml.Return) { return 4, nvml.SUCCESS }
	d.GetMaxPcieLinkWidthFunc = func() (int, nvml.Return) { return 16, nvml.SUCCESS }
	d.GetCurrPcieLinkGenerationFunc = func() (int, nvml.Return) {
		if i == 2 {
			return 1, nvml.SUCCESS
		}
		return 4, nvml.SUCCESS
	}
	d.GetCurrPcieLinkWidthFunc = func() (int, nvml.Return) {
		if i == 2 {
			return 8, nvml.SUCCESS
		}
		return 16, nvml.SUCCESS
	}
	replays := 0
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) {
		if i == 2 {
			replays += 40
		}
		return replays, nvml.SUCCESS
	}
	d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		switch {
		case l >= 12:
			return 0, nvml.ERROR_INVALID_ARGUMENT
		case i == 6 && l == 3:
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_ENABLED, nvml.SUCCESS
	}
	// NVLink data: 2 GiB sent and 1 GiB received a second (counters in
	// KiB, one call a refresh).
	var tx, rx uint64
	d.GetFieldValuesFunc = func(vs []nvml.FieldValue) nvml.Return {
		tx, rx = tx+2<<20, rx+1<<20
		for k := range vs {
			v := tx
			if vs[k].FieldId == nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX {
				v = rx
			}
			binary.LittleEndian.PutUint64(vs[k].Value[:], v)
			vs[k].ValueType, vs[k].NvmlReturn = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG), uint32(nvml.SUCCESS)
		}
		return nvml.SUCCESS
	}
	// The two halves of the DGX meet across the CPU sockets; GPU 7 has
	// peer-to-peer turned off in the driver.
	d.GetTopologyCommonAncestorFunc = func(o nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
		j := o.(*dgxa100.Device).Index
		if (i < 4) != (j < 4) {
			return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
		}
		return nvml.TOPOLOGY_SINGLE, nvml.SUCCESS
	}
	d.GetP2PStatusFunc = func(o nvml.Device, _ nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
		if j := o.(*dgxa100.Device).Index; i == 7 || j == 7 {
			return nvml.P2P_STATUS_DISABLED_BY_REGKEY, nvml.SUCCESS
		}
		return nvml.P2P_STATUS_OK, nvml.SUCCESS
	}
	// GPU 5 remapped two rows and waits for a reset to apply a third.
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		if i == 5 {
			return 1, 1, true, false, nvml.SUCCESS
		}
		return 0, 0, false, false, nvml.SUCCESS
	}
}

// newDGX returns an 8-GPU mock with every call the reader makes set; no
// Xid is queued (queueXid adds some).
func newDGX() *dgxa100.Server {
	s := dgxa100.New()
	for i, d := range s.Devices {
		fillA100(d.(*dgxa100.Device), i)
		d.(*dgxa100.Device).RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	}
	var queued []nvml.EventData
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
				if len(queued) == 0 {
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
				e := queued[0]
				queued = queued[1:]
				return e, nvml.SUCCESS
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	dgxXid[s] = func(dev int, code uint64) {
		queued = append(queued, nvml.EventData{Device: s.Devices[dev], EventType: nvml.EventTypeXidCriticalError, EventData: code})
	}
	return s
}

// dgxXid queues an Xid on a DGX mock's device.
var dgxXid = map[*dgxa100.Server]func(dev int, code uint64){}

// dgxProcs is a /proc where GPU i's PID 1000+i runs a vLLM worker, except
// GPU 7's, which runs a training script.
func dgxProcs() fstest.MapFS {
	fsys := fstest.MapFS{"self/status": {Data: []byte("Name:\tllmtop\nNSpid:\t4242\n")}}
	for i := range 7 {
		fsys[strconv.Itoa(1000+i)+"/cmdline"] = &fstest.MapFile{Data: []byte("VLLM::Worker_TP" + strconv.Itoa(i))}
	}
	fsys["1007/cmdline"] = &fstest.MapFile{Data: []byte("python3\x00train.py\x00--epochs\x003\x00")}
	return fsys
}

// oneDevice returns a plain mock library over one mock device.
func oneDevice(d *mock.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12080, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(int) (nvml.Device, nvml.Return) { return d, nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(string) error { return nil }}
		},
		EventSetCreateFunc: func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED },
	}
}

// unsupportedDevice answers identity and NOT_SUPPORTED for everything else,
// as a MIG-enabled or consumer card does for many fields.
func unsupportedDevice() *mock.Device {
	ns := nvml.ERROR_NOT_SUPPORTED
	return &mock.Device{
		GetUUIDFunc:                      func() (string, nvml.Return) { return "GPU-ns", nvml.SUCCESS },
		GetNameFunc:                      func() (string, nvml.Return) { return "NVIDIA GB10", nvml.SUCCESS },
		GetUtilizationRatesFunc:          func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, ns },
		GetMemoryInfo_v2Func:             func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, ns },
		GetMemoryInfoFunc:                func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, ns },
		GetPowerUsageFunc:                func() (uint32, nvml.Return) { return 0, ns },
		GetEnforcedPowerLimitFunc:        func() (uint32, nvml.Return) { return 0, ns },
		GetPowerManagementLimitFunc:      func() (uint32, nvml.Return) { return 0, ns },
		GetTemperatureFunc:               func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, ns },
		GetTemperatureThresholdFunc:      func(nvml.TemperatureThresholds) (uint32, nvml.Return) { return 0, ns },
		GetClockInfoFunc:                 func(nvml.ClockType) (uint32, nvml.Return) { return 0, ns },
		GetMaxClockInfoFunc:              func(nvml.ClockType) (uint32, nvml.Return) { return 0, ns },
		GetFanSpeedFunc:                  func() (uint32, nvml.Return) { return 0, ns },
		GetPcieThroughputFunc:            func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 0, ns },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return 0, ns },
		GetTotalEccErrorsFunc:            func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, ns },
		GetComputeRunningProcessesFunc:   func() ([]nvml.ProcessInfo, nvml.Return) { return nil, ns },
		GetRemappedRowsFunc:              func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, ns },
		GetCudaComputeCapabilityFunc:     func() (int, int, nvml.Return) { return 12, 1, nvml.SUCCESS },
		GetMaxPcieLinkGenerationFunc:     func() (int, nvml.Return) { return 0, ns },
		GetMaxPcieLinkWidthFunc:          func() (int, nvml.Return) { return 0, ns },
		GetCurrPcieLinkGenerationFunc:    func() (int, nvml.Return) { return 0, ns },
		GetCurrPcieLinkWidthFunc:         func() (int, nvml.Return) { return 0, ns },
		GetPcieReplayCounterFunc:         func() (int, nvml.Return) { return 0, ns },
		GetNvLinkStateFunc:               func(int) (nvml.EnableState, nvml.Return) { return 0, ns },
	}
}
