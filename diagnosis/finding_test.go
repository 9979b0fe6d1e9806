package diagnosis

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestEvidenceJSONWindowInSeconds(t *testing.T) {
	e := Evidence{Text: "preemptions 2.6/s", Source: "vllm:num_preemptions_total", Window: 39023956102}
	b, err := json.Marshal(e)
	if err != nil || !strings.Contains(string(b), `"window_s":39.024`) {
		t.Fatalf("json = %s (%v)", b, err)
	}
	var back Evidence
	if err := json.Unmarshal(b, &back); err != nil || back.Window != 39024*time.Millisecond || back.Text != e.Text {
		t.Fatalf("round trip = %+v (%v)", back, err)
	}
}
