//go:build cgo

package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmtop/llmtop/model"
)

// isLost reports the returns that mean the device itself stopped answering.
func isLost(ret nvml.Return) bool {
	return ret == nvml.ERROR_GPU_IS_LOST || ret == nvml.ERROR_UNKNOWN
}

// guard checks each NVML return of one device's refresh. A field the device
// does not support is absent and named in unsupported (the pane says n/a);
// a lost device stops the remaining calls; any other failure is remembered
// for the device's Err line.
type guard struct {
	lost        nvml.Return
	failed      []string
	unsupported []string
}

// ok reports whether the call succeeded and its value should be used. what
// names the call in the Err line; fields are the model.GPUField… names the
// call fills, recorded as unsupported when the device says so.
func (g *guard) ok(what string, ret nvml.Return, fields ...string) bool {
	switch {
	case ret == nvml.SUCCESS:
		return true
	case isLost(ret):
		g.lost = ret
	case ret == nvml.ERROR_NOT_SUPPORTED, ret == nvml.ERROR_FUNCTION_NOT_FOUND:
		// n/a on this device: MIG, unified memory, consumer cards, old drivers.
		g.unsupported = append(g.unsupported, fields...)
	case ret == nvml.ERROR_NO_DATA:
		// nothing sampled yet: absent this refresh, not an error.
	default:
		g.failed = append(g.failed, what+" ("+ret.Error()+")")
	}
	return false
}

// live reports whether further calls are worth making.
func (g *guard) live() bool { return g.lost == nvml.SUCCESS }

func some32(v uint32) model.Opt { return model.Some(float64(v)) }

// bytesOpt turns NVML's "not available" sentinel (all ones) into absent.
func bytesOpt(v uint64) model.Opt {
	if v == ^uint64(0) {
		return model.None
	}
	return model.Some(float64(v))
}

