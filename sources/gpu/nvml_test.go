//go:build cgo

package gpu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/llmtop/llmtop/model"
)

var t0 = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func TestReasonBitsMatchNVML(t *testing.T) {
	for _, c := range []struct {
		ours uint64
		nvml uint64
	}{
		{reasonGpuIdle, nvml.ClocksEventReasonGpuIdle},
		{reasonAppClocksSetting, nvml.ClocksEventReasonApplicationsClocksSetting},
		{reasonSwPowerCap, nvml.ClocksEventReasonSwPowerCap},
		{reasonHwSlowdown, nvml.ClocksThrottleReasonHwSlowdown},
		{reasonSyncBoost, nvml.ClocksEventReasonSyncBoost},
		{reasonSwThermalSlowdown, nvml.ClocksEventReasonSwThermalSlowdown},
		{reasonHwThermalSlowdown, nvml.ClocksThrottleReasonHwThermalSlowdown},
		{reasonHwPowerBrake, nvml.ClocksThrottleReasonHwPowerBrakeSlowdown},
		{reasonDisplayClock, nvml.ClocksEventReasonDisplayClockSetting},
	} {
		if c.ours != c.nvml {
			t.Errorf("reason bit %#x, nvml.h says %#x", c.ours, c.nvml)
		}
	}
}

func TestEightA100s(t *testing.T) {
	r := newNVMLReader(newDGX(), Filter{}, newProcTable(dgxProcs()))
	snap, events := r.refresh(t0)
	if snap.Err != "" || len(events) != 0 {
		t.Fatalf("err %q events %v", snap.Err, events)
	}
	if snap.Driver != "550.54.15" || snap.CUDA != "12.4" {
		t.Errorf("driver %q cuda %q", snap.Driver, snap.CUDA)
	}
	if len(snap.GPUs) != 8 {
		t.Fatalf("want 8 GPUs, got %d", len(snap.GPUs))
	}
	g := snap.GPUs[3]
	want := map[string]model.Opt{
		"util": model.Some(40), "memutil": model.Some(20),
		"used": model.Some(4 * gib), "total": model.Some(40 * gib),
		"power": model.Some(130), "limit": model.Some(400),
		"temp": model.Some(43), "slowdown": model.Some(89),
		"sm": model.Some(1410), "smmax": model.Some(1410), "mem": model.Some(1215), "memmax": model.Some(1215),
		"fan": model.None, "rx": model.Some(1000 * 1024), "tx": model.Some(250 * 1024), "ecc": model.Some(1),
	}
	got := map[string]model.Opt{
		"util": g.Util, "memutil": g.MemUtil, "used": g.MemUsed, "total": g.MemTotal,
		"power": g.Power, "limit": g.PowerLimit, "temp": g.Temp, "slowdown": g.TempSlowdown,
		"sm": g.SMClock, "smmax": g.SMClockMax, "mem": g.MemClock, "memmax": g.MemClockMax,
		"fan": g.Fan, "rx": g.PCIeRx, "tx": g.PCIeTx, "ecc": g.ECCVolatile,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("GPU 3 %s = %+v, want %+v", k, got[k], w)
		}
	}
	if g.Index != 3 || g.Name != "Mock NVIDIA A100-SXM4-40GB" || !strings.HasPrefix(g.UUID, "GPU-") {
		t.Errorf("identity %d %q %q", g.Index, g.Name, g.UUID)
	}
	if strings.Join(g.Throttle, ",") != "power cap" {
		t.Errorf("throttle %q: idle must be left out", g.Throttle)
	}
	if snap.GPUs[0].Throttle == nil || len(snap.GPUs[0].Throttle) != 0 {
		t.Errorf("GPU 0 throttle %#v, want empty (read, nothing active)", snap.GPUs[0].Throttle)
	}
	if len(g.Processes) != 1 || g.Processes[0].PID != 1003 || g.Processes[0].Engine != "vllm" ||
		g.Processes[0].UsedMem != model.Some(4*gib) {
		t.Errorf("processes %+v", g.Processes)
	}
	if p := snap.GPUs[7].Processes[0]; p.Engine != "" || p.Name != "python3" || p.Cmdline != "python3 train.py --epochs 3" {
		t.Errorf("GPU 7 process %+v", p)
	}
	if g.Lost || g.Err != "" || snap.Note != "" {
		t.Errorf("lost %v err %q note %q", g.Lost, g.Err, snap.Note)
	}
	// Issue 27 item 3: remapped rows, and a remap waiting for a reset.
	if g5 := snap.GPUs[5]; g5.RemappedRows != model.Some(2) || !g5.RemapPending || g5.RemapFailed || g.RemappedRows != model.Some(0) || g.RemapPending {
		t.Errorf("GPU 5 remapped %+v pending %v; GPU 3 %+v %v", g5.RemappedRows, g5.RemapPending, g.RemappedRows, g.RemapPending)
	}
}

