package engine

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

func TestVLLMFixture(t *testing.T) {
	s := only(t, mapVLLM(fixture(t, "vllm.txt"), testMeta("")))
	if s.Model != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("model = %q", s.Model)
	}
	// Values read off testdata/vllm.txt.
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 37, model.Waiting: 5, model.Deferred: 0, model.KVUsage: 0.8123,
			model.KVCapacityTokens: 470080, // kv_cache_size_tokens label
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 1405367, model.GenTokens: 347171, model.Preemptions: 12,
			model.PrefixQueries: 1405367, model.PrefixHits: 446707,
			model.Requests:        1443 + 80 + 4, // stop + length + abort (+ error 0, repetition 0)
			model.RequestErrors:   0,
			model.SpecDraftTokens: 540000, model.SpecAcceptTokens: 301000,
			// issue 27: acceptance by draft position, over the drafts
			model.SpecDrafts: 180000, model.SpecAcceptPos(0): 142000, model.SpecAcceptPos(1): 96000, model.SpecAcceptPos(2): 63000,
		},
		absentG: []model.Gauge{model.PrefixHitGauge, model.SpecAcceptGauge, model.PromptTPSGauge},
	}.check(t, s)
	if s.FinishReasons["stop"] != 1443 || s.FinishReasons["length"] != 80 || s.FinishReasons["abort"] != 4 {
		t.Errorf("finish reasons = %v", s.FinishReasons)
	}
	checkHist(t, s, model.TTFT, 1523, 816.7026573352582, 0.25, 399)
	checkHist(t, s, model.ITL, 20000, 683.0152644655192, 0, 0)
	checkHist(t, s, model.TPOT, 1523, 40.055501714797536, 0, 0)
	checkHist(t, s, model.E2E, 1523, 9889.207700226514, 0, 0)
	checkHist(t, s, model.Queue, 1523, 621.135244916661, 0, 0)
	checkHist(t, s, model.Prefill, 1523, 186.61188888888893, 0, 0)
	checkHist(t, s, model.Decode, 1523, 9072.505042891276, 0, 0)
	// Issue 14 item 20: lengths per request (1042 prompts ≤ 1000 tokens,
	// 1436 outputs ≤ 500), and their source.
	checkHist(t, s, model.PromptLen, 1523, 1405367, 1000, 1042)
	checkHist(t, s, model.OutputLen, 1523, 347171, 500, 1436)
	if s.From["prompt_len"] != "vllm:request_prompt_tokens" {
		t.Errorf("from %v", s.From)
	}
	ttft := s.Latencies[model.TTFT]
	if n := len(ttft.Buckets); n != 23 { // 22 bounds + +Inf
		t.Errorf("TTFT has %d buckets, want 23", n)
	}
	if last := ttft.Buckets[len(ttft.Buckets)-1]; !math.IsInf(last.UpperBound, 1) || last.Count != 1523 {
		t.Errorf("last TTFT bucket = %+v", last)
	}
	if s.Info["block_size"] != "16" || s.Info["gpu_memory_utilization"] != "0.92" || s.Info["num_gpu_blocks"] != "29380" {
		t.Errorf("info = %v", s.Info)
	}
	if _, ok := s.Info["engine"]; ok {
		t.Error("info carries the engine label")
	}
}