// readDevice reads one device's fields, each with its own guarded call, and
// returns the device and, when it stopped answering, the return that said so.
func (r *nvmlReader) readDevice(d *nvmlDev, now time.Time) (model.GPU, nvml.Return) {
	g := model.GPU{Index: d.index, UUID: d.uuid, Name: d.name}
	if d.h == nil {
		g.Lost, g.Err = true, d.handleErr.Error()+": no handle at start; check dmesg for an Xid"
		return g, d.handleErr
	}
	h, c := d.h, &guard{}

	if u, ret := h.GetUtilizationRates(); c.ok("utilisation", ret, model.GPUFieldUtil, model.GPUFieldMemUtil) {
		g.Util, g.MemUtil = some32(u.Gpu), some32(u.Memory)
	}
	if c.live() {
		r.readMemory(h, c, &g)
	}
	if c.live() {
		if v, ret := h.GetPowerUsage(); c.ok("power", ret, model.GPUFieldPower) {
			g.Power = model.Some(float64(v) / 1000)
		}
	}
	if c.live() {
		v, ret := h.GetEnforcedPowerLimit()
		if ret == nvml.ERROR_NOT_SUPPORTED {
			v, ret = h.GetPowerManagementLimit()
		}
		if c.ok("power limit", ret, model.GPUFieldPowerLimit) {
			g.PowerLimit = model.Some(float64(v) / 1000)
		}
	}
	if c.live() {
		if v, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); c.ok("temperature", ret, model.GPUFieldTemp) {
			g.Temp = some32(v)
		}
	}
	if c.live() {
		if v, ret := h.GetClockInfo(nvml.CLOCK_SM); c.ok("SM clock", ret, model.GPUFieldSMClock) {
			g.SMClock = some32(v)
		}
	}
	if c.live() {
		if v, ret := h.GetClockInfo(nvml.CLOCK_MEM); c.ok("memory clock", ret, model.GPUFieldMemClock) {
			g.MemClock = some32(v)
		}
	}
	if c.live() && !d.static {
		r.readStatic(d, c)
	}
	g.SMClockMax, g.MemClockMax, g.TempSlowdown = d.smMax, d.memMax, d.slowdown
	g.ComputeCap, g.PCIeGenMax, g.PCIeWidthMax, g.Peers = d.cc, d.genMax, d.widthMax, d.peers
	c.unsupported = append(c.unsupported, d.staticNA...)
	if c.live() {
		r.readLinks(d, c, &g)
	}
	if c.live() {
		if v, ret := h.GetFanSpeed(); c.ok("fan", ret, model.GPUFieldFan) {
			g.Fan = some32(v)
		}
	}
	if c.live() {
		r.readSlow(d, c, &g, now)
	}
	if c.live() {
		get := h.GetCurrentClocksThrottleReasons
		if r.hasEvents {
			get = h.GetCurrentClocksEventReasons
		}
		if v, ret := get(); c.ok("clock-event reasons", ret, model.GPUFieldThrottle) {
			g.Throttle = DecodeThrottle(v)
		}
	}
	// Volatile (since the last driver load) uncorrected errors: the number
	// nvidia-smi shows as "Volatile Uncorr. ECC".
	if c.live() {
		if v, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); c.ok("ECC", ret, model.GPUFieldECC) {
			g.ECCVolatile = model.Some(float64(v))
		}
	}
	if c.live() {
		if corr, unc, pending, failed, ret := h.GetRemappedRows(); c.ok("remapped rows", ret, model.GPUFieldRemapped) {
			g.RemappedRows = model.Some(float64(corr + unc))
			g.RemapPending, g.RemapFailed = pending, failed
		}
	}
	if c.live() {
		if ps, ret := h.GetComputeRunningProcesses(); c.ok("processes", ret, model.GPUFieldProcesses) {
			g.Processes = make([]model.GPUProcess, 0, len(ps))
			for _, p := range ps {
				gp := r.procs.process(int(p.Pid), now)
				gp.UsedMem = bytesOpt(p.UsedGpuMemory)
				g.Processes = append(g.Processes, gp)
			}
		}
	}

	if len(c.unsupported) > 0 {
		g.Unsupported = uniq(c.unsupported)
	}
	switch {
	case !c.live():
		g.Lost = true
		g.Err = c.lost.Error() + ": check dmesg for an Xid; the GPU may need a reset"
	case len(c.failed) > 0:
		g.Err = "could not read " + strings.Join(c.failed, ", ")
	}
	return g, c.lost
}

// readMemory prefers the v2 call, whose Used leaves out the memory the
// driver reserves, as nvidia-smi does since driver 510.
func (r *nvmlReader) readMemory(h nvml.Device, c *guard, g *model.GPU) {
	if r.hasMemV2 {
		m, ret := h.GetMemoryInfo_v2()
		if ret == nvml.SUCCESS {
			g.MemUsed, g.MemTotal = bytesOpt(m.Used), bytesOpt(m.Total)
			return
		}
		// Older drivers refuse the versioned struct; v1 still answers.
		if ret != nvml.ERROR_NOT_SUPPORTED && ret != nvml.ERROR_ARGUMENT_VERSION_MISMATCH && ret != nvml.ERROR_FUNCTION_NOT_FOUND {
			c.ok("memory", ret, model.GPUFieldMemUsed, model.GPUFieldMemTotal)
			return
		}
	}
	if m, ret := h.GetMemoryInfo(); c.ok("memory", ret, model.GPUFieldMemUsed, model.GPUFieldMemTotal) {
		g.MemUsed, g.MemTotal = bytesOpt(m.Used), bytesOpt(m.Total)
	}
}

