package engine

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Real /metrics answers others recorded (testdata/engines/README.md gives
// each one's repository, path, commit and what it shows). Each is scraped
// as production scrapes it (an HTTP server, ScrapeOnce, engine detection),
// and every number llmtop shows is compared with the number computed from
// the capture by expfmt, the reference parser: sums of a family's samples,
// a histogram's count and sum. What a capture does not have must not be
// shown.

const (
	ddVLLMV0     = "dd-vllm-0.4.3-metrics-e99474c0.txt"
	ddVLLMMerged = "dd-vllm-merged-metrics-5b8d70d4.txt"
	ddVLLMVer    = "dd-vllm-version-2278d8a7.json"
	ddRay        = "dd-ray-2.32.0-vllm-metrics-5b8d70d4.txt"
	ddSGLang     = "dd-sglang-0.5.10.post1-metrics-71a3042b.txt"
	ddNIM        = "dd-nim-1.0.0-metrics-8b7db5d2.txt"
	ddTGI        = "dd-tgi-metrics-9e390cde.txt"
	sglangDocs   = "sglang-docs-production-metrics-40ef116f.txt"
)

// asServed is a capture as its exporter writes it. Datadog keeps its
// fixtures without the final newline every exporter ends with (Python's
// prometheus_client, TGI's metrics-exporter-prometheus); llmtop refuses a
// body without one as cut off (TestRealCapturesWithoutFinalNewlineAreRefused),
// so the tests serve the capture with it.
func asServed(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(bytes.Clone(b), '\n')
	}
	return b
}

// reference parses a capture with expfmt, after the one repair parseProm
// itself makes (a family written in two blocks: Datadog's Ray capture).
func reference(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := expfmtParse(dropRepeatedMeta(asServed(body)))
	if err != nil {
		t.Fatalf("expfmt refuses the capture: %v", err)
	}
	return fams
}