func TestMemoryFallsBackToV1(t *testing.T) {
	s := newDGX()
	s.LookupSymbolFunc = func(sym string) error {
		if sym == "nvmlDeviceGetMemoryInfo_v2" || sym == "nvmlDeviceGetCurrentClocksEventReasons" {
			return errors.New("undefined symbol")
		}
		return nil
	}
	for i, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		dev.MemoryInfo = nvml.Memory{Total: 40 * gib, Used: uint64(i) * gib}
		dev.GetMemoryInfo_v2Func = nil // calling it would panic
		dev.GetCurrentClocksEventReasonsFunc = nil
		dev.GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return reasonHwSlowdown, nvml.SUCCESS }
	}
	snap, _ := newNVMLReader(s, Filter{}, newProcTable(dgxProcs())).refresh(t0)
	if g := snap.GPUs[2]; g.MemUsed != model.Some(2*gib) || strings.Join(g.Throttle, ",") != "HW slowdown" {
		t.Errorf("v1 memory %+v throttle %q", g.MemUsed, g.Throttle)
	}
}

func TestNotSupportedLeavesFieldsAbsent(t *testing.T) {
	r := newNVMLReader(oneDevice(unsupportedDevice()), Filter{}, newProcTable(fstest.MapFS{}))
	snap, events := r.refresh(t0)
	if len(snap.GPUs) != 1 || len(events) != 0 || snap.Err != "" {
		t.Fatalf("%+v %v", snap, events)
	}
	g := snap.GPUs[0]
	if g.Name != "NVIDIA GB10" || g.UUID != "GPU-ns" || g.Lost || g.Err != "" {
		t.Errorf("identity/state %+v", g)
	}
	for name, o := range map[string]model.Opt{"util": g.Util, "memutil": g.MemUtil, "used": g.MemUsed,
		"total": g.MemTotal, "power": g.Power, "limit": g.PowerLimit, "temp": g.Temp, "slowdown": g.TempSlowdown,
		"sm": g.SMClock, "smmax": g.SMClockMax, "mem": g.MemClock, "memmax": g.MemClockMax, "fan": g.Fan,
		"rx": g.PCIeRx, "tx": g.PCIeTx, "ecc": g.ECCVolatile, "remapped": g.RemappedRows} {
		if o.OK {
			t.Errorf("%s = %v, want absent", name, o.V)
		}
	}
	if g.Throttle != nil || g.Processes != nil {
		t.Errorf("throttle %#v processes %#v, want nil (not read)", g.Throttle, g.Processes)
	}
	// every field is named unsupported (n/a), none merely missing
	want := []string{model.GPUFieldUtil, model.GPUFieldMemUtil, model.GPUFieldMemUsed, model.GPUFieldMemTotal,
		model.GPUFieldPower, model.GPUFieldPowerLimit, model.GPUFieldTemp, model.GPUFieldSMClock,
		model.GPUFieldMemClock, model.GPUFieldSMClockMax, model.GPUFieldMemClockMax, model.GPUFieldTempSlowdown,
		model.GPUFieldPCIeGen, model.GPUFieldFan, model.GPUFieldPCIeRx, model.GPUFieldPCIeTx, model.GPUFieldPCIeReplays, model.GPUFieldThrottle,
		model.GPUFieldECC, model.GPUFieldRemapped, model.GPUFieldProcesses}
	if strings.Join(g.Unsupported, ",") != strings.Join(want, ",") {
		t.Errorf("unsupported %v\nwant        %v", g.Unsupported, want)
	}
	// the static fields are read once; they stay n/a on later refreshes
	snap, _ = r.refresh(t0.Add(time.Second))
	if g := snap.GPUs[0]; !g.IsUnsupported(model.GPUFieldTempSlowdown) || !g.IsUnsupported(model.GPUFieldSMClockMax) ||
		len(g.Unsupported) != len(want) {
		t.Errorf("second refresh unsupported %v", g.Unsupported)
	}
}