// Two data-parallel engines: counts and histograms add up; KV usage is
// each engine's own pool, so the endpoint's is the fullest engine's (issue
// 14 item 1: the mean, 0.6, hid engine 1 at 0.7) and each engine's gauges
// are kept. The capacity beside that ratio is the same engine's pool
// (issue 31 item 15: it summed both pools).
func TestVLLMDataParallel(t *testing.T) {
	body := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 4.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.7
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 100.0
vllm:generation_tokens_total{engine="1",model_name="m"} 250.0
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 2.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 2.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 0.5
vllm:time_to_first_token_seconds_bucket{engine="1",le="0.1",model_name="m"} 3.0
vllm:time_to_first_token_seconds_bucket{engine="1",le="+Inf",model_name="m"} 3.0
vllm:time_to_first_token_seconds_count{engine="1",model_name="m"} 3.0
vllm:time_to_first_token_seconds_sum{engine="1",model_name="m"} 0.2
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="1000"} 1.0
vllm:cache_config_info{block_size="16",engine="1",num_gpu_blocks="800"} 1.0
`
	s := only(t, mapVLLM(mustParse(t, []byte(body)), testMeta("")))
	want{
		gauges:   map[model.Gauge]float64{model.Running: 7, model.KVUsage: 0.7, model.KVCapacityTokens: 12800},
		counters: map[model.Counter]float64{model.GenTokens: 350},
		absentG:  []model.Gauge{model.Waiting, model.Deferred},
		absentC:  []model.Counter{model.PromptTokens, model.Requests, model.Preemptions, model.PrefixQueries},
		absentL:  []model.Latency{model.ITL, model.TPOT, model.E2E},
	}.check(t, s)
	checkHist(t, s, model.TTFT, 5, 0.7, 0.1, 4)
	if !strings.Contains(strings.Join(s.Notes, ";"), "2 data-parallel engines") {
		t.Errorf("notes = %v", s.Notes)
	}
	if s.Info["engines"] != "2" {
		t.Errorf("info = %v", s.Info)
	}
	wantEng := []model.EngineShare{
		{ID: "0", Running: model.Some(3), KVUsage: model.Some(0.5)},
		{ID: "1", Running: model.Some(4), KVUsage: model.Some(0.7)},
	}
	if !reflect.DeepEqual(s.Engines, wantEng) {
		t.Errorf("engines = %+v, want %+v", s.Engines, wantEng)
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "fullest of 2 data-parallel engines (engine 1)") {
		t.Errorf("notes = %v", s.Notes)
	}
}

// A V0-era / pre-0.11 scrape: no engine label, old names.
func TestVLLMOldNames(t *testing.T) {
	body := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="old"} 2.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="old"} 1.0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{model_name="old"} 0.25
# TYPE vllm:gpu_prefix_cache_queries_total counter
vllm:gpu_prefix_cache_queries_total{model_name="old"} 400.0
# TYPE vllm:gpu_prefix_cache_hits_total counter
vllm:gpu_prefix_cache_hits_total{model_name="old"} 100.0
# TYPE vllm:time_per_output_token_seconds histogram
vllm:time_per_output_token_seconds_bucket{le="0.05",model_name="old"} 8.0
vllm:time_per_output_token_seconds_bucket{le="+Inf",model_name="old"} 10.0
vllm:time_per_output_token_seconds_count{model_name="old"} 10.0
vllm:time_per_output_token_seconds_sum{model_name="old"} 0.4
`
	s := only(t, mapVLLM(mustParse(t, []byte(body)), testMeta("")))
	want{
		gauges:   map[model.Gauge]float64{model.Running: 2, model.Waiting: 1, model.KVUsage: 0.25},
		counters: map[model.Counter]float64{model.PrefixQueries: 400, model.PrefixHits: 100},
		absentG:  []model.Gauge{model.Deferred, model.KVCapacityTokens},
		absentL:  []model.Latency{model.TPOT, model.TTFT},
	}.check(t, s)
	checkHist(t, s, model.ITL, 10, 0.4, 0.05, 8)
	notes := strings.Join(s.Notes, ";")
	for _, w := range []string{"gpu_cache_usage_perc", "gpu_prefix_cache", "time_per_output_token_seconds"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q do not mention %s", notes, w)
		}
	}
	// Issue 14 item 8: the sample names what each value was read from.
	for concept, metric := range map[string]string{"itl": "vllm:time_per_output_token_seconds", "kv_cache_usage_ratio": "vllm:gpu_cache_usage_perc",
		"running": "vllm:num_requests_running", "prefix_cache_queries": "vllm:gpu_prefix_cache_queries_total"} {
		if s.From[concept] != metric {
			t.Errorf("From[%s] = %q, want %q", concept, s.From[concept], metric)
		}
	}
}

// Two models behind one endpoint (several served models / LoRA-less
// multi-model routers) give one sample each.
func TestVLLMTwoModels(t *testing.T) {
	body := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="a"} 1.0
vllm:num_requests_running{engine="0",model_name="b"} 2.0
`
	ss := mapVLLM(mustParse(t, []byte(body)), testMeta(""))
	if len(ss) != 2 || ss[0].Model != "a" || ss[1].Model != "b" || ss[1].Gauges[model.Running] != 2 {
		t.Fatalf("samples = %+v", ss)
	}
}

func BenchmarkParseVLLM(b *testing.B) {
	body := enginetest.Fixture("vllm.txt")
	m := testMeta("")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := parseProm(body)
		if err != nil {
			b.Fatal(err)
		}
		if len(mapVLLM(f, m)) != 1 {
			b.Fatal("no sample")
		}
	}
}

// Issue 27 item 5: the HTTP instrumentation's 4xx (but 429) on the API
// routes are counted apart from the 5xx and the rejections.
func TestVLLMHTTPClientErrors(t *testing.T) {
	body := []byte(`# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 1
# TYPE http_requests_total counter
http_requests_total{handler="/v1/chat/completions",method="POST",status="200"} 90
http_requests_total{handler="/v1/chat/completions",method="POST",status="400"} 7
http_requests_total{handler="/v1/chat/completions",method="POST",status="404"} 2
http_requests_total{handler="/v1/chat/completions",method="POST",status="429"} 1
http_requests_total{handler="/metrics",method="GET",status="404"} 50
`)
	s := only(t, mapVLLM(mustParse(t, body), testMeta("m")))
	if s.Counters[model.HTTPResponses] != 100 || s.Counters[model.HTTP4xx] != 9 || s.Counters[model.HTTPRejected] != 1 {
		t.Fatalf("counters %v", s.Counters)
	}
}