func matches(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// refSum is the sum of a gauge or counter family's samples that carry the
// match labels (false when the capture has none).
func refSum(t *testing.T, ref map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	t.Helper()
	fam, ok := ref[name]
	if !ok {
		t.Fatalf("capture has no %s", name)
	}
	var sum float64
	n := 0
	for _, m := range fam.GetMetric() {
		if !matches(m, match) {
			continue
		}
		n++
		switch {
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		default:
			sum += m.GetUntyped().GetValue()
		}
	}
	if n == 0 {
		t.Fatalf("capture has no %s%v", name, match)
	}
	return sum
}

// refHist is a histogram family's count and sum over the series that carry
// the match labels.
func refHist(t *testing.T, ref map[string]*dto.MetricFamily, name string, match map[string]string) (count, sum float64) {
	t.Helper()
	fam, ok := ref[name]
	if !ok || fam.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("capture has no histogram %s", name)
	}
	for _, m := range fam.GetMetric() {
		if matches(m, match) {
			count += float64(m.GetHistogram().GetSampleCount())
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return count, sum
}

// checkRefHists holds each latency to the count and sum of the family the
// capture has for it.
func checkRefHists(t *testing.T, s model.Sample, ref map[string]*dto.MetricFamily, match map[string]string, hists map[model.Latency]string) {
	t.Helper()
	for l, fam := range hists {
		count, sum := refHist(t, ref, fam, match)
		h, ok := s.Latencies[l]
		if !ok {
			t.Errorf("%s absent, capture has %s (count %v)", l, fam, count)
			continue
		}
		if !near(h.Count, count) || !near(h.Sum, sum) {
			t.Errorf("%s = count %v sum %v, want %s's %v / %v", l, h.Count, h.Sum, fam, count, sum)
		}
	}
}

// captureServer serves the capture on path and any other routes given.
func scrapeCapture(t *testing.T, routes map[string][]byte) model.Scrape {
	t.Helper()
	mux := http.NewServeMux()
	for p, body := range routes {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != p {
				http.NotFound(w, r)
				return
			}
			if strings.HasSuffix(p, "metrics") {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			_, _ = w.Write(body)
		})
	}
	return scrapeOK(t, Config{URL: serve(t, mux)})
}

func sampleOf(t *testing.T, sc model.Scrape, modelName string) model.Sample {
	t.Helper()
	for _, s := range sc.Samples {
		if s.Model == modelName {
			return s
		}
	}
	var got []string
	for _, s := range sc.Samples {
		got = append(got, s.Model)
	}
	t.Fatalf("no sample for model %q (got %q)", modelName, got)
	return model.Sample{}
}

func hasNote(s model.Sample, part string) bool {
	for _, n := range s.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// vLLM 0.4.3 (V0): the names before the V1 renames, read as their
// concepts (gpu_cache_usage_perc, time_per_output_token_seconds as ITL),
// the version from /version, and nothing V0 did not have.
func TestRealVLLMV0Capture(t *testing.T) {
	body := realEngineFile(t, ddVLLMV0)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": asServed(body), "/version": realEngineFile(t, ddVLLMVer)})
	if sc.Identity.Engine != model.VLLM || sc.Identity.Version != "0.4.3" {
		t.Errorf("identity %q %q, want vllm 0.4.3 (Datadog's vllm_version.json)", sc.Identity.Engine, sc.Identity.Version)
	}
	const m = "facebook/opt-125m"
	s := only(t, sc.Samples)
	if s.Model != m {
		t.Errorf("model %q, want %q", s.Model, m)
	}
	mm := map[string]string{"model_name": m}
	blocks, _ := strconv.ParseFloat(label(ref["vllm:cache_config_info"].GetMetric()[0], "num_gpu_blocks"), 64)
	blockSize, _ := strconv.ParseFloat(label(ref["vllm:cache_config_info"].GetMetric()[0], "block_size"), 64)
	want{
		gauges: map[model.Gauge]float64{
			model.Running:          refSum(t, ref, "vllm:num_requests_running", mm),
			model.Waiting:          refSum(t, ref, "vllm:num_requests_waiting", mm),
			model.KVUsage:          refSum(t, ref, "vllm:gpu_cache_usage_perc", mm),
			model.KVCapacityTokens: blocks * blockSize,
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: refSum(t, ref, "vllm:prompt_tokens_total", mm),
			model.GenTokens:    refSum(t, ref, "vllm:generation_tokens_total", mm),
			model.Preemptions:  refSum(t, ref, "vllm:num_preemptions_total", mm),
			model.Requests:     refSum(t, ref, "vllm:request_success_total", mm),
		},
		// V0 0.4.3 had no prefix-cache counters, no speculative decoding
		// counters, no by-reason waiting and no phase histograms.
		absentG: []model.Gauge{model.PrefixHitGauge, model.Deferred, model.SpecAcceptGauge, model.MaxRunning, model.PromptTPSGauge, model.GenTPSGauge},
		absentC: []model.Counter{model.PrefixHits, model.PrefixQueries, model.SpecDraftTokens, model.SpecAcceptTokens, model.RequestErrors},
		absentL: []model.Latency{model.TPOT, model.Queue, model.Prefill, model.Decode, model.StepTokens},
	}.check(t, s)
	checkRefHists(t, s, ref, mm, map[model.Latency]string{
		model.TTFT: "vllm:time_to_first_token_seconds",
		// V0's per-token histogram observed every inter-token gap.
		model.ITL:       "vllm:time_per_output_token_seconds",
		model.E2E:       "vllm:e2e_request_latency_seconds",
		model.PromptLen: "vllm:request_prompt_tokens",
		model.OutputLen: "vllm:request_generation_tokens",
	})
	if !hasNote(s, "vllm:gpu_cache_usage_perc") || !hasNote(s, "vllm:time_per_output_token_seconds") {
		t.Errorf("notes do not say the old names were read: %q", s.Notes)
	}
}

// Datadog's current vLLM fixture: the 0.4.3 capture with the V1 families
// appended (kv_cache_usage_perc, inter_token_latency_seconds, the prefix
// counters, the phase histograms). Where both generations' names are
// served, the current one is read.
func TestRealVLLMMergedCaptureReadsTheCurrentNames(t *testing.T) {
	body := realEngineFile(t, ddVLLMMerged)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": asServed(body)})
	if sc.Identity.Engine != model.VLLM {
		t.Fatalf("engine %q", sc.Identity.Engine)
	}
	mm := map[string]string{"model_name": "facebook/opt-125m"}
	s := only(t, sc.Samples)
	want{
		gauges: map[model.Gauge]float64{
			model.Running: refSum(t, ref, "vllm:num_requests_running", mm),
			model.KVUsage: refSum(t, ref, "vllm:kv_cache_usage_perc", mm),
		},
		counters: map[model.Counter]float64{
			model.PrefixHits:    refSum(t, ref, "vllm:prefix_cache_hits_total", mm),
			model.PrefixQueries: refSum(t, ref, "vllm:prefix_cache_queries_total", mm),
			model.PromptTokens:  refSum(t, ref, "vllm:prompt_tokens_total", mm),
		},
		absentG: []model.Gauge{model.PrefixHitGauge, model.Deferred},
	}.check(t, s)
	checkRefHists(t, s, ref, mm, map[model.Latency]string{
		model.ITL:        "vllm:inter_token_latency_seconds",
		model.TPOT:       "vllm:request_time_per_output_token_seconds",
		model.Queue:      "vllm:request_queue_time_seconds",
		model.Prefill:    "vllm:request_prefill_time_seconds",
		model.Decode:     "vllm:request_decode_time_seconds",
		model.StepTokens: "vllm:iteration_tokens_total",
	})
	if got := s.From[string(model.KVUsage)]; got != "vllm:kv_cache_usage_perc" {
		t.Errorf("KV read from %q, want the current name", got)
	}
	if hasNote(s, "name used before") || hasNote(s, "old name") {
		t.Errorf("an old name noted where the current one is served: %q", s.Notes)
	}
	// A prefill instance is not inferred from external_kv_transfer at 0.
	if sc.Identity.Role != "" {
		t.Errorf("role %q from %q, want none", sc.Identity.Role, sc.Identity.RoleFrom)
	}
}

// Ray Serve (2.32.0) serves vLLM's families as ray_vllm:… with Ray's own
// labels (WorkerId, NodeAddress, …); Datadog's capture holds a 70B model's
// V0 families and an appended opt-125m block: two models, each read apart,
// each with what it has. V0's -1 block hit rates mean "prefix caching off":
// unknown, not a rejected reading.
func TestRealRayServeVLLMCapture(t *testing.T) {
	body := realEngineFile(t, ddRay)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": asServed(body)})
	if sc.Identity.Engine != engines.RayServeID {
		t.Fatalf("engine %q, want %q", sc.Identity.Engine, engines.RayServeID)
	}
	if len(sc.Samples) != 2 {
		t.Fatalf("%d samples, want one per model_name (2)", len(sc.Samples))
	}
	const big = "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8"
	bm := map[string]string{"model_name": big}
	s := sampleOf(t, sc, big)
	want{
		gauges: map[model.Gauge]float64{
			model.Running: refSum(t, ref, "ray_vllm:num_requests_running", bm),
			model.Waiting: refSum(t, ref, "ray_vllm:num_requests_waiting", bm),
			model.KVUsage: refSum(t, ref, "ray_vllm:gpu_cache_usage_perc", bm),
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: refSum(t, ref, "ray_vllm:prompt_tokens_total", bm),
			model.GenTokens:    refSum(t, ref, "ray_vllm:generation_tokens_total", bm),
			model.Requests:     refSum(t, ref, "ray_vllm:request_success_total", bm),
		},
		absentG: []model.Gauge{model.PrefixHitGauge},
		absentC: []model.Counter{model.PrefixHits, model.PrefixQueries, model.Preemptions},
		absentL: []model.Latency{model.TPOT, model.Queue, model.Prefill, model.Decode},
	}.check(t, s)
	checkRefHists(t, s, ref, bm, map[model.Latency]string{
		model.TTFT: "ray_vllm:time_to_first_token_seconds",
		model.ITL:  "ray_vllm:time_per_output_token_seconds",
		model.E2E:  "ray_vllm:e2e_request_latency_seconds",
	})
	if got := s.From[string(model.KVUsage)]; got != "ray_vllm:gpu_cache_usage_perc" {
		t.Errorf("KV cited as %q, not as Ray serves it", got)
	}
	if !hasNote(s, "ray_vllm:gpu_cache_usage_perc") || hasNote(s, " vllm:") {
		t.Errorf("notes should name Ray's families: %q", s.Notes)
	}
	if hasNote(s, "rejected") || !hasNote(s, engines.VLLMHitRateNote) {
		t.Errorf("V0's -1 hit rate read as a bad value, or not explained: %q", s.Notes)
	}

	const small = "facebook/opt-125m"
	sm := map[string]string{"model_name": small}
	o := sampleOf(t, sc, small)
	want{
		gauges: map[model.Gauge]float64{model.KVUsage: refSum(t, ref, "ray_vllm:kv_cache_usage_perc", sm)},
		counters: map[model.Counter]float64{
			model.PrefixHits:    refSum(t, ref, "ray_vllm:prefix_cache_hits_total", sm),
			model.PrefixQueries: refSum(t, ref, "ray_vllm:prefix_cache_queries_total", sm),
			model.Preemptions:   refSum(t, ref, "ray_vllm:num_preemptions_total", sm),
		},
		// The appended block has no running/waiting gauges and no
		// prompt_tokens_total for this model: unknown, not 0.
		absentG: []model.Gauge{model.Running, model.Waiting},
		absentC: []model.Counter{model.PromptTokens, model.GenTokens},
		absentL: []model.Latency{model.TTFT, model.E2E},
	}.check(t, o)
	checkRefHists(t, o, ref, sm, map[model.Latency]string{
		model.ITL:   "ray_vllm:inter_token_latency_seconds",
		model.TPOT:  "ray_vllm:request_time_per_output_token_seconds",
		model.Queue: "ray_vllm:request_queue_time_seconds",
	})
}

// SGLang 0.5.10.post1 as Datadog recorded it.
func TestRealSGLangCapture(t *testing.T) {
	body := realEngineFile(t, ddSGLang)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": asServed(body)})
	if sc.Identity.Engine != model.SGLang {
		t.Fatalf("engine %q", sc.Identity.Engine)
	}
	const m = "facebook/opt-125m"
	mm := map[string]string{"model_name": m}
	s := sampleOf(t, sc, m)
	want{
		gauges: map[model.Gauge]float64{
			model.Running:          refSum(t, ref, "sglang:num_running_reqs", mm),
			model.Waiting:          refSum(t, ref, "sglang:num_queue_reqs", mm),
			model.KVUsage:          refSum(t, ref, "sglang:token_usage", mm),
			model.KVCapacityTokens: refSum(t, ref, "sglang:max_total_num_tokens", mm),
			model.PrefixHitGauge:   refSum(t, ref, "sglang:cache_hit_rate", mm),
			model.GenTPSGauge:      refSum(t, ref, "sglang:gen_throughput", mm),
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: refSum(t, ref, "sglang:prompt_tokens_total", mm),
			model.GenTokens:    refSum(t, ref, "sglang:generation_tokens_total", mm),
			// SGLang's prompt tokens include the cached ones.
			model.PrefixHits:    refSum(t, ref, "sglang:cached_tokens_total", mm),
			model.PrefixQueries: refSum(t, ref, "sglang:prompt_tokens_total", mm),
			model.Requests:      refSum(t, ref, "sglang:num_requests_total", mm),
		},
		// spec_accept_rate is 0 without a draft model: no acceptance to
		// show. SGLang counts no preemptions; retracted requests are a
		// gauge of the moment.
		absentG: []model.Gauge{model.SpecAcceptGauge},
		absentC: []model.Counter{model.Preemptions, model.SpecDraftTokens},
		absentL: []model.Latency{model.TPOT, model.Prefill, model.Decode},
	}.check(t, s)
	// The capture agrees with itself: cached / prompt tokens is its hit rate.
	if r := s.Counters[model.PrefixHits] / s.Counters[model.PrefixQueries]; !near(r, refSum(t, ref, "sglang:cache_hit_rate", mm)) {
		t.Errorf("hits/queries %v differ from the capture's cache_hit_rate", r)
	}
	checkRefHists(t, s, ref, mm, map[model.Latency]string{
		model.TTFT:      "sglang:time_to_first_token_seconds",
		model.ITL:       "sglang:inter_token_latency_seconds",
		model.E2E:       "sglang:e2e_request_latency_seconds",
		model.Queue:     "sglang:queue_time_seconds",
		model.PromptLen: "sglang:prompt_tokens_histogram",
		model.OutputLen: "sglang:generation_tokens_histogram",
	})
}

// NIM 1.0.0 serves vLLM's names bare. Datadog's environment serves it on
// /metrics, NVIDIA's docs on /v1/metrics: both read the same, and what
// llmtop says it read names NIM's families, not vLLM's.
func TestRealNIMCaptureOnEitherRoute(t *testing.T) {
	body := realEngineFile(t, ddNIM)
	ref := reference(t, body)
	const m = "meta/llama-3.1-8b-instruct"
	mm := map[string]string{"model_name": m}
	for _, path := range []string{"/metrics", "/v1/metrics"} {
		t.Run(path, func(t *testing.T) {
			sc := scrapeCapture(t, map[string][]byte{path: asServed(body)})
			if sc.Identity.Engine != engines.NIMID {
				t.Fatalf("engine %q, want %q", sc.Identity.Engine, engines.NIMID)
			}
			s := sampleOf(t, sc, m)
			want{
				gauges: map[model.Gauge]float64{
					model.Running: refSum(t, ref, "num_requests_running", mm),
					model.Waiting: refSum(t, ref, "num_requests_waiting", mm),
					model.KVUsage: refSum(t, ref, "gpu_cache_usage_perc", mm),
					// NIM's own, beside vLLM's names (engines.NIM.Own).
					model.MaxRunning: refSum(t, ref, engines.NIMMaxRunning, mm),
				},
				counters: map[model.Counter]float64{
					model.PromptTokens:  refSum(t, ref, "prompt_tokens_total", mm),
					model.GenTokens:     refSum(t, ref, "generation_tokens_total", mm),
					model.Requests:      refSum(t, ref, "request_success_total", mm),
					model.RequestErrors: refSum(t, ref, engines.NIMFailures, mm),
				},
				absentG: []model.Gauge{model.PrefixHitGauge, model.Deferred},
				absentC: []model.Counter{model.Preemptions, model.PrefixHits, model.PrefixQueries},
				absentL: []model.Latency{model.TPOT, model.Queue, model.Prefill, model.Decode},
			}.check(t, s)
			checkRefHists(t, s, ref, mm, map[model.Latency]string{
				model.TTFT:      "time_to_first_token_seconds",
				model.ITL:       "time_per_output_token_seconds",
				model.E2E:       "e2e_request_latency_seconds",
				model.PromptLen: "request_prompt_tokens",
				model.OutputLen: "request_generation_tokens",
			})
			if got := s.From[string(model.KVUsage)]; got != "gpu_cache_usage_perc" {
				t.Errorf("KV cited as %q, want NIM's own name", got)
			}
			if hasNote(s, "vllm:") || !hasNote(s, "from gpu_cache_usage_perc") {
				t.Errorf("notes name vLLM's families, not NIM's: %q", s.Notes)
			}
		})
	}
}

// TGI 3.3.5 (intel-cpu image) as Datadog recorded it: counters without
// _total, no model label, no tgi_batch_max_total_tokens (so no KV usage:
// unknown, not 0), TTFT only as the sum of its parts' means.
func TestRealTGICapture(t *testing.T) {
	body := realEngineFile(t, ddTGI)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": body})
	if sc.Identity.Engine != model.TGI {
		t.Fatalf("engine %q", sc.Identity.Engine)
	}
	s := only(t, sc.Samples)
	success, failure := refSum(t, ref, "tgi_request_success", nil), refSum(t, ref, "tgi_request_failure", nil)
	if total := refSum(t, ref, "tgi_request_count", nil); success+failure != total {
		t.Fatalf("capture: success %v + failure %v != count %v", success, failure, total)
	}
	inCount, inSum := refHist(t, ref, "tgi_request_input_length", nil)
	_, genSum := refHist(t, ref, "tgi_request_generated_tokens", nil)
	want{
		gauges: map[model.Gauge]float64{
			model.Running: refSum(t, ref, "tgi_batch_current_size", nil),
			model.Waiting: refSum(t, ref, "tgi_queue_size", nil),
		},
		counters: map[model.Counter]float64{
			model.Requests:      success + failure,
			model.RequestErrors: failure,
			model.PromptTokens:  inSum,
			model.GenTokens:     genSum,
		},
		absentG: []model.Gauge{model.KVUsage, model.KVCapacityTokens, model.PrefixHitGauge, model.MaxRunning},
		absentC: []model.Counter{model.Preemptions, model.PrefixHits, model.PrefixQueries},
		absentL: []model.Latency{model.ITL},
	}.check(t, s)
	if inCount != success {
		t.Errorf("capture: %v input lengths for %v successes", inCount, success)
	}
	checkRefHists(t, s, ref, nil, map[model.Latency]string{
		model.E2E:   "tgi_request_duration",
		model.Queue: "tgi_request_queue_duration",
		model.TPOT:  "tgi_request_mean_time_per_token_duration",
	})
	checkRefHists(t, s, ref, map[string]string{"method": "prefill"}, map[model.Latency]string{model.Prefill: "tgi_batch_inference_duration"})
	checkRefHists(t, s, ref, map[string]string{"method": "decode"}, map[model.Latency]string{model.Decode: "tgi_batch_inference_duration"})
	ttft, ok := s.Latencies[model.TTFT]
	if !ok || len(ttft.Parts) != 3 || ttft.Approx == "" {
		t.Fatalf("TTFT %+v: want validation + queue + prefill, labelled approximate", ttft)
	}
	for i, fam := range []string{"tgi_request_validation_duration", "tgi_request_queue_duration", "tgi_batch_inference_duration"} {
		var match map[string]string
		if i == 2 {
			match = map[string]string{"method": "prefill"}
		}
		count, sum := refHist(t, ref, fam, match)
		if p := ttft.Parts[i]; !near(p.Count, count) || !near(p.Sum, sum) {
			t.Errorf("TTFT part %d = %v/%v, want %s's %v/%v", i, p.Count, p.Sum, fam, count, sum)
		}
	}
}

// Datadog stores its fixtures without the final newline; a body that ends
// mid-line may be cut mid-value, so llmtop refuses it whole rather than
// read a prefix of the last number. The captures as kept say so.
func TestRealCapturesWithoutFinalNewlineAreRefused(t *testing.T) {
	for _, name := range []string{ddVLLMV0, ddVLLMMerged, ddRay, ddNIM} {
		body := realEngineFile(t, name)
		if body[len(body)-1] == '\n' {
			t.Fatalf("%s ends with a newline: asServed is not needed for it", name)
		}
		if _, err := parseProm(body); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("%s without its final newline: err %v, want truncated", name, err)
		}
	}
}

// Every concept a capture gives is read from families the capture has:
// each family llmtop cites for a reading is in the capture's text.
func TestRealCapturesCiteOnlyTheirFamilies(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "engines", "*metrics*.txt"))
	if len(paths) < 8 {
		t.Fatalf("only %d captures: %v", len(paths), paths)
	}
	ident := regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := reference(t, raw)
		sc := scrapeCapture(t, map[string][]byte{"/metrics": asServed(raw)})
		if len(sc.Samples) == 0 {
			t.Errorf("%s: no samples", p)
		}
		for _, s := range sc.Samples {
			keys := make([]string, 0, len(s.From))
			for k := range s.From {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				cite := regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(s.From[k], "")
				for _, name := range ident.FindAllString(cite, -1) {
					if _, ok := ref[name]; !ok {
						t.Errorf("%s: %s cited from %q, which the capture does not have", filepath.Base(p), k, name)
					}
				}
			}
			for g, v := range s.Gauges {
				if !model.Plausible(v) {
					t.Errorf("%s: gauge %s = %v", filepath.Base(p), g, v)
				}
			}
		}
	}
}

