package engine

import (
	"strings"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// Expected values below are read off the fixture files by hand.

func TestSGLangFixture(t *testing.T) {
	s := only(t, mapSGLang(fixture(t, "sglang.txt"), testMeta("")))
	if s.Model != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("model = %q", s.Model)
	}
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 42, model.Waiting: 3, model.KVUsage: 0.71, model.KVCapacityTokens: 448876,
			model.PrefixHitGauge: 0.3125, model.GenTPSGauge: 1843.27,
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 2912330 + 301204, // streaming + non-streaming
			model.GenTokens:    903112 + 88012,
			model.Requests:     2210 + 190,
			model.Preemptions:  7, // retractions
			model.PrefixHits:   1003392, model.PrefixQueries: 2912330 + 301204,
		},
		// spec_accept_rate is 0 with speculative decoding off: not a value.
		absentG: []model.Gauge{model.SpecAcceptGauge, model.Deferred},
		absentC: []model.Counter{model.SpecDraftTokens, model.RequestErrors},
		absentL: []model.Latency{model.TPOT, model.Prefill, model.Decode},
	}.check(t, s)
	checkHist(t, s, model.TTFT, 2210+190, 935.00923209209+80.83950110481608, 1.0, 2095+178)
	checkHist(t, s, model.ITL, 30000, 714.3094912002953, 0, 0)
	checkHist(t, s, model.E2E, 2400, 20744.17685213874+1788.058173097536, 0, 0)
	checkHist(t, s, model.Queue, 2400, 831.2246991835738, 0, 0)
	if s.Info["context_len"] != "131072" || s.Info["page_size"] != "1" {
		t.Errorf("info = %v", s.Info)
	}
}

func sglangRanksBody(withDP bool) string {
	dp := func(i string) string {
		if withDP {
			return `dp_rank="` + i + `",`
		}
		return ""
	}
	return `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{` + dp("0") + `model_name="m",pp_rank="0",tp_rank="0"} 10.0
sglang:num_running_reqs{` + dp("1") + `model_name="m",pp_rank="0",tp_rank="1"} 6.0
# TYPE sglang:token_usage gauge
sglang:token_usage{` + dp("0") + `model_name="m",pp_rank="0",tp_rank="0"} 0.5
sglang:token_usage{` + dp("1") + `model_name="m",pp_rank="0",tp_rank="1"} 0.7
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{is_streaming="true",model_name="m"} 100.0
`
}

// With --enable-metrics-for-all-schedulers on plain TP, every TP rank reports
// the same batch: read one. With DP attention (dp_rank) the groups hold
// different requests: add them. Fractions are averaged either way.
func TestSGLangRanks(t *testing.T) {
	tp := only(t, mapSGLang(mustParse(t, []byte(sglangRanksBody(false))), testMeta("")))
	want{gauges: map[model.Gauge]float64{model.Running: 10, model.KVUsage: 0.5},
		counters: map[model.Counter]float64{model.PromptTokens: 100}}.check(t, tp)
	if !strings.Contains(strings.Join(tp.Notes, ";"), "--enable-metrics-for-all-schedulers") {
		t.Errorf("notes = %v", tp.Notes)
	}
	dp := only(t, mapSGLang(mustParse(t, []byte(sglangRanksBody(true))), testMeta("")))
	want{gauges: map[model.Gauge]float64{model.Running: 16, model.KVUsage: 0.6},
		counters: map[model.Counter]float64{model.PromptTokens: 100}}.check(t, dp)
}

// The first SGLang releases labelled the model `name`.
func TestSGLangOldLabel(t *testing.T) {
	body := "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{name=\"old\"} 2.0\n"
	s := only(t, mapSGLang(mustParse(t, []byte(body)), testMeta("")))
	if s.Model != "old" || s.Gauges[model.Running] != 2 {
		t.Errorf("sample = %+v", s)
	}
}

