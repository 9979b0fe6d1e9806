//go:build !cgo

package gpu

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Without cgo go-nvml does not compile, so this build cannot read NVML. The
// binary still builds and starts; the GPU pane says why it is empty.

// noNVML says why this build has no GPU rows: NVML exists only on Linux
// (and Windows), and the Linux build needs cgo (a C compiler at build time).
func noNVML(goos string) string {
	if goos != "linux" {
		return "NVML unavailable: there is no NVIDIA driver on " + goos + "; read a Linux box's GPUs from its DCGM exporter with --dcgm URL"
	}
	return "NVML unavailable: this llmtop was built without cgo (CGO_ENABLED=0, or no C compiler when it was built); rebuild with gcc installed, use a release build, or read a DCGM exporter with --dcgm URL"
}

// NewNVML returns a source whose snapshots explain that NVML is unavailable.
func NewNVML(cfg Config) *Source { return newSource(cfg, errRefresher(noNVML(runtime.GOOS))) }

type errRefresher string

func (e errRefresher) refresh(time.Time) (model.GPUSnapshot, []model.Event) {
	return model.GPUSnapshot{Err: string(e)}, nil
}
func (errRefresher) close() {}

// NewSimulated returns the demo's GPU source. Without cgo there is no
// nvml.Interface to put the simulated devices behind, so their readings are
// converted here with the same units the NVML reader uses.
func NewSimulated(cfg Config, n int, load func() SimLoad) *Source {
	r := &simDirect{filter: cfg.Filter}
	for i := range max(n, 1) {
		r.gpus = append(r.gpus, newSimGPU(i, load, cfg.now))
	}
	return newSource(cfg, r)
}

type simDirect struct {
	filter Filter
	gpus   []*simGPU
}

func (s *simDirect) refresh(time.Time) (model.GPUSnapshot, []model.Event) {
	snap := model.GPUSnapshot{Simulated: true, Driver: "simulated", Note: s.filter.Note()}
	for i, sg := range s.gpus {
		uuid := fmt.Sprintf("GPU-5111a7ed-0000-4000-8000-%012d", i)
		if !s.filter.Allows(i, uuid) {
			continue
		}
		r := sg.read()
		g := model.GPU{
			Index: i, UUID: uuid, Name: simName,
			Util: some(r.UtilPct), MemUtil: some(r.MemUtilPct),
			MemUsed: model.Some(float64(r.MemUsed)), MemTotal: model.Some(float64(r.MemTotal)),
			Power: model.Some(float64(r.PowerMW) / 1000), PowerLimit: model.Some(float64(r.LimitMW) / 1000),
			Temp: some(r.TempC), TempSlowdown: model.Some(simSlowdownC),
			SMClock: some(r.SMMHz), SMClockMax: model.Some(simSMMaxMHz),
			MemClock: some(r.MemMHz), MemClockMax: model.Some(simMemMHz),
			PCIeRx: model.Some(float64(r.RxKBs) * 1024), PCIeTx: model.Some(float64(r.TxKBs) * 1024),
			Throttle: DecodeThrottle(r.Reasons), ECCVolatile: model.Some(0),
			// no fan of its own, as the cgo build's simulated device says
			Unsupported: []string{model.GPUFieldFan},
		}
		if r.EngineMem > 0 {
			g.Processes = []model.GPUProcess{{PID: os.Getpid(), Name: "vllm", Cmdline: "llmtop demo (simulated vLLM)",
				Engine: string(model.VLLM), UsedMem: model.Some(math.Round(float64(r.EngineMem)))}}
		}
		snap.GPUs = append(snap.GPUs, g)
	}
	return snap, nil
}

func (s *simDirect) close() {}

func some(v uint32) model.Opt { return model.Some(float64(v)) }
