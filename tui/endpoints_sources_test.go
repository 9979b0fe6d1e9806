package tui

import (
	"strings"
	"testing"
)

// A GPU source that runs but reads no GPU (no driver, --no-gpu) is not
// "gpu ok" on the sources line: the GPU pane said "no NVIDIA driver" while
// the Endpoints pane said ok.
func TestSourcesLineSaysGPUReadsNothing(t *testing.T) {
	m := scenario(healthy, 1, false)
	m.Update(modelGPUErr("no NVIDIA driver: libnvidia-ml.so.1 not found"))
	m.Update(press("7"))
	out := screen(t, m, 120, 40)
	if strings.Contains(out, "gpu ok") || !strings.Contains(out, "gpu ✗ no NVIDIA driver") {
		t.Errorf("sources line, want gpu ✗ no NVIDIA driver:\n%s", out)
	}
}
