package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// vLLM V1's histogram buckets (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	iterBuckets    = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	nBuckets       = []float64{1, 2, 5, 10, 20}
)

// buckets125 is vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50… ≤ max.
func buckets125(maxV int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxV) {
				return out
			}
			out = append(out, v)
		}
	}
}

// metrics is one engine incarnation's Prometheus registry with vLLM V1's
// names, HELP texts, label sets (model_name, engine) and buckets. A restart
// builds a fresh one, so counters reset like a restarted vLLM's.
type metrics struct {
	reg *prometheus.Registry

	running, waiting, waitingCapacity, kvUsage prometheus.Gauge
	waitingDeferred                            prometheus.Gauge
	// loraInfo is nil without LoRA: vLLM's info gauge whose labels name
	// the batch's and the queue's adapters, its value the time it was set.
	loraInfo                                *prometheus.GaugeVec
	prefixQueries, prefixHits               prometheus.Counter
	preemptions, promptTokens, promptCached prometheus.Counter
	genTokens                               prometheus.Counter
	promptBySource, success                 *prometheus.CounterVec

	iterationTokens                                prometheus.Histogram
	promptHist, genHist, prefillKV, maxGenHist     prometheus.Histogram
	paramsN, paramsMax                             prometheus.Histogram
	ttft, itl, tpot                                prometheus.Histogram
	e2e, queue, inference, prefillTime, decodeTime prometheus.Histogram
	// nixlXfer is nil for a unified engine (no KV connector).
	nixlXfer prometheus.Histogram
}

func newMetrics(cfg engineConfig, plan kvPlan, start time.Time) *metrics {
	reg := prometheus.NewRegistry()
	// What Python's process collector exposes in every vLLM: the restart
	// marker monitors read uptime from.
	startGauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "process_start_time_seconds", Help: "Start time of the process since unix epoch in seconds."})
	reg.MustRegister(startGauge)
	startGauge.Set(float64(start.UnixNano()) / 1e9)
	labels := prometheus.Labels{"model_name": cfg.served, "engine": "0"}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(g)
		return g
	}
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
		reg.MustRegister(c)
		return c
	}
	counterVec := func(name, help, label string, values ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, []string{label})
		reg.MustRegister(c)
		for _, v := range values { // vLLM creates every child up front: zeros are exposed
			c.WithLabelValues(v)
		}
		return c
	}
	hist := func(name, help string, b []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: labels, Buckets: b})
		reg.MustRegister(h)
		return h
	}
	m := &metrics{reg: reg}
	m.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	byReason := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:num_requests_waiting_by_reason",
		Help:        "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
		ConstLabels: labels}, []string{"reason"})
	reg.MustRegister(byReason)
	m.waitingCapacity = byReason.WithLabelValues("capacity")
	m.waitingDeferred = byReason.WithLabelValues("deferred")
	if cfg.loras > 0 {
		// No model_name or engine label (loggers.py); old label sets stay
		// behind, as Python's client leaves them: readers take the newest.
		m.loraInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:lora_requests_info", Help: "Running stats on lora requests."},
			[]string{"max_lora", "waiting_lora_adapters", "running_lora_adapters"})
		reg.MustRegister(m.loraInfo)
	}
	sleep := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:engine_sleep_state",
		Help:        "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
		ConstLabels: labels}, []string{"sleep_state"})
	reg.MustRegister(sleep)
	sleep.WithLabelValues("awake").Set(1)
	sleep.WithLabelValues("weights_offloaded").Set(0)
	sleep.WithLabelValues("discard_all").Set(0)
	m.kvUsage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	m.prefixQueries = counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.prefixHits = counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	counter("vllm:external_prefix_cache_queries_total", "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.")
	counter("vllm:external_prefix_cache_hits_total", "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.")
	counter("vllm:mm_cache_queries_total", "Multi-modal cache queries, in terms of number of queried items.")
	counter("vllm:mm_cache_hits_total", "Multi-modal cache hits, in terms of number of cached items.")
	m.preemptions = counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	m.promptTokens = counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.promptBySource = counterVec("vllm:prompt_tokens_by_source_total", "Number of prompt tokens by source.", "source", "local_compute", "local_cache_hit", "external_kv_transfer")
	m.promptCached = counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).")
	m.genTokens = counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.success = counterVec("vllm:request_success_total", "Count of successfully processed requests.", "finished_reason", "stop", "length", "abort", "error", "repetition")

	tok := buckets125(cfg.maxModelLen)
	m.promptHist = hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", tok)
	m.genHist = hist("vllm:request_generation_tokens", "Number of generation tokens processed.", tok)
	m.iterationTokens = hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", iterBuckets)
	m.maxGenHist = hist("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", tok)
	m.paramsN = hist("vllm:request_params_n", "Histogram of the n request parameter.", nBuckets)
	m.paramsMax = hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", tok)
	m.ttft = hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	m.itl = hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	m.tpot = hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", itlBuckets)
	m.e2e = hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", latencyBuckets)
	m.queue = hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", latencyBuckets)
	m.inference = hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", latencyBuckets)
	m.prefillTime = hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", latencyBuckets)
	m.decodeTime = hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", latencyBuckets)
	m.prefillKV = hist("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", tok)
	if cfg.pd != "" {
		// The NIXL connector's families (kv_connector/v1/nixl/stats.py):
		// transfers are counted where performed, the decode side.
		m.nixlXfer = hist("vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
			[]float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0})
		counter("vllm:nixl_num_failed_transfers_total", "Number of failed NIXL KV Cache transfers.")
		counter("vllm:nixl_num_kv_expired_reqs_total", "Number of requests that had their KV expire. NOTE: This metric is tracked on the P instance.")
	}

	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:cache_config_info",
		Help: "Information of the LLMEngine CacheConfig",
		ConstLabels: prometheus.Labels{
			"engine":                   "0",
			"block_size":               strconv.Itoa(cfg.blockSize),
			"cache_dtype":              cfg.kvDtype,
			"calculate_kv_scales":      "False",
			"cpu_offload_gb":           "0",
			"enable_prefix_caching":    pyBool(cfg.prefixCaching),
			"gpu_memory_utilization":   strconv.FormatFloat(cfg.memUtil, 'f', -1, 64),
			"is_attention_free":        "False",
			"kv_cache_max_concurrency": fmt.Sprintf("%.2f", plan.maxConc),
			"kv_cache_memory_bytes":    "None",
			"kv_cache_size_tokens":     strconv.Itoa(plan.tokens),
			"num_cpu_blocks":           "None",
			"num_gpu_blocks":           strconv.Itoa(plan.numBlocks),
			"num_gpu_blocks_override":  overrideStr(cfg.blocksOverride),
			"prefix_caching_hash_algo": "sha256",
			"sliding_window":           "None",
			"swap_space":               "4",
		}})
	reg.MustRegister(info)
	info.Set(1)
	return m
}