// A note names a family as the wrapping layer serves it, whole names only:
// ray_vllm:x already holds vllm:x and must not become ray_ray_vllm:x.
func TestReplaceNameWholeNamesOnly(t *testing.T) {
	for _, c := range []struct{ note, from, to, want string }{
		{"KV-cache usage from vllm:gpu_cache_usage_perc (old)", "vllm:gpu_cache_usage_perc", "gpu_cache_usage_perc", "KV-cache usage from gpu_cache_usage_perc (old)"},
		{"from ray_vllm:x and vllm:x", "vllm:x", "ray_vllm:x", "from ray_vllm:x and ray_vllm:x"},
		{"vllm:x_total is not vllm:x", "vllm:x", "y", "vllm:x_total is not y"},
	} {
		if got := replaceName(c.note, c.from, c.to); got != c.want {
			t.Errorf("replaceName(%q) = %q, want %q", c.note, got, c.want)
		}
	}
}

// SGLang's own docs (production_metrics.md) print a busy server's answer:
// 162 running, 2826 queued, the early names (time_per_output_token_seconds
// observed per token, no cached-tokens counter, no KV capacity), the
// histograms' _sum first as the multiprocess collector writes them, and
// counters in Go's exponent form (8.128902e+06).
func TestRealSGLangDocsCapture(t *testing.T) {
	body := realEngineFile(t, sglangDocs)
	ref := reference(t, body)
	sc := scrapeCapture(t, map[string][]byte{"/metrics": body})
	if sc.Identity.Engine != model.SGLang {
		t.Fatalf("engine %q", sc.Identity.Engine)
	}
	const m = "meta-llama/Llama-3.1-8B-Instruct"
	mm := map[string]string{"model_name": m}
	s := only(t, sc.Samples)
	want{
		gauges: map[model.Gauge]float64{
			model.Running:        refSum(t, ref, "sglang:num_running_reqs", mm),
			model.Waiting:        refSum(t, ref, "sglang:num_queue_reqs", mm),
			model.KVUsage:        refSum(t, ref, "sglang:token_usage", mm),
			model.PrefixHitGauge: refSum(t, ref, "sglang:cache_hit_rate", mm),
			model.GenTPSGauge:    refSum(t, ref, "sglang:gen_throughput", mm),
		},
		counters: map[model.Counter]float64{
			model.PromptTokens: refSum(t, ref, "sglang:prompt_tokens_total", mm),
			model.GenTokens:    refSum(t, ref, "sglang:generation_tokens_total", mm),
		},
		// Not in this release's answer: unknown, not 0.
		absentG: []model.Gauge{model.KVCapacityTokens, model.MaxRunning},
		absentC: []model.Counter{model.PrefixHits, model.PrefixQueries, model.Requests, model.Preemptions},
		absentL: []model.Latency{model.Queue, model.TPOT, model.PromptLen, model.OutputLen},
	}.check(t, s)
	checkRefHists(t, s, ref, mm, map[model.Latency]string{
		model.TTFT: "sglang:time_to_first_token_seconds",
		model.ITL:  "sglang:time_per_output_token_seconds",
		model.E2E:  "sglang:e2e_request_latency_seconds",
	})
	// sglang:func_latency_seconds (the tokenizer's generate_request, no
	// model label) is no request latency.
	funcCount, _ := refHist(t, ref, "sglang:func_latency_seconds", nil)
	for l, h := range s.Latencies {
		if h.Count == funcCount {
			t.Errorf("%s read from func_latency_seconds", l)
		}
	}
}
