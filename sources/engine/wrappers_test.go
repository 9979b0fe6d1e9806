package engine

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Issue 26: layers that wrap an engine's metrics are read as that engine,
// the wrapper named. None of these answers was found as real text (see
// testdata/routers/README.md); each is written in the shape its source
// gives (SERVING-LAYERS.md §3b, §3c, §3f), and the Dynamo worker's
// dynamo_component_* lines are those of Dynamo's own metrics doc example.

// servePath serves body on path only.
func servePath(t *testing.T, path, body string) string {
	t.Helper()
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, body)
	}))
}

func scrapeOK(t *testing.T, cfg Config) model.Scrape {
	t.Helper()
	sc := ScrapeOnce(context.Background(), cfg)
	if !sc.OK() {
		t.Fatalf("scrape %s: %s (%s)", cfg.URL, sc.Err, sc.Hint)
	}
	return sc
}

// KServe renames vLLM's families kserve_vllm:… in the Prometheus that
// scrapes its pods (monitoring.go's metricRelabelConfigs), with the pod's
// role as llm_isvc_role: a federation of two decode pods.
const kserveFederated = `# TYPE kserve_vllm:num_requests_running gauge
kserve_vllm:num_requests_running{llm_isvc_name="qwen",llm_isvc_role="decode",llm_isvc_component="workload",model_name="m",pod="qwen-kserve-decode-0"} 5
kserve_vllm:num_requests_running{llm_isvc_name="qwen",llm_isvc_role="decode",llm_isvc_component="workload",model_name="m",pod="qwen-kserve-decode-1"} 7
# TYPE kserve_vllm:kv_cache_usage_perc gauge
kserve_vllm:kv_cache_usage_perc{llm_isvc_name="qwen",llm_isvc_role="decode",llm_isvc_component="workload",model_name="m",pod="qwen-kserve-decode-0"} 0.3
kserve_vllm:kv_cache_usage_perc{llm_isvc_name="qwen",llm_isvc_role="decode",llm_isvc_component="workload",model_name="m",pod="qwen-kserve-decode-1"} 0.8
`

func TestKServeRenamedFamiliesReadAsVLLMWithTheirRole(t *testing.T) {
	sc := scrapeOK(t, Config{URL: servePath(t, "/metrics", kserveFederated)})
	if sc.Identity.Engine != engines.KServeID {
		t.Fatalf("engine %q, want %q", sc.Identity.Engine, engines.KServeID)
	}
	s := only(t, sc.Samples)
	if s.Gauges[model.Running] != 12 || s.Gauges[model.KVUsage] != 0.8 {
		t.Errorf("running %v KV %v: want the sum 12 and the fullest pod's 0.8", s.Gauges[model.Running], s.Gauges[model.KVUsage])
	}
	if got := s.From[string(model.KVUsage)]; !strings.HasPrefix(got, "kserve_vllm:kv_cache_usage_perc") {
		t.Errorf("KV cited as %q, not as KServe serves it", got)
	}
	if sc.Identity.Role != model.RoleDecode || !strings.Contains(sc.Identity.RoleFrom, engines.KServeRoleLabel) {
		t.Errorf("role %q from %q", sc.Identity.Role, sc.Identity.RoleFrom)
	}
}

// NIM serves vLLM's names bare on /v1/metrics (its observability doc).
const nimMetrics = `# TYPE num_requests_running gauge
num_requests_running{model_name="meta/llama-3.1-8b-instruct"} 4.0
# TYPE num_requests_waiting gauge
num_requests_waiting{model_name="meta/llama-3.1-8b-instruct"} 1.0
# TYPE gpu_cache_usage_perc gauge
gpu_cache_usage_perc{model_name="meta/llama-3.1-8b-instruct"} 0.42
# TYPE generation_tokens_total counter
generation_tokens_total{model_name="meta/llama-3.1-8b-instruct"} 1234.0
# TYPE time_to_first_token_seconds histogram
time_to_first_token_seconds_bucket{model_name="meta/llama-3.1-8b-instruct",le="0.1"} 3.0
time_to_first_token_seconds_bucket{model_name="meta/llama-3.1-8b-instruct",le="+Inf"} 4.0
time_to_first_token_seconds_sum{model_name="meta/llama-3.1-8b-instruct"} 0.9
time_to_first_token_seconds_count{model_name="meta/llama-3.1-8b-instruct"} 4.0
`

