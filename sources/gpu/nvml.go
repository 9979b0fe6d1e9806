//go:build cgo

package gpu

import (
	"fmt"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmtop/llmtop/model"
)

// NewNVML returns the source that reads the GPUs through NVML. It loads
// libnvidia-ml.so.1 on its first refresh; without a driver every snapshot
// carries one line saying so.
func NewNVML(cfg Config) *Source {
	return newSource(cfg, newNVMLReader(nvml.New(), cfg.Filter, newProcTable(cfg.proc())))
}

// initRetry is how long to wait before trying nvml.Init again after it failed.
const initRetry = 15 * time.Second

// pidResolver maps an NVML PID to a process.
type pidResolver interface {
	process(pid int, now time.Time) model.GPUProcess
}

// nvmlReader reads every visible device through an nvml.Interface: the real
// library, go-nvml's mocks in tests, or the demo's simulated devices.
type nvmlReader struct {
	lib       nvml.Interface
	filter    Filter
	procs     pidResolver
	simulated bool

	inited  bool
	initErr string
	retryAt time.Time

	driver, cuda string
	hasMemV2     bool // nvmlDeviceGetMemoryInfo_v2 (driver ≥ 510) excludes reserved memory
	hasEvents    bool // nvmlDeviceGetCurrentClocksEventReasons (driver ≥ 535)
	// has lists the link and capability calls the installed library
	// exports (calling one it lacks would end the process).
	has     map[string]bool
	devs    []*nvmlDev
	skipped []string // devices NVML lists but will not open
	// xid is the event set the devices' critical Xid errors arrive on
	// (nil where NVML cannot register them: no permission, old driver).
	xid nvml.EventSet
}

// nvmlDev is one visible device and what never changes about it.
type nvmlDev struct {
	h          nvml.Device
	index      int
	uuid, name string
	static     bool // max clocks and slowdown temperature read
	smMax      model.Opt
	memMax     model.Opt
	slowdown   model.Opt
	staticNA   []string // static fields the device does not support
	cc         string   // compute capability
	genMax     model.Opt
	widthMax   model.Opt
	nvlinks    []int // the NVLink links the device has
	// the slow reads (readSlow), made every slowEvery and kept between
	slowAt             time.Time
	pcieRx, pcieTx     model.Opt
	replays, replaysPS model.Opt
	replaysAt          time.Time
	slowNA             []string
	// nvlinkKiB are the NVLink data counters (tx, rx; KiB since the driver
	// loaded) of this refresh and the previous one.
	nvlinkKiB, nvlinkPrev  [2]uint64
	nvlinkOK, nvlinkPrevOK bool
	nvlinkAt               time.Time
	peers                  []model.GPUPeer
	lost                   bool
	handleErr              nvml.Return // why there is no handle (GPU lost at start)
}

// label names the device in event titles: "GPU 3 (NVIDIA H100 80GB HBM3)".
func (d *nvmlDev) label() string {
	if d.name == "" {
		return fmt.Sprintf("GPU %d", d.index)
	}
	return fmt.Sprintf("GPU %d (%s)", d.index, d.name)
}

func newNVMLReader(lib nvml.Interface, f Filter, procs pidResolver) *nvmlReader {
	return &nvmlReader{lib: lib, filter: f, procs: procs}
}

// initError says in one line why NVML is unusable and what to do.
func initError(ret nvml.Return) string {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return "no NVIDIA driver: libnvidia-ml.so.1 not found"
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return "NVIDIA driver not loaded: the nvidia kernel module is not running"
	case nvml.ERROR_NO_PERMISSION:
		return "no permission to open the NVIDIA devices (/dev/nvidia*)"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "NVML library and kernel driver versions differ: reload the nvidia module or reboot"
	}
	return "NVML init failed: " + ret.Error()
}

