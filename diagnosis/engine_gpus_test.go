package diagnosis

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// The engine's GPUs: a subset where the process lists say so, else every
// device; every device is the snapshot's own list, not a copy (the rules
// ask it several times a second: 8 GPUs copied 66 KB a scrape).
func TestEngineGPUsCopiesOnlyASubset(t *testing.T) {
	eng := []model.GPUProcess{{PID: 7, Engine: "vllm"}}
	all := &model.GPUSnapshot{GPUs: []model.GPU{{Index: 0, Processes: eng}, {Index: 1, Processes: eng}}}
	none := &model.GPUSnapshot{GPUs: []model.GPU{{Index: 0}, {Index: 1}}}
	some := &model.GPUSnapshot{GPUs: []model.GPU{{Index: 0}, {Index: 1, Processes: eng}, {Index: 2}}}
	for name, g := range map[string]*model.GPUSnapshot{"all serve it": all, "none says": none} {
		if got := EngineGPUs(g); len(got) != len(g.GPUs) || &got[0] != &g.GPUs[0] {
			t.Errorf("%s: %d devices (a copy: %v), want the snapshot's own %d", name, len(got), len(got) > 0 && &got[0] != &g.GPUs[0], len(g.GPUs))
		}
		if a := testing.AllocsPerRun(50, func() { _ = EngineGPUs(g) }); a != 0 {
			t.Errorf("%s: %.0f allocations a call, want 0", name, a)
		}
	}
	if got := EngineGPUs(some); len(got) != 1 || got[0].Index != 1 {
		t.Errorf("a subset: %+v, want device 1 alone", got)
	}
	if EngineGPUs(nil) != nil {
		t.Error("no snapshot: want no devices")
	}
}