func TestUnsupportedIsNotMissing(t *testing.T) {
	s := newDGX()
	d := s.Devices[2].(*dgxa100.Device)
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NO_DATA }
	d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_TIMEOUT }
	snap, _ := newNVMLReader(s, Filter{}, newProcTable(dgxProcs())).refresh(t0)
	g := snap.GPUs[2]
	// fan is NOT_SUPPORTED on every mock A100 (fillA100)
	if strings.Join(g.Unsupported, ",") != model.GPUFieldPower+","+model.GPUFieldFan {
		t.Errorf("unsupported %v, want power and fan only", g.Unsupported)
	}
	if g.Power.OK || g.Temp.OK || g.SMClock.OK || !g.PowerLimit.OK || !g.Util.OK {
		t.Errorf("fields %+v", g)
	}
	// no data is missing but no error; a timeout is an error
	if g.Err != "could not read SM clock (ERROR_TIMEOUT), memory clock (ERROR_TIMEOUT)" {
		t.Errorf("err %q", g.Err)
	}
	if o := snap.GPUs[1]; strings.Join(o.Unsupported, ",") != model.GPUFieldFan {
		t.Errorf("GPU 1 unsupported %v", o.Unsupported)
	}
}

func TestOneFieldNotSupportedKeepsTheOthers(t *testing.T) {
	d := unsupportedDevice()
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 250500, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
	snap, _ := newNVMLReader(oneDevice(d), Filter{}, newProcTable(fstest.MapFS{})).refresh(t0)
	g := snap.GPUs[0]
	if g.Power != model.Some(250.5) || g.Util.OK {
		t.Errorf("power %+v util %+v", g.Power, g.Util)
	}
	if g.Err != "could not read processes (ERROR_NO_PERMISSION)" || g.Lost {
		t.Errorf("err %q lost %v", g.Err, g.Lost)
	}
}

func TestGPULostMidRun(t *testing.T) {
	s := newDGX()
	r := newNVMLReader(s, Filter{}, newProcTable(dgxProcs()))
	if _, ev := r.refresh(t0); len(ev) != 0 {
		t.Fatalf("events before loss: %v", ev)
	}
	// GPU 5 falls off the bus between two refreshes, part-way through.
	var mu sync.Mutex
	lost := true
	d5 := s.Devices[5].(*dgxa100.Device)
	d5.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		mu.Lock()
		defer mu.Unlock()
		if lost {
			return 0, nvml.ERROR_GPU_IS_LOST
		}
		return 150000, nvml.SUCCESS
	}
	calls := len(d5.GetTemperatureCalls())
	snap, events := r.refresh(t0.Add(time.Second))
	if len(snap.GPUs) != 8 {
		t.Fatalf("a lost GPU must not hide the others: %d GPUs", len(snap.GPUs))
	}
	g := snap.GPUs[5]
	if !g.Lost || !strings.Contains(g.Err, "ERROR_GPU_IS_LOST") || !g.Util.OK || g.Power.OK {
		t.Errorf("GPU 5 %+v", g)
	}
	if g.IsUnsupported(model.GPUFieldPower) || g.IsUnsupported(model.GPUFieldTemp) {
		t.Errorf("fields a lost GPU did not answer are missing, not n/a: %v", g.Unsupported)
	}
	if len(d5.GetTemperatureCalls()) != calls {
		t.Error("calls went on after the GPU was lost")
	}
	for i, o := range snap.GPUs {
		if i != 5 && (o.Lost || !o.Power.OK) {
			t.Errorf("GPU %d affected: %+v", i, o)
		}
	}
	if len(events) != 1 || events[0].Kind != KindGPULost || events[0].Severity != model.SevCrit ||
		events[0].Source != "gpu" || events[0].Fields["gpu"] != "5" || !events[0].Time.Equal(t0.Add(time.Second)) {
		t.Fatalf("events %+v", events)
	}
	// Still lost: no second event.
	if _, ev := r.refresh(t0.Add(2 * time.Second)); len(ev) != 0 {
		t.Errorf("repeated event %v", ev)
	}
	mu.Lock()
	lost = false
	mu.Unlock()
	snap, ev := r.refresh(t0.Add(3 * time.Second))
	if snap.GPUs[5].Lost || len(ev) != 1 || ev[0].Kind != KindGPURecovered {
		t.Errorf("recovery: %+v %v", snap.GPUs[5], ev)
	}
}