func TestTGIFixture(t *testing.T) {
	s := only(t, mapTGI(fixture(t, "tgi.txt"), testMeta(enginetest.TGIModel)))
	if s.Model != enginetest.TGIModel {
		t.Errorf("model = %q (TGI has no model label: it comes from /info)", s.Model)
	}
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 24, model.Waiting: 4, model.KVCapacityTokens: 265824, model.KVUsage: 41288.0 / 265824,
		},
		counters: map[model.Counter]float64{
			model.Requests: 812 + 7 + 2, model.RequestErrors: 7 + 2,
			model.PromptTokens: 642541, model.GenTokens: 164776,
		},
		absentG: []model.Gauge{model.PrefixHitGauge, model.Deferred},
		absentC: []model.Counter{model.PrefixQueries, model.Preemptions},
		absentL: []model.Latency{model.ITL},
	}.check(t, s)
	if s.FinishReasons["success"] != 812 || s.FinishReasons["validation"] != 7 || s.FinishReasons["generation"] != 2 {
		t.Errorf("finish = %v", s.FinishReasons)
	}
	checkHist(t, s, model.E2E, 812, 5712.994169010218, 3.787675244106352, 147)
	checkHist(t, s, model.Queue, 812, 198.86179835556428, 0, 0)
	checkHist(t, s, model.TPOT, 812, 23.669213828306003, 0, 0)
	// The fixture leaves tgi_batch_inference_duration out: prefill and
	// decode fall back to the forward duration, per batch step.
	checkHist(t, s, model.Prefill, 640, 210.5987909106559, 0, 0)
	checkHist(t, s, model.Decode, 3000, 67.6095137773322, 0, 0)
	if a := s.Latencies[model.Prefill].Approx; !strings.Contains(a, "not per request") {
		t.Errorf("prefill approx = %q", a)
	}
	ttft := s.Latencies[model.TTFT]
	if ttft.Approx == "" || len(ttft.Parts) != 3 {
		t.Fatalf("TTFT = %+v, want a labelled 3-part composite", ttft)
	}
	parts := [][2]float64{{0.9554268687610049, 812}, {198.86179835556428, 812}, {210.5987909106559, 640}}
	for i, p := range parts {
		if got := ttft.Parts[i]; !near(got.Sum, p[0]) || got.Count != p[1] || len(got.Buckets) != 0 {
			t.Errorf("TTFT part %d = %+v, want sum %v count %v, mean only", i, got, p[0], p[1])
		}
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "TGI has no KV metric") {
		t.Errorf("KV approximation not labelled: %v", s.Notes)
	}
}

func TestLlamaCppFixture(t *testing.T) {
	s := only(t, mapLlamaCpp(fixture(t, "llamacpp.txt"), testMeta(enginetest.LlamaCppModel)))
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 3, model.Waiting: 1, model.PromptTPSGauge: 4682.51, model.GenTPSGauge: 85.8013,
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 1.83451e+06, model.GenTokens: 412733,
			model.PrefixHits: 622080, model.PrefixQueries: 1.83451e+06 + 622080,
			model.SpecDraftTokens: 0, model.SpecAcceptTokens: 0,
		},
		absentG: []model.Gauge{model.KVUsage, model.KVCapacityTokens}, // not in /metrics since 2025-05
		absentC: []model.Counter{model.Requests, model.Preemptions},
		absentL: []model.Latency{model.TTFT, model.E2E, model.ITL, model.Queue},
	}.check(t, s)
	tpot := s.Latencies[model.TPOT]
	if tpot.Sum != 4810.33 || tpot.Count != 412733 || len(tpot.Buckets) != 0 || tpot.Approx == "" {
		t.Errorf("TPOT = %+v, want mean-only 4810.33 s / 412733 tokens, labelled", tpot)
	}
	if !strings.Contains(strings.Join(s.Notes, ";"), "6 significant digits") {
		t.Errorf("notes = %v", s.Notes)
	}
	applySlots(&s, parseSlots(enginetest.Fixture("llamacpp_slots.json")))
	used := (1200.0 + 300) + (500 + 48) + (2000 + 0) // busy slots only
	want{gauges: map[model.Gauge]float64{
		model.KVUsage: used / (4 * 4096), model.KVCapacityTokens: 4 * 4096, model.MaxRunning: 4,
		model.Running: 3, // /metrics wins over /slots
	}}.check(t, s)
}

// Builds before 2025-05-21 still publish the KV ratio.
func TestLlamaCppOldKV(t *testing.T) {
	body := "# TYPE llamacpp:kv_cache_usage_ratio gauge\nllamacpp:kv_cache_usage_ratio 0.42\n"
	s := only(t, mapLlamaCpp(mustParse(t, []byte(body)), testMeta("m")))
	want{gauges: map[model.Gauge]float64{model.KVUsage: 0.42}, absentL: []model.Latency{model.TPOT}}.check(t, s)
}