func (r *nvmlReader) init(now time.Time) bool {
	if ret := r.lib.Init(); ret != nvml.SUCCESS {
		r.initErr = initError(ret)
		r.retryAt = now.Add(initRetry)
		return false
	}
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		r.lib.Shutdown()
		r.initErr = "NVML cannot count the GPUs: " + ret.Error()
		r.retryAt = now.Add(initRetry)
		return false
	}
	r.inited, r.initErr = true, ""
	if v, ret := r.lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		r.driver = v
	}
	if v, ret := r.lib.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS && v > 0 {
		r.cuda = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	// Calling a symbol the installed driver lacks would crash, so the newer
	// entry points are used only where the library has them.
	ext := r.lib.Extensions()
	r.hasMemV2 = ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2") == nil
	r.hasEvents = ext.LookupSymbol("nvmlDeviceGetCurrentClocksEventReasons") == nil
	r.has = map[string]bool{}
	for _, sym := range linkSymbols {
		r.has[sym] = ext.LookupSymbol(sym) == nil
	}

	r.devs, r.skipped = r.devs[:0], nil
	for i := range n {
		d := &nvmlDev{index: i}
		h, ret := r.lib.DeviceGetHandleByIndex(i)
		switch {
		case isLost(ret):
			// Still listed, so the pane shows the device that is missing;
			// its first refresh raises the event.
			d.handleErr = ret
		case ret != nvml.SUCCESS:
			// Typically a GPU outside this container's device cgroup.
			r.skipped = append(r.skipped, fmt.Sprintf("GPU %d not readable (%s)", i, ret.Error()))
			continue
		default:
			d.h = h
			if v, ret := h.GetUUID(); ret == nvml.SUCCESS {
				d.uuid = v
			}
			if v, ret := h.GetName(); ret == nvml.SUCCESS {
				d.name = v
			}
		}
		if r.filter.Allows(i, d.uuid) {
			r.devs = append(r.devs, d)
		}
	}
	r.readPeers()
	r.watchXid()
	return true
}

// readPeers reads, once, how each pair of devices reaches each other: the
// PCIe path and whether peer-to-peer works.
func (r *nvmlReader) readPeers() {
	if !r.has[symTopo] && !r.has[symP2P] {
		return
	}
	for _, a := range r.devs {
		a.peers = nil
		for _, b := range r.devs {
			if a == b || a.h == nil || b.h == nil {
				continue
			}
			p := model.GPUPeer{Index: b.index}
			if r.has[symTopo] {
				if lvl, ret := a.h.GetTopologyCommonAncestor(b.h); ret == nvml.SUCCESS {
					p.Path = topologyPath(lvl)
				}
			}
			if r.has[symP2P] {
				if st, ret := a.h.GetP2PStatus(b.h, nvml.P2P_CAPS_INDEX_READ); ret == nvml.SUCCESS {
					p.P2P = p2pStatus(st)
				}
			}
			a.peers = append(a.peers, p)
		}
	}
}

// topologyPath names NVML's topology level between two devices.
func topologyPath(l nvml.GpuTopologyLevel) string {
	switch l {
	case nvml.TOPOLOGY_INTERNAL:
		return "same board"
	case nvml.TOPOLOGY_SINGLE:
		return "one PCIe switch"
	case nvml.TOPOLOGY_MULTIPLE:
		return "several PCIe switches"
	case nvml.TOPOLOGY_HOSTBRIDGE:
		return "host bridge"
	case nvml.TOPOLOGY_NODE:
		return "NUMA node"
	case nvml.TOPOLOGY_SYSTEM:
		return "across CPU sockets"
	}
	return ""
}

// p2pStatus says whether peer-to-peer reads work, or why not.
func p2pStatus(s nvml.GpuP2PStatus) string {
	switch s {
	case nvml.P2P_STATUS_OK:
		return "ok"
	case nvml.P2P_STATUS_CHIPSET_NOT_SUPPORTED:
		return "not supported by the chipset"
	case nvml.P2P_STATUS_GPU_NOT_SUPPORTED:
		return "not supported by the GPU"
	case nvml.P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED:
		return "not supported across this PCIe topology"
	case nvml.P2P_STATUS_DISABLED_BY_REGKEY:
		return "disabled in the driver"
	case nvml.P2P_STATUS_NOT_SUPPORTED:
		return "not supported"
	}
	return ""
}

// watchXid registers every device for critical Xid events on one set.
func (r *nvmlReader) watchXid() {
	es, ret := r.lib.EventSetCreate()
	if ret != nvml.SUCCESS {
		return
	}
	n := 0
	for _, d := range r.devs {
		if d.h != nil && d.h.RegisterEvents(nvml.EventTypeXidCriticalError, es) == nvml.SUCCESS {
			n++
		}
	}
	if n == 0 {
		es.Free()
		return
	}
	r.xid = es
}