func TestGPULostAtStart(t *testing.T) {
	s := newDGX()
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		switch i {
		case 1:
			return nil, nvml.ERROR_GPU_IS_LOST
		case 2:
			return nil, nvml.ERROR_NO_PERMISSION // outside the container's device cgroup
		}
		return s.Devices[i], nvml.SUCCESS
	}
	snap, ev := newNVMLReader(s, Filter{}, newProcTable(dgxProcs())).refresh(t0)
	if len(snap.GPUs) != 7 || snap.GPUs[1].Index != 1 || !snap.GPUs[1].Lost || snap.GPUs[2].Index != 3 {
		t.Fatalf("%+v", snap.GPUs)
	}
	if len(ev) != 1 || ev[0].Kind != KindGPULost {
		t.Errorf("events %v", ev)
	}
	if snap.Note != "GPU 2 not readable (ERROR_NO_PERMISSION)" {
		t.Errorf("note %q", snap.Note)
	}
}

func TestForeignPIDNamespace(t *testing.T) {
	fsys := dgxProcs()
	// Inside a container: our PID is 1 here and 4242 on the host. PID 1003
	// happens to exist here too, but it is not the process NVML means.
	fsys["self/status"] = &fstest.MapFile{Data: []byte("NSpid:\t4242\t1\n")}
	snap, _ := newNVMLReader(newDGX(), Filter{}, newProcTable(fsys)).refresh(t0)
	for _, g := range snap.GPUs {
		if len(g.Processes) != 1 || !g.Processes[0].Foreign || g.Processes[0].Name != "" || !g.Processes[0].UsedMem.OK {
			t.Fatalf("GPU %d processes %+v", g.Index, g.Processes)
		}
	}
	if !strings.HasPrefix(snap.Note, "8 GPU process(es) belong to another PID namespace") || !strings.Contains(snap.Note, "--pid=host") {
		t.Errorf("note %q", snap.Note)
	}
}

func TestFilterRestrictsDevices(t *testing.T) {
	s := newDGX()
	uuid6 := s.Devices[6].(*dgxa100.Device).UUID
	f := NewFilter(map[int]bool{1: true, 6: true, 7: true}, "1,"+uuid6[:12], true)
	snap, _ := newNVMLReader(s, f, newProcTable(dgxProcs())).refresh(t0)
	var idx []int
	for _, g := range snap.GPUs {
		idx = append(idx, g.Index)
	}
	if len(idx) != 2 || idx[0] != 1 || idx[1] != 6 {
		t.Errorf("indices %v", idx)
	}
}

func TestNoDriver(t *testing.T) {
	// A real dlopen of a library that is not there: what a machine without
	// the NVIDIA driver sees.
	lib := nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1"))
	src := newSource(Config{Now: func() time.Time { return t0 }}, newNVMLReader(lib, Filter{}, newProcTable(fstest.MapFS{})))
	snap, ev := src.Refresh()
	if snap.Err != "no NVIDIA driver: libnvidia-ml.so.1 not found" || len(snap.GPUs) != 0 || len(ev) != 0 {
		t.Errorf("%+v %v", snap, ev)
	}
	src.Close()
}