func TestTRTLLMFixture(t *testing.T) {
	s := only(t, mapTRTLLM(fixture(t, "trtllm.txt"), testMeta(enginetest.TRTLLMModel)))
	if s.Model != enginetest.TRTLLMModel {
		t.Errorf("model = %q (label is \"undefined\": it comes from /v1/models)", s.Model)
	}
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 53, model.Waiting: 2, model.KVUsage: 0.6625, model.PrefixHitGauge: 0.41,
			model.MaxRunning: 2048, model.KVCapacityTokens: 6400 * 32,
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: 1.402213e+06, model.GenTokens: 402919, model.Requests: 1081 + 119,
			model.PrefixHits: 18211, model.PrefixQueries: 18211 + 26190,
		},
		absentC: []model.Counter{model.Preemptions, model.RequestErrors, model.SpecDraftTokens},
		absentL: []model.Latency{model.ITL},
	}.check(t, s)
	checkHist(t, s, model.TTFT, 1200, 494.9818009702884, 0.5, 872)
	checkHist(t, s, model.TPOT, 1200, 25.25461459923848, 0, 0)
	checkHist(t, s, model.E2E, 1200, 7005.2299610893415, 0, 0)
	checkHist(t, s, model.Queue, 1200, 237.36349650131095, 0, 0)
	checkHist(t, s, model.Prefill, 1200, 257.61830446897693, 0, 0)
	checkHist(t, s, model.Decode, 1200, 6510.24816011907, 0, 0)
	if s.FinishReasons["stop"] != 1081 || s.FinishReasons["length"] != 119 {
		t.Errorf("finish = %v", s.FinishReasons)
	}
}

func TestTRTLLMIterationStats(t *testing.T) {
	s := model.NewSample("e", "m", t0, model.FromScrape)
	var stats []trtIterStats
	if err := jsonUnmarshal(enginetest.Fixture("trtllm_iteration_stats.json"), &stats); err != nil {
		t.Fatal(err)
	}
	if !applyTRTIter(&s, stats) {
		t.Fatal("no iteration applied")
	}
	want{gauges: map[model.Gauge]float64{ // the newest entry
		model.Running: 53, model.Waiting: 2, model.KVUsage: 4240.0 / 6400, model.KVCapacityTokens: 6400 * 32,
		model.PrefixHitGauge: 0.41, model.MaxRunning: 2048,
		// Issue 14 item 21: the iteration's batch and its paused requests.
		model.BatchPerStep: 53, model.Paused: 0,
	}}.check(t, s)
	empty := model.NewSample("e", "m", t0, model.FromScrape)
	if applyTRTIter(&empty, nil) || len(empty.Gauges) != 0 {
		t.Errorf("an idle server's [] set %v", empty.Gauges)
	}
}

func TestTritonFixture(t *testing.T) {
	ss := mapTriton(fixture(t, "triton.txt"), testMeta(""))
	var names []string
	for _, s := range ss {
		names = append(names, s.Model)
	}
	if strings.Join(names, ",") != "tensorrt_llm,ensemble,postprocessing,preprocessing" {
		t.Fatalf("models = %v (the TRT-LLM model first)", names)
	}
	s := ss[0]
	want{
		gauges: map[model.Gauge]float64{
			model.Running: 12, model.MaxRunning: 64, model.Waiting: 5, // pending count: no "waiting" type here
			model.KVUsage: 2000.0 / 8000, model.KVCapacityTokens: 8000 * 32,
		},
		counters: map[model.Counter]float64{model.Requests: 1203, model.RequestErrors: 3},
		absentC:  []model.Counter{model.PromptTokens, model.GenTokens},
		absentL:  []model.Latency{model.TTFT, model.TPOT, model.ITL},
	}.check(t, s)
	e2e, q := s.Latencies[model.E2E], s.Latencies[model.Queue]
	if e2e.Sum != 4800 || e2e.Count != 1200 || q.Sum != 120 || q.Count != 1200 || e2e.Approx == "" {
		t.Errorf("e2e %+v queue %+v, want mean-only 4800 s and 120 s over 1200", e2e, q)
	}
	if _, ok := ss[1].Gauges[model.Running]; ok {
		t.Error("the ensemble got backend gauges")
	}
}