// readStatic reads what does not change while the driver is loaded, and
// which of it the device does not support. It is retried on the next
// refresh only while the device is lost.
func (r *nvmlReader) readStatic(d *nvmlDev, c *guard) {
	before := len(c.unsupported)
	if v, ret := d.h.GetMaxClockInfo(nvml.CLOCK_SM); c.ok("max SM clock", ret, model.GPUFieldSMClockMax) {
		d.smMax = some32(v)
	}
	if c.live() {
		if v, ret := d.h.GetMaxClockInfo(nvml.CLOCK_MEM); c.ok("max memory clock", ret, model.GPUFieldMemClockMax) {
			d.memMax = some32(v)
		}
	}
	if c.live() {
		if v, ret := d.h.GetTemperatureThreshold(nvml.TEMPERATURE_THRESHOLD_SLOWDOWN); c.ok("slowdown temperature", ret, model.GPUFieldTempSlowdown) {
			d.slowdown = some32(v)
		}
	}
	if c.live() && r.has[symCC] {
		if major, minor, ret := d.h.GetCudaComputeCapability(); c.ok("compute capability", ret) {
			d.cc = fmt.Sprintf("%d.%d", major, minor)
		}
	}
	if c.live() && r.has[symGenMax] {
		if v, ret := d.h.GetMaxPcieLinkGeneration(); c.ok("max PCIe generation", ret, model.GPUFieldPCIeGen) && v > 0 {
			d.genMax = model.Some(float64(v))
		}
	}
	if c.live() && r.has[symWidthMax] {
		if v, ret := d.h.GetMaxPcieLinkWidth(); c.ok("max PCIe width", ret, model.GPUFieldPCIeGen) && v > 0 {
			d.widthMax = model.Some(float64(v))
		}
	}
	// The links the device has: NVML answers NOT_SUPPORTED (or an invalid
	// argument) past the last one, and for every link of a PCIe-only card.
	d.nvlinks = nil
	if c.live() && r.has[symNVLink] {
		for l := range nvml.NVLINK_MAX_LINKS {
			if _, ret := d.h.GetNvLinkState(l); ret == nvml.SUCCESS {
				d.nvlinks = append(d.nvlinks, l)
			} else if isLost(ret) {
				c.ok("NVLink state", ret)
				break
			}
		}
	}
	// kept on the device and added to every refresh (readDevice appends them)
	d.staticNA = append([]string(nil), c.unsupported[before:]...)
	c.unsupported = c.unsupported[:before]
	d.static = c.live()
}

// The link and capability calls, each used only where the library has it.
const (
	symCC       = "nvmlDeviceGetCudaComputeCapability"
	symGenMax   = "nvmlDeviceGetMaxPcieLinkGeneration"
	symWidthMax = "nvmlDeviceGetMaxPcieLinkWidth"
	symGen      = "nvmlDeviceGetCurrPcieLinkGeneration"
	symWidth    = "nvmlDeviceGetCurrPcieLinkWidth"
	symReplays  = "nvmlDeviceGetPcieReplayCounter"
	symNVLink   = "nvmlDeviceGetNvLinkState"
	symTopo     = "nvmlDeviceGetTopologyCommonAncestor"
	symP2P      = "nvmlDeviceGetP2PStatus"
	symFields   = "nvmlDeviceGetFieldValues"
)

var linkSymbols = []string{symCC, symGenMax, symWidthMax, symGen, symWidth, symReplays, symNVLink, symTopo, symP2P, symFields}