func overrideStr(n int) string {
	if n <= 0 {
		return "None"
	}
	return strconv.Itoa(n)
}

// observeFinished records a finished request's per-request histograms, as
// vLLM's PrometheusStatLogger does from FinishedRequestStats.
func (m *metrics) observeFinished(r *request, t time.Time) {
	m.success.WithLabelValues(r.finish).Inc()
	m.e2e.Observe(t.Sub(r.arrival).Seconds())
	m.promptHist.Observe(float64(r.prompt))
	m.genHist.Observe(float64(r.generated))
	m.maxGenHist.Observe(float64(r.maxTokens))
	m.paramsN.Observe(1)
	m.paramsMax.Observe(float64(r.maxTokens))
	if r.scheduled.IsZero() { // never left the queue
		m.queue.Observe(t.Sub(r.arrival).Seconds())
		return
	}
	m.queue.Observe(r.scheduled.Sub(r.arrival).Seconds())
	m.inference.Observe(t.Sub(r.scheduled).Seconds())
	m.prefillKV.Observe(float64(r.prompt - r.cached))
	if r.firstTok.IsZero() {
		m.prefillTime.Observe(t.Sub(r.scheduled).Seconds())
		return
	}
	m.prefillTime.Observe(r.firstTok.Sub(r.scheduled).Seconds())
	m.decodeTime.Observe(t.Sub(r.firstTok).Seconds())
	if r.generated > 1 {
		m.tpot.Observe(r.lastTok.Sub(r.firstTok).Seconds() / float64(r.generated-1))
	}
}
