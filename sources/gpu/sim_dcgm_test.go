package gpu

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sim"
)

// `llmtop sim --dcgm-port` serves its simulated GPU as a DCGM exporter;
// read with the DCGM parser llmtop --dcgm uses, it is the device the sim
// runs on, holding what vLLM holds: its whole --gpu-memory-utilization
// share from the start, the rest free (the headroom the KV advice reads).
func TestSimDCGMReadsAsTheSimulatedGPU(t *testing.T) {
	for _, c := range []struct {
		cfg   sim.Config
		share float64
	}{
		{sim.Config{Scenario: sim.KVPressure}, 0.29}, // the scenario's small pool
		{sim.Config{Scenario: sim.KVPressure, GPUMemoryUtil: 0.9}, 0.9},
	} {
		c.cfg.Clock = sim.NewFakeClock(time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC))
		c.cfg.StartupTime = time.Second
		s, err := sim.New(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Advance(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		l := s.Load()
		if !l.Up {
			t.Fatal("the sim is not up after 5 s of a 1 s start")
		}
		var buf bytes.Buffer
		if err := sim.WriteDCGM(&buf, l); err != nil {
			t.Fatal(err)
		}
		scrape, err := ParseDCGM(buf.Bytes())
		if err != nil || len(scrape.GPUs) != 1 {
			t.Fatalf("ParseDCGM: %v, %d GPUs\n%s", err, len(scrape.GPUs), buf.String())
		}
		g := scrape.GPUs[0]
		if g.Index != 0 || g.UUID != sim.DCGMUUID || g.Name != l.GPUName || !g.MemUsed.OK || !g.MemTotal.OK || !g.Util.OK {
			t.Fatalf("GPU read %+v\n%s", g, buf.String())
		}
		if math.Abs(g.MemTotal.V-l.MemTotal) > 2<<20 || math.Abs(g.MemUsed.V-l.MemUsed) > 1<<20 {
			t.Errorf("memory %v of %v bytes, the sim holds %v of %v", g.MemUsed.V, g.MemTotal.V, l.MemUsed, l.MemTotal)
		}
		if got := g.MemUsed.V / g.MemTotal.V; math.Abs(got-c.share) > 0.02 {
			t.Errorf("--gpu-memory-utilization %v: the GPU reads %.3f of its memory used", c.share, got)
		}
	}
}