func TestNIMBareNamesOnV1MetricsAreDetectedAndRead(t *testing.T) {
	sc := scrapeOK(t, Config{URL: servePath(t, "/v1/metrics", nimMetrics)})
	if sc.Identity.Engine != engines.NIMID {
		t.Fatalf("engine %q, want %q", sc.Identity.Engine, engines.NIMID)
	}
	s := only(t, sc.Samples)
	if s.Gauges[model.Running] != 4 || s.Gauges[model.Waiting] != 1 || s.Gauges[model.KVUsage] != 0.42 || s.Counters[model.GenTokens] != 1234 {
		t.Errorf("running %v waiting %v KV %v gen %v", s.Gauges[model.Running], s.Gauges[model.Waiting], s.Gauges[model.KVUsage], s.Counters[model.GenTokens])
	}
	if h, ok := s.Latencies[model.TTFT]; !ok || h.Count != 4 {
		t.Errorf("TTFT %+v %v", h, ok)
	}
	if got := s.From[string(model.KVUsage)]; got != "gpu_cache_usage_perc" {
		t.Errorf("KV cited as %q, want NIM's own name", got)
	}
	if s.Model != "meta/llama-3.1-8b-instruct" {
		t.Errorf("model %q", s.Model)
	}
}

// SGLang's model gateway on /engine_metrics: each worker's families with
// ':' turned into '_' and worker_addr (metrics_aggregator.rs), two decode
// workers.
const gatewayEngineMetrics = `# TYPE sglang_num_running_reqs gauge
sglang_num_running_reqs{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.7:30000"} 30.0
sglang_num_running_reqs{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.8:30000"} 2.0
# TYPE sglang_num_queue_reqs gauge
sglang_num_queue_reqs{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.7:30000"} 11.0
sglang_num_queue_reqs{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.8:30000"} 0.0
# TYPE sglang_generation_tokens_total counter
sglang_generation_tokens_total{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.7:30000"} 900.0
sglang_generation_tokens_total{engine_type="decode",model_name="qwen",tp_rank="0",pp_rank="0",worker_addr="http://10.0.0.8:30000"} 100.0
`

func TestGatewayEngineMetricsReadAsSGLangWorkers(t *testing.T) {
	url := servePath(t, "/engine_metrics", gatewayEngineMetrics)
	for _, cfg := range []Config{{URL: url}, {URL: url, Engine: model.SGLang, MetricsPath: "/engine_metrics"}} {
		sc := scrapeOK(t, cfg)
		if sc.Identity.Engine != engines.SGLangGatewayID {
			t.Fatalf("%+v: engine %q, want %q", cfg, sc.Identity.Engine, engines.SGLangGatewayID)
		}
		s := only(t, sc.Samples)
		if s.Gauges[model.Running] != 32 || s.Gauges[model.Waiting] != 11 || s.Counters[model.GenTokens] != 1000 {
			t.Errorf("running %v waiting %v gen %v: want both workers summed", s.Gauges[model.Running], s.Gauges[model.Waiting], s.Counters[model.GenTokens])
		}
		if got := s.From[string(model.Running)]; !strings.HasPrefix(got, "sglang_num_running_reqs") {
			t.Errorf("running cited as %q", got)
		}
		if sc.Identity.Role != model.RoleDecode {
			t.Errorf("role %q", sc.Identity.Role)
		}
	}
}

// A Dynamo vLLM worker's system port: vLLM's families beside
// dynamo_component_* (the latter as Dynamo's metrics doc prints them, with
// the worker_type label newer workers add).
const dynamoWorker = `# HELP dynamo_component_requests_total Total requests processed
# TYPE dynamo_component_requests_total counter
dynamo_component_requests_total{dynamo_namespace="default",dynamo_component="prefill",dynamo_endpoint="generate",worker_type="prefill"} 42
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-0.6B"} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="Qwen/Qwen3-0.6B"} 9.0
`