// readLinks reads the PCIe link as it runs now, its replay count, and how
// many of the device's NVLink links are up.
func (r *nvmlReader) readLinks(d *nvmlDev, c *guard, g *model.GPU) {
	h := d.h
	if r.has[symGen] {
		if v, ret := h.GetCurrPcieLinkGeneration(); c.ok("PCIe generation", ret, model.GPUFieldPCIeGen) && v > 0 {
			g.PCIeGen = model.Some(float64(v))
		}
	}
	if c.live() && r.has[symWidth] {
		if v, ret := h.GetCurrPcieLinkWidth(); c.ok("PCIe width", ret, model.GPUFieldPCIeGen) && v > 0 {
			g.PCIeWidth = model.Some(float64(v))
		}
	}
	if !c.live() || len(d.nvlinks) == 0 {
		return
	}
	up := 0
	for _, l := range d.nvlinks {
		st, ret := h.GetNvLinkState(l)
		if isLost(ret) {
			c.ok("NVLink state", ret)
			return
		}
		if ret == nvml.SUCCESS && st == nvml.FEATURE_ENABLED {
			up++
		}
	}
	g.NVLinks, g.NVLinksMax = model.Some(float64(up)), model.Some(float64(len(d.nvlinks)))
	d.nvlinkOK = false
	if r.has[symFields] && up > 0 {
		// The data counters over all links (scope UINT_MAX), in KiB.
		vs := []nvml.FieldValue{{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: math.MaxUint32},
			{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ScopeId: math.MaxUint32}}
		if ret := h.GetFieldValues(vs); ret == nvml.SUCCESS &&
			vs[0].NvmlReturn == uint32(nvml.SUCCESS) && vs[1].NvmlReturn == uint32(nvml.SUCCESS) &&
			vs[0].ValueType == uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG) && vs[1].ValueType == uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG) {
			d.nvlinkKiB = [2]uint64{binary.LittleEndian.Uint64(vs[0].Value[:]), binary.LittleEndian.Uint64(vs[1].Value[:])}
			d.nvlinkOK = true
		} else if isLost(ret) {
			c.ok("NVLink throughput", ret)
		}
	}
}

// slowEvery is how often the calls that cost most are made: on an H100
// (driver 580) each PCIe throughput call holds the thread for 21 ms and
// takes 1.1 ms of CPU (it samples the link), the replay counter 0.19 ms,
// against 0.15 ms for every other field together
// (BenchmarkRealNVMLCall, scripts/gpu-check.sh). Read every second they
// doubled the monitor's CPU on a GPU box; between reads the last values
// stand.
const slowEvery = 10 * time.Second

// readSlow reads the PCIe throughput and replay counter when slowEvery has
// passed since they were last read (or the clock went back), and
// otherwise gives the values and unsupported marks of that read.
func (r *nvmlReader) readSlow(d *nvmlDev, c *guard, g *model.GPU, now time.Time) {
	if !d.slowAt.IsZero() && !now.Before(d.slowAt) && now.Sub(d.slowAt) < slowEvery {
		g.PCIeRx, g.PCIeTx, g.PCIeReplays, g.PCIeReplaysPS = d.pcieRx, d.pcieTx, d.replays, d.replaysPS
		c.unsupported = append(c.unsupported, d.slowNA...)
		return
	}
	before := len(c.unsupported)
	h := d.h
	// NVML reports PCIe throughput in KB/s (1024 bytes), sampled over 20 ms.
	if v, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); c.ok("PCIe rx", ret, model.GPUFieldPCIeRx) {
		g.PCIeRx = model.Some(float64(v) * 1024)
	}
	if c.live() {
		if v, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); c.ok("PCIe tx", ret, model.GPUFieldPCIeTx) {
			g.PCIeTx = model.Some(float64(v) * 1024)
		}
	}
	if c.live() && r.has[symReplays] {
		if v, ret := h.GetPcieReplayCounter(); c.ok("PCIe replays", ret, model.GPUFieldPCIeReplays) {
			g.PCIeReplays = model.Some(float64(v))
			// the rate since the previous read (none after a counter reset)
			if d.replays.OK && now.After(d.replaysAt) && g.PCIeReplays.V >= d.replays.V {
				g.PCIeReplaysPS = model.Some((g.PCIeReplays.V - d.replays.V) / now.Sub(d.replaysAt).Seconds())
			}
			d.replaysAt = now
		}
	}
	if !c.live() {
		return // read again on the next refresh
	}
	d.pcieRx, d.pcieTx, d.replays, d.replaysPS = g.PCIeRx, g.PCIeTx, g.PCIeReplays, g.PCIeReplaysPS
	d.slowNA = append(d.slowNA[:0], c.unsupported[before:]...)
	d.slowAt = now
}

// uniq drops repeated names, keeping the first of each (several calls
// fill one field: the PCIe link's generation and width).
func uniq(xs []string) []string {
	out := xs[:0:0]
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
