package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func withGPU(e Endpoint, mut func(g *model.GPU)) Input {
	in := input(e)
	in.GPU = gpuSnap(40*gb, 80*gb)
	if mut != nil {
		mut(&in.GPU.GPUs[0])
	}
	return in
}

func TestGPURules(t *testing.T) {
	waiting := ep(func(e *Endpoint) { e.State.Waiting = model.Some(12) })
	runCases(t, []ruleCase{
		{name: "idle while waiting", in: withGPU(waiting, func(g *model.GPU) { g.Util = model.Some(8) }), want: "gpu_idle_waiting",
			check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "GPU utilisation 8 %") || !hasAction(f, "--api-server-count") {
					t.Errorf("%+v", *f)
				}
			}},
		{name: "idle with nobody waiting is just idle", in: withGPU(ep(nil), func(g *model.GPU) { g.Util = model.Some(8) }), none: "gpu_idle_waiting"},
		{name: "busy while waiting is not idle", in: withGPU(waiting, func(g *model.GPU) { g.Util = model.Some(30) }), none: "gpu_idle_waiting"},
		{name: "util unsupported: silent", in: withGPU(waiting, func(g *model.GPU) { g.Util = model.None }), none: "gpu_idle_waiting"},
		{name: "thermal throttle", in: withGPU(ep(nil), func(g *model.GPU) {
			g.Throttle = []string{"power cap", "thermal"}
			g.Temp, g.TempSlowdown = model.Some(88), model.Some(90)
			g.SMClock, g.SMClockMax = model.Some(1200), model.Some(1980)
		}), want: "gpu_throttle", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "thermal") || hasEvidence(f, "power cap") || !hasEvidence(f, "SM clock 1200 of 1980 MHz") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "power cap alone under load is normal", in: withGPU(ep(nil), func(g *model.GPU) { g.Throttle = []string{"power cap"} }), none: "gpu_throttle"},
		{name: "hot but not throttling yet", in: withGPU(ep(nil), func(g *model.GPU) { g.Temp, g.TempSlowdown = model.Some(87), model.Some(90) }), want: "gpu_throttle"},
		{name: "cool", in: withGPU(ep(nil), func(g *model.GPU) { g.Temp, g.TempSlowdown = model.Some(86), model.Some(90) }), none: "gpu_throttle"},
		{name: "foreign process holds VRAM", in: withGPU(ep(nil), func(g *model.GPU) {
			g.Processes = append(g.Processes, model.GPUProcess{PID: 99, Name: "jupyter", UsedMem: model.Some(6 * gb)})
		}), want: "gpu_foreign_vram", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "jupyter (pid 99, 6.0 GiB)") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "other namespace pids are not blamed", in: withGPU(ep(nil), func(g *model.GPU) {
			g.Processes = append(g.Processes, model.GPUProcess{PID: 99, Foreign: true, UsedMem: model.Some(6 * gb)})
		}), none: "gpu_foreign_vram"},
		{name: "small foreign use under threshold", in: withGPU(ep(nil), func(g *model.GPU) {
			g.Processes = append(g.Processes, model.GPUProcess{PID: 99, Name: "Xorg", UsedMem: model.Some(200 << 20)})
		}), none: "gpu_foreign_vram"},
		{name: "lost GPU", in: withGPU(ep(nil), func(g *model.GPU) { g.Lost, g.Err = true, "GPU is lost" }), want: "gpu_lost",
			check: func(t *testing.T, f *Finding) {
				if f.Severity != model.SevCrit {
					t.Errorf("sev %v", f.Severity)
				}
			}},
	})
}

func TestNoGPUSaysSo(t *testing.T) {
	in := input(ep(nil))
	in.GPU = &model.GPUSnapshot{Err: "no NVIDIA driver"}
	rep := Evaluate(in, DefaultConfig())
	if byID(rep, "gpu_idle_waiting") != nil {
		t.Fatal("ran without GPUs")
	}
	found := false
	for _, m := range rep.Missing {
		found = found || m == needNames[1].name
	}
	if !found {
		t.Fatalf("%v", rep.Missing)
	}
}

// Issue 27 item 3: a pending row remap wants a reset; a failed one, the GPU replaced.
func TestRowRemapRule(t *testing.T) {
	with := func(pending, failed bool) Input {
		in := input(ep(nil))
		in.GPU = gpuSnap(40*gb, 80*gb)
		in.GPU.GPUs[0].RemappedRows, in.GPU.GPUs[0].RemapPending, in.GPU.GPUs[0].RemapFailed = model.Some(3), pending, failed
		return in
	}
	runCases(t, []ruleCase{
		{name: "pending", in: with(true, false), want: "gpu_row_remap", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || !hasAction(f, "nvidia-smi -r -i 0") || !hasEvidence(f, "3 rows remapped") {
				t.Errorf("%+v", f)
			}
		}},
		{name: "failed", in: with(false, true), want: "gpu_row_remap", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || !hasAction(f, "RMA") {
				t.Errorf("%+v", f)
			}
		}},
		{name: "remapped and applied", in: with(false, false), none: "gpu_row_remap"},
	})
}

// An Xid event (NVML's, or DCGM's) is a finding with its meaning.
func TestXidRule(t *testing.T) {
	in := input(ep(nil))
	in.GPU = gpuSnap(40*gb, 80*gb)
	in.Events = []model.Event{{Time: t0.Add(-time.Minute), Source: "gpu", Kind: model.KindGPUXid, Severity: model.SevCrit,
		Title: "GPU 0 (H100) reported Xid 79: GPU has fallen off the bus", Fields: map[string]string{"gpu": "0", "xid": "79"}}}
	f := byID(Evaluate(in, DefaultConfig()), "gpu_xid")
	if f == nil || f.Severity != model.SevCrit || !hasEvidence(f, "Xid 79 on GPU 0") {
		t.Fatalf("%+v", f)
	}
	in.Events[0].Time = t0.Add(-time.Hour)
	if f := byID(Evaluate(in, DefaultConfig()), "gpu_xid"); f != nil {
		t.Fatalf("an hour-old Xid: %+v", f)
	}
}
