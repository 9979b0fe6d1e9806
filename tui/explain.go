package tui

import (
	"strings"

	"github.com/llmtop/llmtop/model"
)

// explanation is what one metric on screen means and where each engine
// publishes it (from the engines' metric sources; see ENGINES.md §8).
type explanation struct {
	Name, Meaning string
	From          map[model.Engine]string
	// Concepts are the model concepts the row covers: the metric the
	// adapter actually read for each (State.From) is shown beside From.
	Concepts []string
}

// readNow names the metrics the selected endpoint's values were read from
// for this row (an older vLLM's vllm:time_per_output_token_seconds for
// ITL), "" when the adapter recorded none.
func (ex explanation) readNow(st model.State) string {
	var out []string
	seen := map[string]bool{}
	for _, c := range ex.Concepts {
		if n, ok := st.From[c]; ok && n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

var explanations = []explanation{
	{"TTFT", "time from a request's arrival to its first generated token: queueing + prefill. p50/p90/p99≈ are interpolated from histogram buckets over the window shown.",
		map[model.Engine]string{model.VLLM: "histogram vllm:time_to_first_token_seconds", model.SGLang: "histogram sglang:time_to_first_token_seconds",
			model.TGI:      "approximation: mean of tgi_request_validation_duration + tgi_request_queue_duration + tgi_batch_inference_duration{method=prefill}",
			model.LlamaCpp: "not exposed (per request only, in timings.prompt_ms)", model.TRTLLM: "histogram trtllm_time_to_first_token_seconds",
			model.Triton: "not exposed", model.Ollama: "not exposed (per request prompt_eval_duration)"}, []string{"ttft"}},
	{"TPOT", "per-request mean time per output token after the first (decode speed as one user feels it).",
		map[model.Engine]string{model.VLLM: "histogram vllm:request_time_per_output_token_seconds", model.TGI: "histogram tgi_request_mean_time_per_token_duration",
			model.LlamaCpp: "Δtokens_predicted_seconds_total / Δtokens_predicted_total (aggregate mean)", model.TRTLLM: "histogram trtllm_time_per_output_token_seconds",
			model.Ollama: "eval_duration / eval_count per request"}, []string{"tpot"}},
	{"ITL", "every gap between two generated tokens (one observation per token).",
		map[model.Engine]string{model.VLLM: "histogram vllm:inter_token_latency_seconds (old vllm:time_per_output_token_seconds)", model.SGLang: "histogram sglang:inter_token_latency_seconds"}, []string{"itl"}},
	{"E2E", "whole request latency, arrival to last token.",
		map[model.Engine]string{model.VLLM: "histogram vllm:e2e_request_latency_seconds", model.SGLang: "histogram sglang:e2e_request_latency_seconds",
			model.TGI: "histogram tgi_request_duration", model.TRTLLM: "histogram trtllm_e2e_request_latency_seconds",
			model.Triton: "nv_inference_request_duration_us ÷ nv_inference_request_success (mean only)", model.Ollama: "total_duration per request"}, []string{"e2e"}},
	{"queue / prefill / decode", "the phases of a request; queue vs prefill splits TTFT, decode is the rest of E2E.",
		map[model.Engine]string{model.VLLM: "vllm:request_queue_time_seconds, vllm:request_prefill_time_seconds, vllm:request_decode_time_seconds",
			model.SGLang: "sglang:queue_time_seconds, sglang:per_stage_req_latency_seconds{stage}", model.TGI: "tgi_request_queue_duration, tgi_batch_inference_duration{method}",
			model.LlamaCpp: "prompt_seconds_total / tokens_predicted_seconds_total", model.TRTLLM: "trtllm_request_queue_time_seconds, trtllm_request_prefill_time_seconds, …decode…",
			model.Triton: "nv_inference_queue_duration_us (counter)"}, []string{"queue", "prefill", "decode"}},
	{"running / waiting", "requests in the running batch, and requests queued for a slot or KV space. A waiting count that keeps growing means demand exceeds capacity.",
		map[model.Engine]string{model.VLLM: "gauges vllm:num_requests_running, vllm:num_requests_waiting (+ _by_reason deferred)", model.SGLang: "gauges sglang:num_running_reqs, sglang:num_queue_reqs",
			model.TGI: "gauges tgi_batch_current_size, tgi_queue_size", model.LlamaCpp: "gauges llamacpp:requests_processing, llamacpp:requests_deferred",
			model.TRTLLM: "gauges trtllm_num_requests_running, trtllm_num_requests_waiting", model.Triton: "nv_trt_llm_request_metrics{request_type=active|waiting}",
			model.Ollama: "not exposed (/api/ps lists loaded models only)"}, []string{"running", "waiting", "deferred"}},
	{"KV cache", "share of the KV-cache pool in use (0–100 %). Near full, new requests wait and running ones get preempted.",
		map[model.Engine]string{model.VLLM: "gauge vllm:kv_cache_usage_perc (a 0–1 fraction despite the name)", model.SGLang: "gauge sglang:token_usage",
			model.TGI: "approximation tgi_batch_current_max_tokens / tgi_batch_max_total_tokens", model.LlamaCpp: "not exposed since 2025-05",
			model.TRTLLM: "gauge trtllm_kv_cache_utilization", model.Triton: "nv_trt_llm_kv_cache_block_metrics fraction or used/max",
			model.Ollama: "not exposed (size_vram/size is the offload ratio)"}, []string{"kv_cache_usage_ratio"}},
	{"preemptions/s", "running requests evicted to free KV space and recomputed later: a sign the KV pool is too small for the batch.",
		map[model.Engine]string{model.VLLM: "rate(vllm:num_preemptions_total)", model.SGLang: "rate(sglang:num_retracted_requests_total)"}, []string{"preemptions"}},
	{"prefix-cache hit", "share of prompt tokens found in the prefix cache over the window.",
		map[model.Engine]string{model.VLLM: "Δprefix_cache_hits_total / Δprefix_cache_queries_total", model.SGLang: "gauge sglang:cache_hit_rate",
			model.LlamaCpp: "Δprompt_tokens_cached_total / Δ(prompt_tokens_total + cached)", model.TRTLLM: "gauge trtllm_kv_cache_hit_rate"}, []string{"prefix_cache_queries", "prefix_cache_hits", "prefix_cache_hit_ratio"}},
	{"prompt / gen tok/s", "tokens processed per second over the window, from counters (engines that count at request finish look bursty).",
		map[model.Engine]string{model.VLLM: "rate(vllm:prompt_tokens_total), rate(vllm:generation_tokens_total)", model.SGLang: "rate(sglang:prompt_tokens_total), sglang:gen_throughput",
			model.TGI: "rate(tgi_request_input_length_sum), rate(tgi_request_generated_tokens_sum)", model.LlamaCpp: "rate(llamacpp:prompt_tokens_total), rate(llamacpp:tokens_predicted_total)",
			model.TRTLLM: "rate(trtllm_prompt_tokens_total), rate(trtllm_generation_tokens_total)"}, []string{"prompt_tokens", "generation_tokens", "prompt_tokens_per_s", "generation_tokens_per_s"}},
	{"finish reasons", "why requests ended in the window: stop (natural end), length (hit max_tokens), abort (client gone), error.",
		map[model.Engine]string{model.VLLM: "vllm:request_success_total{finished_reason}", model.TGI: "tgi_request_success, tgi_request_failure{err}",
			model.TRTLLM: "trtllm_request_success_total{finished_reason}", model.Triton: "nv_inference_request_success / failure"}, nil},
	{"GPU", "per device from NVML: SM utilisation, memory used/total, power/limit, temperature, active throttle reasons; engine vs other memory from the processes on the card. High utilisation is healthy on a serving box; low utilisation while requests wait is the warning.",
		nil, nil},
	{"health badge", "UP: health route OK and metrics read. DEGRADED: answers but loading/unhealthy or metrics unreadable. DOWN: refused or timed out. STALE: no scrape for 3 intervals. RESTARTED: counters went back in the window. SIMULATED: the built-in simulator (llmtop demo).",
		nil, nil},
}