func TestOllamaSamples(t *testing.T) {
	url := serve(t, enginetest.New(model.Ollama))
	c := &collector{s: newSession(Config{URL: url}), now: t0, id: &model.Identity{Engine: model.Ollama}}
	c.ctx = t.Context()
	ss, err := collectOllama(c)
	if err != nil {
		t.Fatal(err)
	}
	s := only(t, ss)
	if s.Model != "mistral:latest" || len(s.Gauges)+len(s.Counters)+len(s.Latencies) != 0 {
		t.Errorf("sample = %+v: Ollama exposes no concept, none may be set", s)
	}
	if s.Info["size_vram"] != "5137025024" || s.Info["vram_ratio"] != "1.000" || s.Info["quantization"] != "Q4_0" ||
		s.Info["expires_at"] != "2024-06-04T14:38:31.83753-07:00" {
		t.Errorf("info = %v", s.Info)
	}
	var ids []string
	for _, m := range c.id.Models {
		ids = append(ids, m.ID+"="+m.Extra["loaded"])
	}
	if strings.Join(ids, ",") != "mistral:latest=true,deepseek-r1:latest=false,llama3.2:latest=false" {
		t.Errorf("models = %v", ids)
	}
}

// Builds whose /slots next_token is an array count generated tokens in
// n_prompt_tokens already; upstream's object form does not.
func TestLlamaCppSlotsArrayForm(t *testing.T) {
	body := `[{"id":0,"n_ctx":4096,"is_processing":true,"n_prompt_tokens":900,"next_token":[{"has_next_token":true,"n_remain":-1,"n_decoded":400}]},
	{"id":1,"n_ctx":4096,"is_processing":false,"n_prompt_tokens":3000,"next_token":[{"n_decoded":0}]},
	{"id":2,"n_ctx":4096,"is_processing":true,"n_prompt_tokens":5000,"next_token":{"n_decoded":10}}]`
	s := model.NewSample("e", "m", t0, model.FromScrape)
	applySlots(&s, parseSlots([]byte(body)))
	want{gauges: map[model.Gauge]float64{
		model.KVUsage: (900 + 4096) / (3 * 4096.0), // slot 2 capped at its n_ctx
		model.Running: 2, model.KVCapacityTokens: 3 * 4096,
	}}.check(t, s)
	bad := model.NewSample("e", "m", t0, model.FromScrape)
	applySlots(&bad, parseSlots([]byte(`{"error":"slots disabled"}`)))
	if len(bad.Gauges) != 0 {
		t.Errorf("a non-list /slots set %v", bad.Gauges)
	}
}

func TestWithPort(t *testing.T) {
	if got := withPort("http://gpu1:8000", "8002"); got != "http://gpu1:8002" {
		t.Errorf("withPort = %q", got)
	}
	if got := withPort("http://[::1]:8002", "8002"); got != "" {
		t.Errorf("withPort on the metrics port = %q", got)
	}
}

func TestSGLangStages(t *testing.T) {
	body := `# TYPE sglang:per_stage_req_latency_seconds histogram
sglang:per_stage_req_latency_seconds_bucket{le="0.1",model_name="m",stage="prefill_forward",tp_rank="0"} 3.0
sglang:per_stage_req_latency_seconds_bucket{le="+Inf",model_name="m",stage="prefill_forward",tp_rank="0"} 4.0
sglang:per_stage_req_latency_seconds_sum{model_name="m",stage="prefill_forward",tp_rank="0"} 0.5
sglang:per_stage_req_latency_seconds_count{model_name="m",stage="prefill_forward",tp_rank="0"} 4.0
sglang:per_stage_req_latency_seconds_bucket{le="+Inf",model_name="m",stage="request_process",tp_rank="0"} 4.0
sglang:per_stage_req_latency_seconds_sum{model_name="m",stage="request_process",tp_rank="0"} 0.01
sglang:per_stage_req_latency_seconds_count{model_name="m",stage="request_process",tp_rank="0"} 4.0
`
	s := only(t, mapSGLang(mustParse(t, []byte(body)), testMeta("")))
	checkHist(t, s, model.Prefill, 4, 0.5, 0.1, 3)
	want{absentL: []model.Latency{model.Decode, model.TTFT}}.check(t, s)
}
