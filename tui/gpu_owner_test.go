package tui

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Issue 14 item 7: a DCGM exporter's GPU shows its host (and, long, its
// pod) beside the model; the host is no longer a prefix of the name, which
// the short form cut to "n1:".
func TestGPUNameShowsOwner(t *testing.T) {
	g := model.GPU{Name: "NVIDIA H100 80GB HBM3", Owner: &model.GPUOwner{Host: "n1", Namespace: "llm", Pod: "vllm-0"}}
	if got := gpuName(g, false); got != "H100@n1" {
		t.Errorf("short %q", got)
	}
	if got := gpuName(g, true); got != "H100 80GB HBM3@n1 llm/vllm-0" {
		t.Errorf("long %q", got)
	}
	g.Owner = nil
	if got := gpuName(g, false); got != "H100" {
		t.Errorf("no owner %q", got)
	}
}
