package core

import (
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The host around an endpoint's engine (sources/host): the newest reading,
// and each engine process's RSS and VRAM over the run, one point per
// trendStep, for the leak rule.

// trendStep spaces the memory trend's points; trendPoints bounds them
// (at 30 s, four hours).
const (
	trendStep   = 30 * time.Second
	trendPoints = 480
)

func (m *Monitor) applyHost(h model.HostReading) {
	e := m.eps[h.Endpoint]
	if e == nil {
		return
	}
	hh := h
	e.Host = &hh
	m.advance(h.Time)
	m.ver.Store++
	if e.trend == nil {
		e.trend = map[int]*diagnosis.MemTrend{}
	}
	vram := m.vramByPID()
	for _, p := range h.Procs {
		tr := e.trend[p.PID]
		if tr == nil {
			tr = &diagnosis.MemTrend{PID: p.PID, Name: p.Name, Front: p.Front}
			e.trend[p.PID] = tr
		}
		if n := len(tr.RSS); n > 0 && h.Time.Sub(tr.RSS[n-1].T) < trendStep {
			continue
		}
		tr.RSS = appendBounded(tr.RSS, model.Point{T: h.Time, V: p.RSS.V, OK: p.RSS.OK})
		v, ok := vram[p.PID]
		tr.VRAM = appendBounded(tr.VRAM, model.Point{T: h.Time, V: v, OK: ok})
	}
	// A process gone is no longer this engine's.
	for pid := range e.trend {
		if !hasPID(h.Procs, pid) {
			delete(e.trend, pid)
		}
	}
}

// vramByPID is the VRAM each process holds in the newest GPU snapshot,
// summed over devices.
func (m *Monitor) vramByPID() map[int]float64 {
	out := map[int]float64{}
	if m.gpu == nil {
		return out
	}
	for _, g := range m.gpu.GPUs {
		for _, p := range g.Processes {
			if p.UsedMem.OK {
				out[p.PID] += p.UsedMem.V
			}
		}
	}
	return out
}

func appendBounded(s []model.Point, p model.Point) []model.Point {
	if len(s) >= trendPoints {
		s = append(s[:0], s[1:]...)
	}
	return append(s, p)
}

func hasPID(ps []model.ProcUsage, pid int) bool {
	for _, p := range ps {
		if p.PID == pid {
			return true
		}
	}
	return false
}

// hostInput hands the rules the endpoint's newest host reading (nil when
// none, or when it is older than two minutes: a stale CPU reading judges
// nothing) and its processes' memory trend.
func (m *Monitor) hostInput(ep *diagnosis.Endpoint, e *Endpoint, now time.Time) {
	if e.Host == nil || now.Sub(e.Host.Time) > 2*time.Minute {
		return
	}
	ep.Host = e.Host
	for _, p := range e.Host.Procs {
		if tr := e.trend[p.PID]; tr != nil {
			ep.Trend = append(ep.Trend, *tr)
		}
	}
}