func TestInitRetriesLater(t *testing.T) {
	ret := nvml.ERROR_DRIVER_NOT_LOADED
	lib := newDGX()
	inits := 0
	lib.InitFunc = func() nvml.Return { inits++; return ret }
	r := newNVMLReader(lib, Filter{}, newProcTable(dgxProcs()))
	if snap, _ := r.refresh(t0); !strings.HasPrefix(snap.Err, "NVIDIA driver not loaded") {
		t.Errorf("err %q", snap.Err)
	}
	ret = nvml.SUCCESS
	if snap, _ := r.refresh(t0.Add(time.Second)); snap.Err == "" || inits != 1 {
		t.Errorf("retried too soon: inits %d", inits)
	}
	if snap, _ := r.refresh(t0.Add(initRetry)); snap.Err != "" || len(snap.GPUs) != 8 {
		t.Errorf("after retry: %q %d GPUs", snap.Err, len(snap.GPUs))
	}
}

func TestRefreshTurnsPanicIntoErr(t *testing.T) {
	d := unsupportedDevice()
	d.GetPowerUsageFunc = nil // the mock panics
	src := newSource(Config{}, newNVMLReader(oneDevice(d), Filter{}, newProcTable(fstest.MapFS{})))
	snap, _ := src.Refresh()
	if !strings.HasPrefix(snap.Err, "reading GPUs failed:") {
		t.Errorf("err %q", snap.Err)
	}
}

