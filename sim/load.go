package sim

import "time"

// Load is the sim's current load, for simulated GPUs to follow.
type Load struct {
	Util       float64 // 0–1 share of the last second the engine spent in steps
	MemUsed    float64 // bytes the engine holds on the device (weights, activations, KV pool)
	MemTotal   float64 // bytes on the device
	KVUsed     float64 // bytes of the KV pool in use
	KVTotal    float64 // bytes of the KV pool
	BatchShare float64 // 0–1 running requests ÷ --max-num-seqs
	Up         bool    // the engine is serving
	GPUName    string  // the simulated device, as NVML would name it
	PowerLimit float64 // W
}

// Load reports the current load.
func (s *Sim) Load() Load {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runUntil(s.clock.Now())
	l := Load{MemTotal: s.cfg.gpu.VRAM, GPUName: s.cfg.gpu.Name, PowerLimit: s.cfg.gpu.PowerMax}
	switch s.phase {
	case phaseUp, phaseDead:
		e := s.eng
		perBlock := s.cfg.model.kvBytesPerToken(s.cfg.fp8) * float64(s.cfg.blockSize)
		l.KVTotal = float64(e.kv.total) * perBlock
		l.KVUsed = float64(e.kv.used) * perBlock
		l.MemUsed = s.cfg.model.WeightsBytes + nonKVOverhead + l.KVTotal
		if s.phase == phaseUp {
			l.Up = true
			l.Util = e.busy(s.now, time.Second)
			l.BatchShare = float64(len(e.running)) / float64(s.cfg.maxNumSeqs)
		}
	case phaseLoading:
		l.MemUsed = 0.5 * GiB // CUDA context while weights load
	}
	return l
}
