package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
)

// Values no engine can mean are rejected per series, with a note, before
// series are summed: one engine's -5 waiting does not pull the total down,
// and a negative counter or histogram sum is "--", never a number.
func TestImplausibleValuesRejectedPerSeries(t *testing.T) {
	body := `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} -5
vllm:num_requests_waiting{engine="1",model_name="m"} 10
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} NaN
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} +Inf
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} -2547
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 100
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.1"} 1
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="+Inf"} 1
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} -3
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 1
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			_, _ = w.Write([]byte(body))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	sc := ScrapeOnce(context.Background(), Config{URL: srv.URL, Engine: model.VLLM})
	if !sc.OK() {
		t.Fatalf("scrape: %s", sc.Err)
	}
	s := only(t, sc.Samples)
	if s.Gauges[model.Waiting] != 10 {
		t.Errorf("waiting = %v, want 10 (engine 0's -5 rejected)", s.Gauges[model.Waiting])
	}
	for _, g := range []model.Gauge{model.Running, model.KVUsage} {
		if v, ok := s.Gauges[g]; ok {
			t.Errorf("%s = %v, want not exposed", g, v)
		}
	}
	if v, ok := s.Counters[model.GenTokens]; ok {
		t.Errorf("generation tokens = %v, want not exposed", v)
	}
	if s.Counters[model.PromptTokens] != 100 {
		t.Errorf("prompt tokens = %v, want 100 (a good series is kept)", s.Counters[model.PromptTokens])
	}
	if h, ok := s.Latencies[model.TTFT]; ok {
		t.Errorf("TTFT = %+v, want not exposed (negative sum)", h)
	}
	note := strings.Join(s.Notes, "\n")
	if !strings.Contains(note, "rejected 5 series with values no engine can mean") ||
		!strings.Contains(note, `vllm:generation_tokens_total{engine="0",model_name="m"} = -2547`) {
		t.Errorf("notes %q", s.Notes)
	}
}

// The real captures hold no such value: nothing is rejected from them.
func TestFixturesHaveNothingImplausible(t *testing.T) {
	for _, name := range []string{"vllm.txt", "sglang.txt", "tgi.txt", "llamacpp.txt", "trtllm.txt", "triton.txt"} {
		if notes := rejectImplausible(fixture(t, name)); notes != nil {
			t.Errorf("%s: %q", name, notes)
		}
	}
}
