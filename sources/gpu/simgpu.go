package gpu

import (
	"math"
	"sync"
	"time"
)

// SimLoad is the simulator's load that the simulated GPUs follow.
type SimLoad struct {
	Util       float64 // 0–1 share of time the GPU is busy
	MemUsed    float64 // bytes held by the engine
	MemTotal   float64 // bytes on the device (0: 80 GiB)
	BatchShare float64 // 0–1 how full the running batch is
}

// simulated device constants: an H100 SXM-like card.
const (
	simName        = "NVIDIA H100 80GB HBM3 (simulated)"
	simPowerLimitW = 700.0
	simIdleW       = 72.0
	simAmbientC    = 31.0
	simSlowdownC   = 90.0
	simTempRangeC  = 46.0 // rise from ambient at the power limit
	simTempTauS    = 20.0 // thermal time constant: temperature lags power
	simSMMaxMHz    = 1980.0
	simSMIdleMHz   = 345.0
	simSMCapMHz    = 1755.0 // where the power cap holds the SM clock
	simMemMHz      = 2619.0
	simContextB    = 512 << 20 // CUDA context and driver reservations
	simDefaultMemB = 80 << 30
)

// simReading is one simulated device's state at one refresh, in NVML units.
type simReading struct {
	UtilPct, MemUtilPct uint32
	MemUsed, MemTotal   uint64
	EngineMem           uint64
	PowerMW, LimitMW    uint32
	TempC               uint32
	SMMHz, MemMHz       uint32
	RxKBs, TxKBs        uint32
	Reasons             uint64
}

// simGPU turns the simulator's load into device readings: utilisation and
// memory follow the load directly, power rises with utilisation and batch
// share, temperature follows power with a first-order lag, and the power cap
// shows up as a clock-event reason and a lower SM clock.
type simGPU struct {
	mu    sync.Mutex
	load  func() SimLoad
	now   func() time.Time
	index int
	temp  float64
	last  time.Time
}

func newSimGPU(index int, load func() SimLoad, now func() time.Time) *simGPU {
	return &simGPU{index: index, load: load, now: now, temp: simAmbientC + 4}
}

func clamp01(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}

// read advances the thermal state to now and returns the device's readings.
func (g *simGPU) read() simReading {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.load()
	util, batch := clamp01(l.Util), clamp01(l.BatchShare)
	// Tensor-parallel ranks do not run in perfect lockstep.
	util = clamp01(util * (1 - 0.02*float64(g.index)))

	total := l.MemTotal
	if total <= 0 {
		total = simDefaultMemB
	}
	engine := math.Max(math.Min(l.MemUsed, total-simContextB), 0)
	used := math.Min(engine+simContextB, total)

	power := simIdleW + (0.99*simPowerLimitW-simIdleW)*util*(0.45+0.55*batch)
	var reasons uint64
	sm := simSMIdleMHz + (simSMMaxMHz-simSMIdleMHz)*math.Min(util*4, 1)
	if util == 0 {
		reasons |= reasonGpuIdle
	}
	if power >= 0.95*simPowerLimitW {
		reasons |= reasonSwPowerCap
		sm = simSMCapMHz
	}

	now := g.now()
	if !g.last.IsZero() {
		dt := now.Sub(g.last).Seconds()
		target := simAmbientC + simTempRangeC*(power-simIdleW)/(simPowerLimitW-simIdleW)
		g.temp += (target - g.temp) * (1 - math.Exp(-math.Max(dt, 0)/simTempTauS))
	}
	g.last = now
	if g.temp >= simSlowdownC-3 {
		reasons |= reasonSwThermalSlowdown
	}

	return simReading{
		UtilPct:    uint32(math.Round(100 * util)),
		MemUtilPct: uint32(math.Round(100 * util * (0.35 + 0.5*batch))),
		MemUsed:    uint64(used),
		MemTotal:   uint64(total),
		EngineMem:  uint64(engine),
		PowerMW:    uint32(power * 1000),
		LimitMW:    uint32(simPowerLimitW * 1000),
		TempC:      uint32(math.Round(g.temp)),
		SMMHz:      uint32(sm),
		MemMHz:     uint32(simMemMHz),
		RxKBs:      uint32(40 * 1024 * util),
		TxKBs:      uint32(12 * 1024 * util),
		Reasons:    reasons,
	}
}
