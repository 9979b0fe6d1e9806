package diagnosis

import (
	"fmt"
	"strings"

	"github.com/llmtop/llmtop/model"
)

func init() {
	register(
		rule{id: "gpu_idle_waiting", checks: "GPU busy while requests wait", needs: needGPU | needMetrics, hold: holdDefault, eval: ruleIdleWaiting},
		rule{id: "gpu_throttle", checks: "GPU clocks not throttled (thermal, power, HW slowdown)", needs: needGPU, hold: holdDefault, eval: ruleThrottle},
		rule{id: "gpu_foreign_vram", checks: "no other process holds VRAM", needs: needGPU, hold: holdDefault, eval: ruleForeign},
		rule{id: "gpu_lost", checks: "every GPU answers", needs: needGPU, hold: holdNone, eval: ruleLost},
		rule{id: "gpu_xid", checks: "no GPU reported an Xid error", needs: needGPU, hold: holdNone, eval: ruleXid},
		rule{id: "gpu_row_remap", checks: "no GPU memory row remap pending or failed", needs: needGPU, hold: holdNone, eval: ruleRowRemap},
	)
}

func gpuSource(g *model.GPUSnapshot) string {
	if g.Simulated {
		return "nvml (simulated)"
	}
	return "nvml"
}

func ruleIdleWaiting(e *env) []Finding {
	g := e.in.GPU
	u := EngineGPUUtil(g)
	if !u.OK {
		return nil
	}
	util, n := u.V, 0
	for _, d := range EngineGPUs(g) {
		if d.Util.OK {
			n++
		}
	}
	if util >= e.cfg.GPUIdleUtil {
		return nil
	}
	var out []Finding
	for ep := range each(e.withMetrics()) {
		w := ep.State.Waiting
		if !w.OK || w.V < 1 {
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("GPU utilisation %.0f %% < %.0f %% over %d device(s)", util, e.cfg.GPUIdleUtil, n), Source: gpuSource(g)},
			{Text: "waiting " + num(w.V) + ", running " + optNum(ep.State.Running), Source: metricSource(*ep, "waiting")}}
		var acts []Action
		if front := frontThread(*ep); front != "" {
			// The host source read the API server: say what it saw
			// (api_server_cpu judges a saturated one).
			ev = append(ev, Evidence{Text: front, Source: "/proc"})
		} else {
			acts = append(acts, Action{Change: "check the API server's CPU (top -H): one core at 100 % is the Python front-end",
				Why: "the GPU cannot batch requests it is not handed (llmtop reads it only for an endpoint on this machine)", TradeOff: "none"})
		}
		acts = append(acts, frontLever(ep.Engine())...)
		out = append(out, Finding{Endpoint: ep.URL, Category: GPU, Severity: model.SevWarn,
			Title:    fmt.Sprintf("GPU idle (%.0f %%) while %s requests wait", util, num(w.V)),
			Evidence: ev,
			Cause:    "the bottleneck is before the GPU: tokenisation, the API server's CPU, request admission (a cap or the KV pool), or a slow client",
			Actions:  acts})
	}
	return out
}

// throttleBad are clock-event reasons that cost speed on a serving box.
var throttleBad = []string{"thermal", "hw slowdown", "hw thermal", "hw power brake", "power brake", "sw thermal"}

func ruleThrottle(e *env) []Finding {
	g := e.in.GPU
	var out []Finding
	for _, d := range EngineGPUs(g) {
		var bad []string
		for _, r := range d.Throttle {
			lr := strings.ToLower(r)
			for _, b := range throttleBad {
				if strings.Contains(lr, b) {
					bad = append(bad, r)
					break
				}
			}
		}
		heat, _ := GPUHeat(d)
		hot := heat >= model.SevWarn
		if len(bad) == 0 && !hot {
			continue
		}
		ev := []Evidence{}
		if len(bad) > 0 {
			ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d clock-event reasons: %s", d.Index, strings.Join(bad, ", ")), Source: gpuSource(g)})
		}
		if d.Temp.OK {
			t := fmt.Sprintf("GPU %d at %.0f °C", d.Index, d.Temp.V)
			if d.TempSlowdown.OK {
				t += fmt.Sprintf(" (slowdown at %.0f °C)", d.TempSlowdown.V)
			}
			ev = append(ev, Evidence{Text: t, Source: gpuSource(g)})
		}
		if d.SMClock.OK && d.SMClockMax.OK && d.SMClockMax.V > 0 {
			ev = append(ev, Evidence{Text: fmt.Sprintf("SM clock %.0f of %.0f MHz (%s)", d.SMClock.V, d.SMClockMax.V, pct(d.SMClock.V/d.SMClockMax.V)), Source: gpuSource(g)})
		}
		out = append(out, Finding{Endpoint: fmt.Sprintf("GPU %d", d.Index), Category: GPU, Severity: model.SevWarn,
			Title:    fmt.Sprintf("GPU %d throttling (%s)", d.Index, nonEmpty(strings.Join(bad, ", "), "near slowdown temperature")),
			Evidence: ev,
			Cause:    "the GPU lowers its clocks to protect itself: every step takes longer, so TTFT and ITL rise at the same load",
			Actions: []Action{{Change: "check cooling and airflow (fans, inlet temperature) and the power limit (nvidia-smi -q -d PERFORMANCE,POWER)",
				Why: "thermal and HW slowdown are hardware conditions, not engine settings", TradeOff: "none"}}})
	}
	return out
}

