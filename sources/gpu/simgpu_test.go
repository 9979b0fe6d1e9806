package gpu

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// fakeClock and a settable load drive the simulated GPUs in tests.
type simDriver struct {
	mu   sync.Mutex
	now  time.Time
	load SimLoad
}

func (d *simDriver) clock() time.Time { d.mu.Lock(); defer d.mu.Unlock(); return d.now }
func (d *simDriver) get() SimLoad     { d.mu.Lock(); defer d.mu.Unlock(); return d.load }
func (d *simDriver) set(l SimLoad, advance time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.load, d.now = l, d.now.Add(advance)
}

func TestSimGPUFollowsLoad(t *testing.T) {
	d := &simDriver{now: time.Unix(0, 0)}
	g := newSimGPU(0, d.get, d.clock)
	idle := g.read()
	if idle.UtilPct != 0 || idle.PowerMW != uint32(simIdleW*1000) || idle.Reasons&reasonGpuIdle == 0 {
		t.Errorf("idle %+v", idle)
	}
	d.set(SimLoad{Util: 1, BatchShare: 0.1, MemUsed: 70 << 30, MemTotal: 80 << 30}, time.Second)
	small := g.read()
	d.set(SimLoad{Util: 1, BatchShare: 1, MemUsed: 70 << 30, MemTotal: 80 << 30}, time.Second)
	full := g.read()
	if !(full.PowerMW > small.PowerMW && small.PowerMW > idle.PowerMW) {
		t.Errorf("power must rise with batch share: idle %d small %d full %d", idle.PowerMW, small.PowerMW, full.PowerMW)
	}
	if full.Reasons&reasonSwPowerCap == 0 || full.SMMHz != simSMCapMHz {
		t.Errorf("a full batch at 99%% of the limit must show the power cap: %+v", full)
	}
	if full.UtilPct != 100 || full.EngineMem != 70<<30 || full.MemUsed != 70<<30+simContextB || full.MemTotal != 80<<30 {
		t.Errorf("util/memory %+v", full)
	}
	// Temperature lags: two seconds in, it has barely moved; after ten
	// time constants it has reached the level the power sets.
	if full.TempC > idle.TempC+6 {
		t.Errorf("temperature jumped: %d → %d", idle.TempC, full.TempC)
	}
	d.set(d.get(), 10*simTempTauS*time.Second)
	hot := g.read()
	want := simAmbientC + simTempRangeC*(float64(hot.PowerMW)/1000-simIdleW)/(simPowerLimitW-simIdleW)
	if diff := float64(hot.TempC) - want; diff < -1 || diff > 1 {
		t.Errorf("settled temperature %d, want ≈%.0f", hot.TempC, want)
	}
}

func TestSimGPUClampsBadLoad(t *testing.T) {
	d := &simDriver{now: time.Unix(0, 0), load: SimLoad{Util: 7, BatchShare: -1, MemUsed: 1 << 50, MemTotal: 0}}
	r := newSimGPU(0, d.get, d.clock).read()
	if r.UtilPct != 100 || r.MemTotal != simDefaultMemB || r.MemUsed != simDefaultMemB || r.PowerMW > r.LimitMW {
		t.Errorf("%+v", r)
	}
}

func TestSimulatedSource(t *testing.T) {
	d := &simDriver{now: time.Unix(0, 0), load: SimLoad{Util: 0.6, BatchShare: 0.5, MemUsed: 60 << 30, MemTotal: 80 << 30}}
	src := NewSimulated(Config{Now: d.clock}, 2, d.get)
	defer src.Close()
	snap, ev := src.Refresh()
	if !snap.Simulated || snap.Err != "" || len(snap.GPUs) != 2 || len(ev) != 0 {
		t.Fatalf("%+v %v", snap, ev)
	}
	g := snap.GPUs[0]
	if !strings.Contains(g.Name, "simulated") || g.Util != model.Some(60) || g.MemTotal != model.Some(80<<30) ||
		!g.Power.OK || !g.Temp.OK || g.Fan.OK || !g.IsUnsupported(model.GPUFieldFan) || g.Throttle == nil {
		t.Errorf("GPU 0 %+v", g)
	}
	if len(g.Processes) != 1 || g.Processes[0].Engine != string(model.VLLM) || g.Processes[0].PID != os.Getpid() ||
		g.Processes[0].UsedMem != model.Some(60<<30) || g.Processes[0].Foreign {
		t.Errorf("processes %+v", g.Processes)
	}
	if snap.GPUs[1].Util.V >= g.Util.V {
		t.Errorf("ranks should not be identical: %v %v", g.Util.V, snap.GPUs[1].Util.V)
	}
	d.set(SimLoad{Util: 0.9, BatchShare: 1, MemUsed: 60 << 30, MemTotal: 80 << 30}, time.Second)
	next, _ := src.Refresh()
	if next.GPUs[0].Util != model.Some(90) || next.GPUs[0].Power.V <= g.Power.V {
		t.Errorf("did not follow the load: %+v", next.GPUs[0])
	}
	one := NewSimulated(Config{Filter: NewFilter(map[int]bool{1: true}, "", false)}, 2, d.get)
	if s, _ := one.Refresh(); len(s.GPUs) != 1 || s.GPUs[0].Index != 1 {
		t.Errorf("filter: %+v", s.GPUs)
	}
}
