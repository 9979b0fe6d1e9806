package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// rayCapture is a Ray node's metrics export port with two Ray Serve LLM
// replicas (WorkerId) of one vLLM model, in the shape SERVING-LAYERS.md §3f
// gives (vLLM's names under ray_vllm:, Ray's labels beside model_name),
// plus one of Ray's own series.
const rayCapture = `# TYPE ray_vllm:num_requests_running gauge
ray_vllm:num_requests_running{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="aa",model_name="m"} 3.0
ray_vllm:num_requests_running{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="bb",model_name="m"} 9.0
# TYPE ray_vllm:num_requests_waiting gauge
ray_vllm:num_requests_waiting{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="aa",model_name="m"} 0.0
ray_vllm:num_requests_waiting{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="bb",model_name="m"} 2.0
# TYPE ray_vllm:kv_cache_usage_perc gauge
ray_vllm:kv_cache_usage_perc{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="aa",model_name="m"} 0.2
ray_vllm:kv_cache_usage_perc{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="bb",model_name="m"} 0.9
# TYPE ray_vllm:generation_tokens_total counter
ray_vllm:generation_tokens_total{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="aa",model_name="m"} 100.0
ray_vllm:generation_tokens_total{Component="core_worker",NodeAddress="10.0.0.5",SessionName="s1",Version="2.49.0",WorkerId="bb",model_name="m"} 250.0
# TYPE ray_node_cpu_utilization gauge
ray_node_cpu_utilization{NodeAddress="10.0.0.5",SessionName="s1"} 12.5
`

// Issue 30: a serving layer added as one file in engines/ (rayserve.go)
// and one registration line is detected from its metrics, read by vLLM's
// adapter with each Ray replica as a data-parallel engine (KV the fullest
// replica's, counts added up), and cited under the names it serves.
func TestRayServeIsDetectedAndReadAsVLLMReplicas(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(rayCapture))
	}))
	defer srv.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: srv.URL})
	if !sc.OK() {
		t.Fatalf("scrape: %s (%s)", sc.Err, sc.Hint)
	}
	if sc.Identity.Engine != engines.RayServeID {
		t.Fatalf("detected %q, want %q", sc.Identity.Engine, engines.RayServeID)
	}
	if len(sc.Samples) != 1 {
		t.Fatalf("%d samples", len(sc.Samples))
	}
	s := sc.Samples[0]
	if s.Gauges[model.KVUsage] != 0.9 || s.Gauges[model.Running] != 12 || s.Gauges[model.Waiting] != 2 || s.Counters[model.GenTokens] != 350 {
		t.Errorf("KV %v running %v waiting %v gen %v: want the fullest replica's 0.9 and the sums 12, 2, 350",
			s.Gauges[model.KVUsage], s.Gauges[model.Running], s.Gauges[model.Waiting], s.Counters[model.GenTokens])
	}
	if len(s.Engines) != 2 || s.Engines[1].ID != "bb" || s.Engines[1].KVUsage.V != 0.9 {
		t.Errorf("replicas %+v", s.Engines)
	}
	if got := s.From[string(model.KVUsage)]; got != `ray_vllm:kv_cache_usage_perc{WorkerId="bb"}` {
		t.Errorf("KV cited as %q", got)
	}
	for _, n := range s.Notes {
		if strings.Contains(n, "vllm:") && !strings.Contains(n, "ray_vllm:") {
			t.Errorf("a note names vLLM's own metric: %q", n)
		}
	}
}