func ruleForeign(e *env) []Finding {
	g := e.in.GPU
	var out []Finding
	for _, d := range g.GPUs {
		var held float64
		var who []string
		for _, p := range d.Processes {
			if p.Engine != "" || p.Foreign || !p.UsedMem.OK {
				continue
			}
			held += p.UsedMem.V
			who = append(who, fmt.Sprintf("%s (pid %d, %s)", nonEmpty(p.Name, "?"), p.PID, gib(p.UsedMem.V)))
		}
		if held < e.cfg.ForeignVRAM {
			continue
		}
		out = append(out, Finding{Endpoint: fmt.Sprintf("GPU %d", d.Index), Category: GPU, Severity: model.SevWarn,
			Title:    fmt.Sprintf("other processes hold %s on GPU %d", gib(held), d.Index),
			Evidence: []Evidence{{Text: strings.Join(who, "; "), Source: gpuSource(g)}},
			Cause:    "memory another process holds is memory the engine's KV pool cannot use; engines size their pool from total VRAM and may fail to start",
			Actions: []Action{{Change: "stop or move those processes (a notebook, a stale engine, a second model)",
				Why: "frees their VRAM for the KV cache", TradeOff: "none"},
				{Change: "if they must stay: lower the engine's memory fraction by their share (" + memFractionFlags() + ")", Why: "avoids a start-up failure", TradeOff: "smaller KV pool"}}})
	}
	return out
}

func ruleLost(e *env) []Finding {
	g := e.in.GPU
	var out []Finding
	for _, d := range g.GPUs {
		if !d.Lost {
			continue
		}
		out = append(out, Finding{Endpoint: fmt.Sprintf("GPU %d", d.Index), Category: GPU, Severity: model.SevCrit,
			Title:    fmt.Sprintf("GPU %d fell off the bus", d.Index),
			Evidence: []Evidence{{Text: nonEmpty(d.Err, "GPU is lost"), Source: gpuSource(g)}},
			Cause:    "the driver lost the device (Xid 79: overheating, power, or a hardware fault); the engine on it is dead",
			Actions: []Action{{Change: "check dmesg for Xid errors; reset the GPU (nvidia-smi -r) or reboot; drain the node",
				Why: "a lost GPU does not come back by itself", TradeOff: "downtime"}}})
	}
	return out
}

// ruleRowRemap: HBM rows remapped after memory errors take effect at the
// next GPU reset (until then the bad row is still in use); a failed remap
// leaves the GPU unreliable.
func ruleRowRemap(e *env) []Finding {
	var out []Finding
	for _, d := range e.in.GPU.GPUs {
		if !d.RemapPending && !d.RemapFailed {
			continue
		}
		ev := []Evidence{{Text: fmt.Sprintf("GPU %d (%s): %s rows remapped, remap pending %v, remap failed %v", d.Index, d.Name, optNum(d.RemappedRows), d.RemapPending, d.RemapFailed),
			Source: gpuSource(e.in.GPU) + " remapped rows"}}
		if d.RemapFailed {
			out = append(out, Finding{ID: "gpu_row_remap", Category: GPU, Severity: model.SevCrit,
				Title: fmt.Sprintf("GPU %d: memory row remapping failed", d.Index), Evidence: ev,
				Cause:   "the GPU's memory has more bad rows than it can remap: computations on it may be wrong",
				Actions: []Action{{Change: "drain this GPU's engine and have the GPU replaced (RMA); nvidia-smi -q -d ROW_REMAPPER shows the counts", Why: "NVIDIA's guidance after a remap failure", TradeOff: "capacity until replaced"}}})
			continue
		}
		out = append(out, Finding{ID: "gpu_row_remap", Category: GPU, Severity: model.SevWarn,
			Title: fmt.Sprintf("GPU %d: a memory row remap waits for a GPU reset", d.Index), Evidence: ev,
			Cause:   "memory errors made the GPU remap an HBM row; the remap takes effect only after the GPU is reset",
			Actions: []Action{{Change: "at a quiet time: stop the engine on this GPU, nvidia-smi -r -i " + fmt.Sprint(d.Index) + " (or reboot), start it again", Why: "applies the remap so the bad row is no longer used", TradeOff: "a planned restart of that engine"}}})
	}
	return out
}

// ruleXid: the driver's Xid errors (NVML's event set, DCGM's last Xid), the
// newest per GPU within the event window.
func ruleXid(e *env) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for i := len(e.in.Events) - 1; i >= 0; i-- {
		x := e.in.Events[i]
		gpu := x.Fields["gpu"]
		if x.Kind != model.KindGPUXid || seen[gpu] || e.past(x.Time, e.cfg.EventWindow) || e.ahead(x.Time) {
			continue
		}
		seen[gpu] = true
		out = append(out, Finding{ID: "gpu_xid", Category: GPU, Severity: max(x.Severity, model.SevWarn), Title: x.Title,
			Evidence: []Evidence{{Text: x.Time.Format("15:04:05") + " Xid " + x.Fields["xid"] + " on GPU " + gpu, Source: gpuSource(e.in.GPU) + " Xid event"}},
			Cause:    "the driver reported an error on the GPU: application faults (13, 31, 43) follow a kernel bug or bad input; memory (48, 63, 64, 94, 95), NVLink (74), bus (79) and firmware (119, 120) errors are the hardware's",
			Actions: []Action{{Change: "dmesg -T | grep -i xid for the full line; look the code up in NVIDIA's Xid catalogue", Why: "the code says whether to restart the engine, reset the GPU or replace it", TradeOff: "none"},
				{Change: "for a hardware Xid (48, 64, 74, 79, 95, 119/120): drain the GPU's engine and reset the GPU (nvidia-smi -r) or the node", Why: "the GPU's state is not trustworthy after it", TradeOff: "a planned restart"}}})
	}
	return out
}
