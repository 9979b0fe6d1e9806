package model

import "strconv"

// Gauge names an instantaneous concept. Adapters set only what the engine
// exposes; the Store treats a missing key as "not exposed".
type Gauge string

const (
	Running  Gauge = "running"  // requests in the running batch
	Waiting  Gauge = "waiting"  // requests queued (vLLM: capacity + deferred)
	Deferred Gauge = "deferred" // vLLM waiting_by_reason="deferred" (part of Waiting); llama.cpp requests_deferred is its whole Waiting
	KVUsage  Gauge = "kv_cache_usage_ratio"
	// PrefixHitGauge is used only for engines that publish a hit-rate gauge
	// (SGLang cache_hit_rate, TRT-LLM kv_cache_hit_rate); engines with
	// counters set PrefixQueries/PrefixHits instead.
	PrefixHitGauge Gauge = "prefix_cache_hit_ratio"
	// PromptTPSGauge / GenTPSGauge carry throughput an engine (or a log line)
	// states directly; counters are preferred when both exist.
	PromptTPSGauge Gauge = "prompt_tokens_per_s"
	GenTPSGauge    Gauge = "generation_tokens_per_s"
	// SpecAcceptGauge is a ready-made acceptance ratio (SGLang spec_accept_rate).
	SpecAcceptGauge Gauge = "spec_decode_acceptance_ratio"
	// KVCapacityTokens is the KV pool size in tokens when known.
	KVCapacityTokens Gauge = "kv_capacity_tokens"
	// MaxRunning is the engine's configured concurrency cap when it exposes it.
	MaxRunning Gauge = "max_running"
	// BatchPerStep is the engine's own average of requests per forward pass
	// (llama.cpp n_busy_slots_per_decode, since it started).
	BatchPerStep Gauge = "batch_per_step"
	// Paused is the requests paused for want of KV blocks now (TensorRT-LLM's
	// preemption: inflightBatchingStats.numPausedRequests).
	Paused Gauge = "paused"
	// The KV hand-over queues of a disaggregated SGLang instance
	// (metrics_collector.py): prefill requests waiting for the bootstrap
	// handshake with their decode peer; decode requests waiting to
	// preallocate KV space for the transfer; decode requests polling for
	// their KV.
	PDBootstrapQueue Gauge = "pd_bootstrap_queue"
	PDPreallocQueue  Gauge = "pd_prealloc_queue"
	PDTransferQueue  Gauge = "pd_transfer_queue"
	// LoRASlotsUsed and LoRASlotsTotal are the LoRA adapter slots of one
	// batch in use and in all (SGLang's lora_pool_slots_used, _total:
	// --max-loras-per-batch).
	LoRASlotsUsed  Gauge = "lora_slots_used"
	LoRASlotsTotal Gauge = "lora_slots_total"
)

// Counter names a cumulative concept; the Store turns it into a rate.
type Counter string

const (
	PromptTokens     Counter = "prompt_tokens"
	GenTokens        Counter = "generation_tokens"
	Requests         Counter = "requests" // finished requests
	Preemptions      Counter = "preemptions"
	PrefixQueries    Counter = "prefix_cache_queries" // tokens looked up
	PrefixHits       Counter = "prefix_cache_hits"    // tokens found
	SpecDraftTokens  Counter = "spec_draft_tokens"
	SpecAcceptTokens Counter = "spec_accepted_tokens"
	// SpecDrafts counts drafts proposed (each up to the draft length):
	// the denominator of the acceptance at each draft position.
	SpecDrafts    Counter = "spec_drafts"
	RequestErrors Counter = "request_errors"
	// HTTP responses of the API routes (/v1/…) from the engine's HTTP
	// instrumentation (vLLM, TensorRT-LLM: http_requests_total by status,
	// often grouped as 2xx/4xx/5xx): all, server errors, and rejections
	// (429/503, only where exact codes are served).
	HTTPResponses Counter = "http_responses"
	HTTP5xx       Counter = "http_5xx"
	HTTPRejected  Counter = "http_rejected"
	// HTTP4xx are the client errors but the rejections (429) where codes
	// are exact; all 4xx where the engine groups them.
	HTTP4xx Counter = "http_4xx"
	// KVTransferFailures are KV hand-overs that failed (prefill/decode
	// disaggregation: vLLM's NIXL failed transfers, SGLang's failed
	// transfer requests), counted where the transfer is performed.
	KVTransferFailures Counter = "kv_transfer_failures"
	// KVTransferBytes are the bytes KV hand-overs moved, counted where the
	// transfer is observed (the sum of vLLM's nixl_bytes_transferred
	// histogram; SGLang's kv_transfer_total_mb, in MiB).
	KVTransferBytes Counter = "kv_transfer_bytes"
	// KVExpired are requests whose KV the prefill side let expire before
	// the decode side pulled it (vLLM's nixl_num_kv_expired_reqs, tracked
	// on the prefill instance).
	KVExpired Counter = "kv_transfer_expired"
)

// Latency names a per-request (or per-token) duration distribution. All
// histograms are in seconds.
type Latency string

const (
	TTFT    Latency = "ttft"
	TPOT    Latency = "tpot" // per-request mean time per output token (excl. first)
	ITL     Latency = "itl"  // every inter-token gap
	E2E     Latency = "e2e"
	Queue   Latency = "queue"
	Prefill Latency = "prefill"
	Decode  Latency = "decode"
)

// KVTransfer is the time a KV cache hand-over took (prefill/decode
// disaggregation: vLLM's NIXL transfers, counted on the instance that
// performs them, the decode side). Not in Latencies: it is no request's
// phase the latency pane shows, but the routing rules read it.
const KVTransfer Latency = "kv_transfer"

// Token-count distributions per request, kept beside the latencies
// because the Store windows every histogram alike. They count tokens, not
// seconds, and are not in Latencies.
const (
	PromptLen  Latency = "prompt_len"  // prompt tokens per request
	OutputLen  Latency = "output_len"  // generated tokens per request
	StepTokens Latency = "step_tokens" // tokens per engine step (vLLM iteration_tokens_total)
)

// Tokens reports whether a distribution counts tokens rather than seconds.
func (l Latency) Tokens() bool { return l == PromptLen || l == OutputLen || l == StepTokens }

// Latencies lists every latency concept in display order.
var Latencies = []Latency{TTFT, TPOT, ITL, E2E, Queue, Prefill, Decode}

// Source says where a sample's numbers came from.
type Source string

const (
	FromScrape Source = "scrape" // the engine's /metrics or JSON API
	FromLog    Source = "log"    // parsed from the engine's periodic log lines
)

// FinishReasons is the concept key (Sample.From) of the finished-request
// counter split by reason (Sample.FinishReasons).
const FinishReasons = "finish_reasons"

// SpecAcceptByPos is the concept key (Sample.From) of the accepted draft
// tokens by draft position, read into the counters SpecAcceptPos(0…).
const SpecAcceptByPos = "spec_accepted_by_position"

// MaxSpecPos bounds the draft positions read (drafts are a few tokens).
const MaxSpecPos = 16

// SpecAcceptPos is the counter of draft tokens accepted at position i
// (0 the first drafted token).
func SpecAcceptPos(i int) Counter { return Counter("spec_accepted_pos_" + strconv.Itoa(i)) }