func TestDynamoWorkerIsItsEngineServedThroughDynamo(t *testing.T) {
	sc := scrapeOK(t, Config{URL: servePath(t, "/metrics", dynamoWorker), Engine: model.VLLM})
	if sc.Identity.Engine != model.VLLM || sc.Identity.Via != engines.DynamoWorker.Name {
		t.Fatalf("engine %q via %q", sc.Identity.Engine, sc.Identity.Via)
	}
	s := only(t, sc.Samples)
	if s.Gauges[model.Running] != 3 || s.Gauges[model.Waiting] != 9 {
		t.Errorf("running %v waiting %v", s.Gauges[model.Running], s.Gauges[model.Waiting])
	}
	if sc.Identity.Role != model.RolePrefill {
		t.Errorf("role %q from %q", sc.Identity.Role, sc.Identity.RoleFrom)
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "NVIDIA Dynamo worker") {
		t.Errorf("notes %v do not name Dynamo", s.Notes)
	}
}

// llm-d's picker scraped through KServe's ServiceMonitor (kserve_ before
// every name) is still a router, not a vLLM engine.
func TestPickerUnderKServePrefixIsARouter(t *testing.T) {
	body := "# TYPE kserve_llm_d_epp_ready_endpoints gauge\nkserve_llm_d_epp_ready_endpoints{name=\"pool\"} 3\n"
	r := classifyRole(mustParse(t, []byte(body)))
	if r.Role != engines.RoleRouter || r.Layer != &engines.EndpointPicker {
		t.Errorf("role %q layer %v", r.Role, r.Layer)
	}
}

