package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/exporter"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine"
)

// dpCapture is one vLLM server running two data-parallel engines (vLLM
// V1 with --data-parallel-size 2 labels each engine's series engine="N"):
// engine 1's KV pool is nearly full while engine 0's is nearly empty.
const dpCapture = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 2.0
vllm:num_requests_running{engine="1",model_name="m"} 30.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 0.0
vllm:num_requests_waiting{engine="1",model_name="m"} 4.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.1
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.97
`

// Issue 30: the adapter, the fleet source's PromQL and `llmtop rules`
// agree on a data-parallel server's KV usage: the fullest engine's (0.97),
// never the mean (0.535) that once sent the fleet source and the alert
// rules their own way. The adapter reads the capture over HTTP; the fleet
// source's KV term and the alert rule's KV expression are evaluated by
// Prometheus's own engine (promtool) over the same series.
func TestDataParallelKVAgreesInAdapterFleetAndRules(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write([]byte(dpCapture))
	}))
	defer srv.Close()
	sc := engine.ScrapeOnce(context.Background(), engine.Config{URL: srv.URL, Engine: model.VLLM, MetricsPath: "/metrics"})
	if !sc.OK() || len(sc.Samples) != 1 {
		t.Fatalf("scrape: %q, %d samples", sc.Err, len(sc.Samples))
	}
	if kv := sc.Samples[0].Gauges[model.KVUsage]; kv != 0.97 {
		t.Fatalf("adapter KV = %v, want the fullest engine's 0.97", kv)
	}

	var fleetKV string
	for _, f := range families {
		if f.engine != model.VLLM {
			continue
		}
		for _, term := range strings.Split(builder{f: f, window: "1m"}.stateQuery(), " or ") {
			if strings.Contains(term, `"gauge:kv_cache_usage_ratio"`) && strings.Contains(term, "vllm:kv_cache_usage_perc") && !strings.Contains(term, fromLabel) {
				fleetKV = term
			}
		}
	}
	if fleetKV == "" {
		t.Fatal("the fleet source asks no KV term for vLLM")
	}
	var ruleKV string
	rules := exporter.Rules(exporter.RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(diagnosis.DefaultConfig()), Window: time.Minute}, model.VLLM)
	for _, r := range rules.Groups[0].Rules {
		if r.Alert == "LLMKVCacheFull" {
			ruleKV, _, _ = strings.Cut(r.Expr, " >= ")
		}
	}
	if ruleKV == "" {
		t.Fatal("llmtop rules writes no KV rule for vLLM")
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (make deps installs Debian's prometheus): the adapter agreed; the two queries were not evaluated")
	}
	var input []any
	for _, line := range strings.Split(dpCapture, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sel, val, _ := strings.Cut(line, " ")
		sel = strings.Replace(sel, "{", `{job="vllm",instance="dp:8000",`, 1)
		input = append(input, map[string]string{"series": sel, "values": val + "x5"})
	}
	want := func(expr, labels string) map[string]any {
		return map[string]any{"expr": expr, "eval_time": "2m",
			"exp_samples": []any{map[string]any{"labels": labels, "value": 0.97}}}
	}
	dir := t.TempDir()
	test := map[string]any{"tests": []any{map[string]any{"interval": "1m", "input_series": input,
		"promql_expr_test": []any{
			want(fleetKV, `{job="vllm",instance="dp:8000",model_name="m",llmtop_concept="gauge:kv_cache_usage_ratio"}`),
			want(ruleKV, `{job="vllm",instance="dp:8000",model_name="m"}`),
		}}}}
	b, err := yaml.Marshal(test)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test.yml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "test.yml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s\nfleet: %s\nrules: %s", err, out, fleetKV, ruleKV)
	}
}