func TestRunDeliversAndShutsDown(t *testing.T) {
	lib := newDGX()
	shut := make(chan struct{})
	lib.ShutdownFunc = func() nvml.Return { close(shut); return nvml.SUCCESS }
	src := newSource(Config{Interval: time.Millisecond}, newNVMLReader(lib, Filter{}, newProcTable(dgxProcs())))
	if src.Interval() != MinInterval {
		t.Errorf("interval %v, want clamped to %v", src.Interval(), MinInterval)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan any, 4)
	done := make(chan struct{})
	go func() { src.Run(ctx, func(m any) { got <- m }); close(done) }()
	select {
	case m := <-got:
		if s, ok := m.(model.GPUSnapshot); !ok || len(s.GPUs) != 8 || s.Time.IsZero() {
			t.Errorf("first message %T %+v", m, m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no snapshot")
	}
	src.SetInterval(time.Hour)
	cancel()
	<-done
	select {
	case <-shut:
	case <-time.After(time.Second):
		t.Error("NVML not shut down")
	}
}

var _ nvml.Interface = (*mock.Interface)(nil)

// BenchmarkRefresh8GPUs measures one refresh of 8 mocked A100s: every field
// of every device and the process table (mock cost included; the driver's
// own latency, e.g. 20 ms per PCIe sample, is not).
func BenchmarkRefresh8GPUs(b *testing.B) {
	r := newNVMLReader(newDGX(), Filter{}, newProcTable(dgxProcs()))
	r.refresh(t0)
	b.ReportAllocs()
	for b.Loop() {
		r.refresh(t0)
	}
}

func TestNoGPUSaysWhy(t *testing.T) {
	none := newDGX()
	none.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	closed := newDGX()
	closed.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
	for _, c := range []struct {
		name string
		lib  nvml.Interface
		f    Filter
		want string
	}{
		{"none", none, Filter{}, "NVML reports no GPUs"},
		{"filtered out", newDGX(), NewFilter(map[int]bool{9: true}, "", false), "no GPU matches --gpus and CUDA_VISIBLE_DEVICES"},
		{"cuda hides all", newDGX(), NewFilter(nil, "", true), "no GPU matches --gpus and CUDA_VISIBLE_DEVICES"},
		{"none opens", closed, Filter{}, "NVML lists GPUs but none can be opened: GPU 0 not readable (ERROR_NO_PERMISSION)"},
	} {
		snap, _ := newNVMLReader(c.lib, c.f, newProcTable(dgxProcs())).refresh(t0)
		if !strings.HasPrefix(snap.Err, c.want) || len(snap.GPUs) != 0 {
			t.Errorf("%s: err %q", c.name, snap.Err)
		}
	}
}

// Issue 27 item 3: a critical Xid NVML queues becomes an event naming the
// GPU and what the Xid means; nothing queued, no event.
func TestXidEventsFromNVML(t *testing.T) {
	s := newDGX()
	r := newNVMLReader(s, Filter{}, newProcTable(dgxProcs()))
	if _, evs := r.refresh(t0); len(evs) != 0 {
		t.Fatalf("events %+v", evs)
	}
	dgxXid[s](2, 79)
	_, evs := r.refresh(t0.Add(time.Second))
	if len(evs) != 1 || evs[0].Kind != KindGPUXid || evs[0].Severity != model.SevCrit || evs[0].Fields["xid"] != "79" || evs[0].Fields["gpu"] != "2" ||
		!strings.Contains(evs[0].Title, "fallen off the bus") {
		t.Fatalf("events %+v", evs)
	}
	if _, evs := r.refresh(t0.Add(2 * time.Second)); len(evs) != 0 {
		t.Fatalf("the same Xid twice: %+v", evs)
	}
	r.close()
}

// Issue 27 item 3: compute capability, the PCIe link against what it can
// do, its replays, and NVLink links up, from go-nvml's DGX A100 mock.
func TestLinksAndComputeCapability(t *testing.T) {
	r := newNVMLReader(newDGX(), Filter{}, newProcTable(dgxProcs()))
	snap, _ := r.refresh(t0)
	snap, _ = r.refresh(t0.Add(slowEvery))
	g0, g2, g6 := snap.GPUs[0], snap.GPUs[2], snap.GPUs[6]
	if g0.ComputeCap != "8.0" || g0.PCIeGen != model.Some(4) || g0.PCIeGenMax != model.Some(4) ||
		g0.PCIeWidth != model.Some(16) || g0.PCIeWidthMax != model.Some(16) || g0.PCIeReplays != model.Some(0) ||
		g0.PCIeReplaysPS != model.Some(0) || g0.NVLinks != model.Some(12) || g0.NVLinksMax != model.Some(12) ||
		g0.NVLinkTx != model.Some(2<<30/slowEvery.Seconds()) || g0.NVLinkRx != model.Some(1<<30/slowEvery.Seconds()) {
		t.Errorf("GPU 0 %+v", g0)
	}
	if g2.PCIeGen != model.Some(1) || g2.PCIeWidth != model.Some(8) || g2.PCIeReplays != model.Some(80) || g2.PCIeReplaysPS != model.Some(40/slowEvery.Seconds()) {
		t.Errorf("GPU 2 link gen %+v width %+v replays %+v (%+v/s)", g2.PCIeGen, g2.PCIeWidth, g2.PCIeReplays, g2.PCIeReplaysPS)
	}
	if g6.NVLinks != model.Some(11) || g6.NVLinksMax != model.Some(12) {
		t.Errorf("GPU 6 NVLinks %+v of %+v", g6.NVLinks, g6.NVLinksMax)
	}
	// The topology and peer-to-peer, read once.
	if len(g0.Peers) != 7 || g0.Peers[0] != (model.GPUPeer{Index: 1, Path: "one PCIe switch", P2P: "ok"}) ||
		g0.Peers[3] != (model.GPUPeer{Index: 4, Path: "across CPU sockets", P2P: "ok"}) ||
		g0.Peers[6] != (model.GPUPeer{Index: 7, Path: "across CPU sockets", P2P: "disabled in the driver"}) {
		t.Errorf("GPU 0 peers %+v", g0.Peers)
	}
}

// A driver without the link calls is never asked for them (calling a
// symbol the library lacks ends the process): the fields stay absent.
func TestLinkCallsNeedTheirSymbols(t *testing.T) {
	s := newDGX()
	s.LookupSymbolFunc = func(sym string) error {
		if slices.Contains(linkSymbols, sym) {
			return errors.New("undefined symbol")
		}
		return nil
	}
	for _, d := range s.Devices {
		dev := d.(*dgxa100.Device)
		// calling any of these would panic
		dev.GetCudaComputeCapabilityFunc, dev.GetMaxPcieLinkGenerationFunc, dev.GetMaxPcieLinkWidthFunc = nil, nil, nil
		dev.GetCurrPcieLinkGenerationFunc, dev.GetCurrPcieLinkWidthFunc, dev.GetPcieReplayCounterFunc = nil, nil, nil
		dev.GetNvLinkStateFunc, dev.GetTopologyCommonAncestorFunc, dev.GetP2PStatusFunc, dev.GetFieldValuesFunc = nil, nil, nil, nil
	}
	r := newNVMLReader(s, Filter{}, newProcTable(dgxProcs()))
	snap, _ := r.refresh(t0)
	g := snap.GPUs[0]
	if g.Err != "" || g.ComputeCap != "" || g.PCIeGen.OK || g.PCIeGenMax.OK || g.NVLinks.OK || g.NVLinkTx.OK || g.PCIeReplays.OK || g.Peers != nil || !g.Util.OK {
		t.Errorf("%+v", g)
	}
}

// The PCIe throughput and replay counter cost most of a refresh on a real
// H100 (1.1 ms of CPU and 21 ms of wall time each for the throughput): they
// are read every slowEvery, and between reads the last values stand, with
// their unsupported marks; the replays' rate is over the time between reads.
func TestSlowReadsEverySlowEvery(t *testing.T) {
	s := newDGX()
	calls := 0
	dev := s.Devices[2].(*dgxa100.Device)
	through := dev.GetPcieThroughputFunc
	dev.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		calls++
		v, ret := through(c)
		return v + uint32(calls), ret
	}
	// GPU 3 has no PCIe counters at all
	dev3 := s.Devices[3].(*dgxa100.Device)
	dev3.GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	r := newNVMLReader(s, Filter{}, newProcTable(dgxProcs()))
	var rx []float64
	for i := range 21 {
		snap, _ := r.refresh(t0.Add(time.Duration(i) * time.Second))
		g := snap.GPUs[2]
		if !g.PCIeRx.OK || !g.PCIeTx.OK || !g.PCIeReplays.OK {
			t.Fatalf("refresh %d: PCIe rx %v tx %v replays %v: a kept value went missing", i, g.PCIeRx, g.PCIeTx, g.PCIeReplays)
		}
		rx = append(rx, g.PCIeRx.V)
		if g3 := snap.GPUs[3]; !g3.IsUnsupported(model.GPUFieldPCIeRx) || g3.PCIeRx.OK {
			t.Fatalf("refresh %d: GPU 3 PCIe rx %v unsupported %v", i, g3.PCIeRx, g3.Unsupported)
		}
		if i >= 10 && g.PCIeReplaysPS != model.Some(4) {
			t.Fatalf("refresh %d: replays %v at %v/s, want 4/s (40 over 10 s)", i, g.PCIeReplays, g.PCIeReplaysPS)
		}
	}
	if calls != 6 { // rx and tx at 0, 10 and 20 s
		t.Errorf("%d PCIe throughput calls over 21 refreshes a second apart, want 6", calls)
	}
	if rx[9] != rx[0] || rx[10] == rx[9] || rx[19] != rx[10] || rx[20] == rx[19] {
		t.Errorf("PCIe rx over the refreshes %v: want new values at 0, 10 and 20 s only", rx)
	}
	// a clock set back reads again at once
	calls = 0
	r.refresh(t0)
	if calls != 2 {
		t.Errorf("after the clock went back: %d calls, want 2", calls)
	}
}

// BenchmarkRefreshOneBusyGPU is one second of the GPU source on a box with
// one busy GPU and its engine: Source.Refresh (the fields, the process
// table on the real /proc with this process as the GPU's, the cleaning of
// what enters llmtop) over the simulated library, so without NVML's own
// cost (BenchmarkRealNVMLRefresh) or cgo's. The clock moves a second a
// refresh.
func BenchmarkRefreshOneBusyGPU(b *testing.B) {
	at := t0
	cfg := Config{Now: func() time.Time { return at }}
	load := func() SimLoad { return SimLoad{Util: 0.93, MemUsed: 70 << 30, MemTotal: 80 << 30, BatchShare: 0.8} }
	s := newSource(cfg, newNVMLReader(newSimLib(1, load, cfg.now), Filter{}, newProcTable(ProcFS())))
	defer s.Close()
	if snap, _ := s.Refresh(); len(snap.GPUs) != 1 || len(snap.GPUs[0].Processes) != 1 || snap.GPUs[0].Processes[0].Cmdline == "" {
		b.Fatalf("not one GPU with this process on it: %+v", snap)
	}
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(time.Second)
		s.Refresh()
	}
}