// A vLLM decode instance says so by pulling KV (NIXL transfers counted
// where performed); a zero count says nothing.
func TestVLLMRoleFromSideSpecificCounters(t *testing.T) {
	xfer := func(n int) string {
		return "# TYPE vllm:nixl_xfer_time_seconds histogram\n" +
			"vllm:nixl_xfer_time_seconds_bucket{engine=\"0\",model_name=\"m\",le=\"+Inf\"} " + itoa(n) + "\n" +
			"vllm:nixl_xfer_time_seconds_sum{engine=\"0\",model_name=\"m\"} 0.5\n" +
			"vllm:nixl_xfer_time_seconds_count{engine=\"0\",model_name=\"m\"} " + itoa(n) + "\n"
	}
	if r, from := pdRole(mustParse(t, []byte(xfer(12)))); r != model.RoleDecode || from == "" {
		t.Errorf("12 transfers: role %q from %q", r, from)
	}
	if r, _ := pdRole(mustParse(t, []byte(xfer(0)))); r != "" {
		t.Errorf("no transfer yet: role %q, want unknown", r)
	}
	ext := "# TYPE vllm:prompt_tokens_by_source_total counter\n" +
		"vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"m\",source=\"external_kv_transfer\"} 5000\n"
	if r, _ := pdRole(mustParse(t, []byte(ext))); r != model.RoleDecode {
		t.Errorf("external KV tokens: role %q", r)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The NIXL connector served but no transfer performed while requests
// finish: the prefill side. Before any request finishes it says nothing.
func TestVLLMPrefillFromAConnectorThatNeverTransfers(t *testing.T) {
	body := func(done int) string {
		return "# TYPE vllm:nixl_xfer_time_seconds histogram\n" +
			"vllm:nixl_xfer_time_seconds_bucket{engine=\"0\",model_name=\"m\",le=\"+Inf\"} 0\n" +
			"vllm:nixl_xfer_time_seconds_sum{engine=\"0\",model_name=\"m\"} 0\n" +
			"vllm:nixl_xfer_time_seconds_count{engine=\"0\",model_name=\"m\"} 0\n" +
			"# TYPE vllm:request_success_total counter\n" +
			"vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\"} " + itoa(done) + "\n"
	}
	if r, from := pdRole(mustParse(t, []byte(body(40)))); r != model.RolePrefill || from == "" {
		t.Errorf("40 finished, no transfer: role %q from %q", r, from)
	}
	if r, _ := pdRole(mustParse(t, []byte(body(0)))); r != "" {
		t.Errorf("nothing finished yet: role %q, want unknown", r)
	}
}

// vllm:lora_requests_info leaves old label sets behind (Python's client):
// the newest series, the largest value, is the current one.
func TestVLLMLoRAInfoNewestSeries(t *testing.T) {
	body := "# TYPE vllm:lora_requests_info gauge\n" +
		"vllm:lora_requests_info{max_lora=\"2\",running_lora_adapters=\"adapter-1\",waiting_lora_adapters=\"\"} 1.7641e9\n" +
		"vllm:lora_requests_info{max_lora=\"2\",running_lora_adapters=\"adapter-3,adapter-5\",waiting_lora_adapters=\"adapter-0,adapter-6,adapter-7\"} 1.7642e9\n" +
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 12\n"
	ss := mapVLLM(mustParse(t, []byte(body)), testMeta(""))
	if len(ss) != 1 || ss[0].LoRA == nil {
		t.Fatalf("%+v", ss)
	}
	l := ss[0].LoRA
	if strings.Join(l.Running, ",") != "adapter-3,adapter-5" || len(l.Waiting) != 3 || l.Max != 2 {
		t.Errorf("%+v, want the newest series", l)
	}
}

// Dynamo's KV router, by the names its source gives (no real answer
// found): a router, never an engine.
func TestDynamoKVRouterIsARouter(t *testing.T) {
	body := "# TYPE dynamo_router_overhead_total_ms histogram\ndynamo_router_overhead_total_ms_bucket{router_id=\"r\",le=\"+Inf\"} 4\n" +
		"dynamo_router_overhead_total_ms_sum{router_id=\"r\"} 2\ndynamo_router_overhead_total_ms_count{router_id=\"r\"} 4\n"
	if r := classifyRole(mustParse(t, []byte(body))); r.Role != engines.RoleRouter || r.Layer != &engines.DynamoFrontend {
		t.Errorf("role %q layer %v", r.Role, r.Layer)
	}
}

// SGLang's decode side times each KV hand-over in milliseconds
// (sglang:kv_transfer_latency_ms, a histogram since PR #19009): read in
// seconds, so the stall rule compares it with TTFT.
func TestSGLangKVTransferReadInSeconds(t *testing.T) {
	body := "# TYPE sglang:num_running_reqs gauge\n" +
		"sglang:num_running_reqs{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\"} 7\n" +
		"# TYPE sglang:kv_transfer_latency_ms histogram\n" +
		"sglang:kv_transfer_latency_ms_bucket{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\",le=\"100\"} 2\n" +
		"sglang:kv_transfer_latency_ms_bucket{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\",le=\"5000\"} 10\n" +
		"sglang:kv_transfer_latency_ms_bucket{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\",le=\"+Inf\"} 10\n" +
		"sglang:kv_transfer_latency_ms_sum{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\"} 25000\n" +
		"sglang:kv_transfer_latency_ms_count{engine_type=\"decode\",model_name=\"m\",tp_rank=\"0\",pp_rank=\"0\"} 10\n"
	s := only(t, mapSGLang(mustParse(t, []byte(body)), testMeta("")))
	h, ok := s.Latencies[model.KVTransfer]
	if !ok || h.Count != 10 || h.Sum != 25 || h.Buckets[0].UpperBound != 0.1 || s.From[string(model.KVTransfer)] != engines.SGLangKVTransferLat {
		t.Errorf("%+v %v from %q", h, ok, s.From[string(model.KVTransfer)])
	}
	if r, _ := pdRole(mustParse(t, []byte(body))); r != model.RoleDecode {
		t.Errorf("role %q", r)
	}
}

// What the production-stack router says of its engines, from its own
// handler's answer (testdata/routers): two servers, one healthy, 3 prefill
// + 5 decode requests running on the first by its count.
func TestProdStackRouterDetail(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "routers", "prodstack-router-a6c01db0.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := classifyRole(mustParse(t, body))
	if got := layerDetail(r); got != "2 servers, 1 healthy; 8 running by its count" {
		t.Errorf("detail %q", got)
	}
	bs := layerBackends(r)
	want := []model.Backend{
		{Server: "http://10.0.0.11:8000", Healthy: 1, HealthyOK: true, QPS: 4.2, QPSOK: true, Running: 8, RunningOK: true},
		{Server: "http://10.0.0.12:8000", Healthy: 0, HealthyOK: true, QPS: 0, QPSOK: true, Running: 0, RunningOK: true},
	}
	if len(bs) != len(want) {
		t.Fatalf("backends %+v", bs)
	}
	for i := range want {
		want[i].From = "vllm:healthy_pods_total, vllm:current_qps, vllm:num_requests_running"
		if bs[i] != want[i] {
			t.Errorf("backend %d: %+v, want %+v", i, bs[i], want[i])
		}
	}
}