// xidEvents drains the Xid events NVML has queued (without waiting).
func (r *nvmlReader) xidEvents(now time.Time) []model.Event {
	if r.xid == nil {
		return nil
	}
	var out []model.Event
	for range 64 {
		data, ret := r.xid.Wait(0)
		if ret != nvml.SUCCESS {
			break // ERROR_TIMEOUT: nothing more queued
		}
		idx, uuid, name := -1, "", ""
		if data.Device != nil {
			uuid, _ = data.Device.GetUUID()
		}
		for _, d := range r.devs {
			if d.uuid != "" && d.uuid == uuid {
				idx, name = d.index, d.name
			}
		}
		code := int(data.EventData)
		what, sev := xidMeaning(code)
		out = append(out, gpuEvent(now, KindGPUXid, sev, "availability",
			fmt.Sprintf("GPU %d (%s) reported Xid %d: %s", idx, name, code, what),
			map[string]string{"gpu": fmt.Sprint(idx), "uuid": uuid, "xid": fmt.Sprint(code)}))
	}
	return out
}

func (r *nvmlReader) refresh(now time.Time) (model.GPUSnapshot, []model.Event) {
	snap := model.GPUSnapshot{Simulated: r.simulated}
	if !r.inited && (now.Before(r.retryAt) || !r.init(now)) {
		snap.Err = r.initErr
		return snap, nil
	}
	snap.Driver, snap.CUDA = r.driver, r.cuda
	snap.GPUs = make([]model.GPU, 0, len(r.devs))
	var events []model.Event
	foreign := map[int]bool{}
	for _, d := range r.devs {
		g, lostRet := r.readDevice(d, now)
		if d.nvlinkOK {
			if d.nvlinkPrevOK && now.After(d.nvlinkAt) && d.nvlinkKiB[0] >= d.nvlinkPrev[0] && d.nvlinkKiB[1] >= d.nvlinkPrev[1] {
				dt := now.Sub(d.nvlinkAt).Seconds()
				g.NVLinkTx = model.Some(float64(d.nvlinkKiB[0]-d.nvlinkPrev[0]) * 1024 / dt)
				g.NVLinkRx = model.Some(float64(d.nvlinkKiB[1]-d.nvlinkPrev[1]) * 1024 / dt)
			}
			d.nvlinkPrev, d.nvlinkPrevOK, d.nvlinkAt = d.nvlinkKiB, true, now
		}
		for _, p := range g.Processes {
			if p.Foreign {
				foreign[p.PID] = true
			}
		}
		switch {
		case lostRet != nvml.SUCCESS && !d.lost:
			d.lost = true
			events = append(events, gpuEvent(now, KindGPULost, model.SevCrit, "availability",
				fmt.Sprintf("%s stopped answering: %s", d.label(), lostRet.Error()),
				map[string]string{"gpu": fmt.Sprint(d.index), "uuid": d.uuid}))
		case lostRet == nvml.SUCCESS && d.lost && d.h != nil:
			d.lost = false
			events = append(events, gpuEvent(now, KindGPURecovered, model.SevInfo, "availability",
				d.label()+" answers again",
				map[string]string{"gpu": fmt.Sprint(d.index), "uuid": d.uuid}))
		}
		snap.GPUs = append(snap.GPUs, g)
	}
	if len(snap.GPUs) == 0 {
		switch {
		case len(r.skipped) > 0:
			snap.Err = "NVML lists GPUs but none can be opened: " + strings.Join(r.skipped, "; ")
		case r.filter.indices != nil || r.filter.visible != nil:
			snap.Err = "no GPU matches --gpus and CUDA_VISIBLE_DEVICES"
		default:
			snap.Err = "NVML reports no GPUs"
		}
	}
	snap.Note = joinNotes(append([]string{r.filter.Note(), foreignNote(len(foreign))}, r.skipped...)...)
	return snap, append(events, r.xidEvents(now)...)
}

func (r *nvmlReader) close() {
	if r.xid != nil {
		r.xid.Free()
		r.xid = nil
	}
	if r.inited {
		r.lib.Shutdown()
		r.inited = false
	}
}
