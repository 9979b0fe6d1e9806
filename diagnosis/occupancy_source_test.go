package diagnosis

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

// TensorRT-LLM's batch per step is the newest iteration's scheduled
// requests (engines.Spec.StepBatchNewest), Triton's too (it runs
// TensorRT-LLM); llama-server's is its average since start.
func TestStepOccupancySource(t *testing.T) {
	for _, c := range []struct {
		eng       model.Engine
		text, src string
	}{
		{model.TRTLLM, "3 requests scheduled in the newest iteration", "inflightBatchingStats.numScheduledRequests (iteration stats)"},
		{model.Triton, "3 requests scheduled in the newest iteration", "inflightBatchingStats.numScheduledRequests (iteration stats)"},
		{model.LlamaCpp, "3.00 busy slots per decode on average (the engine's own average since it started)", "batch_per_step"},
	} {
		var ep Endpoint
		ep.Identity.Engine = c.eng
		ep.State.BatchPerStep = model.Some(3)
		per, text, src, ok := stepOccupancy(ep)
		if !ok || per != 3 || text != c.text || src != c.src {
			t.Errorf("%s: %v %q %q %v", c.eng, per, text, src, ok)
		}
	}
}
