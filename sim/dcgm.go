package sim

import (
	"fmt"
	"io"
	"net/http"
)

// The simulated GPU as a DCGM exporter would serve it, for a monitor that
// reads GPUs from one (llmtop --dcgm): a person tuning a real engine sees
// its GPU's free memory there, and the KV advice names a
// --gpu-memory-utilization from it. Like vLLM, the simulated engine holds
// its whole share of the device from its start (weights, activations and
// the KV pool, Load.MemUsed), whatever the pool holds; the rest is free.
// Metric and label names are dcgm-exporter's (etc/default-counters.csv);
// the values are the simulation's.

// DCGMUUID is the simulated device's UUID.
const DCGMUUID = "GPU-5111a7ed-0000-4000-8000-000000000000"

// WriteDCGM writes l as one scrape of a DCGM exporter.
func WriteDCGM(w io.Writer, l Load) error {
	const mib = 1 << 20
	labels := fmt.Sprintf(`gpu="0",UUID=%q,device="nvidia0",modelName=%q,Hostname="llmtop-sim"`, DCGMUUID, l.GPUName)
	free := max(l.MemTotal-l.MemUsed, 0)
	metrics := []struct {
		name, help string
		v          float64
	}{
		{"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %). SIMULATED by llmtop sim.", l.Util * 100},
		{"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB). SIMULATED by llmtop sim.", l.MemUsed / mib},
		{"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB). SIMULATED by llmtop sim.", free / mib},
		{"DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W). SIMULATED by llmtop sim.", l.PowerLimit},
	}
	for _, m := range metrics {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %.0f\n", m.name, m.help, m.name, m.name, labels, m.v); err != nil {
			return err
		}
	}
	return nil
}

// DCGMHandler serves the simulated GPU at /metrics, as dcgm-exporter does.
func (s *Sim) DCGMHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_ = WriteDCGM(w, s.Load())
	})
	return mux
}
