package sim

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Config holds the sim's vLLM-style flags and its own knobs. A zero field
// means "not set": the scenario may fill it, then vLLM's default applies.
// Flags set explicitly always win over a scenario.
type Config struct {
	Model                string        // --model: table key (llama-3.1-8b) or served ID; default llama-3.1-8b
	ServedModelName      string        // --served-model-name; default the model's ID
	GPU                  string        // simulated device (table key); default h100-80gb
	MaxNumSeqs           int           // --max-num-seqs
	MaxNumBatchedTokens  int           // --max-num-batched-tokens
	MaxModelLen          int           // --max-model-len; default the model's
	BlockSize            int           // --block-size; default 16
	GPUMemoryUtil        float64       // --gpu-memory-utilization; default 0.92
	KVCacheDtype         string        // --kv-cache-dtype: auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2
	ChunkedPrefill       *bool         // --enable-chunked-prefill / --no-enable-chunked-prefill; default on
	PrefixCaching        *bool         // --enable-prefix-caching / --no-enable-prefix-caching; default on
	NumGPUBlocksOverride int           // --num-gpu-blocks-override: force the pool size (vLLM: "used for testing preemption")
	DisableLogStats      bool          // --disable-log-stats: no periodic stats line
	LogStatsInterval     time.Duration // VLLM_LOG_STATS_INTERVAL; default 10s
	Port                 int           // shown in the startup log; default 8000

	// Scenario is a timeline: comma-separated segments "name[+name…][:duration]",
	// e.g. "healthy:60s,queue-buildup:2m,crash-restart". A segment without a
	// duration runs forever; Loop repeats the whole timeline.
	Scenario string
	Loop     bool
	// Background turns on the built-in traffic generator (Poisson arrivals).
	Background bool
	// TrafficScale multiplies the scenario's arrival rate; default 1.
	TrafficScale float64
	// Rate, when set, replaces the scenario's arrival rate (requests/s)
	// before TrafficScale: a fixed load to compare flags under.
	Rate float64
	// MaxBackgroundWaiting caps the queue the generator feeds (external
	// clients are never capped); default 4000.
	MaxBackgroundWaiting int

	Seed  uint64
	Clock Clock     // default the real clock; a *FakeClock for tests
	Log   io.Writer // vLLM-format log lines; must not block (see LogPipe). nil = discard
	// PD is the engine's part in prefill/decode disaggregation: "prefill"
	// (each request generates its first token and hands its KV over: max
	// tokens 1), "decode" (each request's KV arrives over the connector,
	// KVTransfer on average, before it decodes), or "" (unified). Either
	// role serves vLLM's NIXL families, counted where vLLM counts them.
	PD         string
	KVTransfer time.Duration
	// LoRAAdapters is how many LoRA adapters the background requests ask
	// for, evenly (0: none); MaxLoRAs is --max-loras, the adapters one
	// batch may hold (vLLM's default 1). A waiting request whose adapter
	// cannot join the batch is deferred.
	LoRAAdapters int
	MaxLoRAs     int
	// StartupTime is how long a (re)start takes before the API server
	// listens; default 12s (the cold-start scenario makes it longer).
	StartupTime time.Duration
}

// The P/D roles (Config.PD).
const (
	PDPrefill = "prefill"
	PDDecode  = "decode"
)

// engineConfig is a Config resolved against the tables and vLLM's defaults.
type engineConfig struct {
	model          ModelSpec
	gpu            GPUSpec
	served         string
	maxNumSeqs     int
	maxBatched     int
	maxModelLen    int
	blockSize      int
	memUtil        float64
	kvDtype        string
	fp8            bool
	chunked        bool
	prefixCaching  bool
	blocksOverride int
	logStats       bool
	logInterval    time.Duration
	port           int
	startup        time.Duration
	explicit       []string // non-default args, for the startup log
	pd             string
	kvXfer         time.Duration
	loras          int
	maxLoras       int
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// merge fills c's unset fields from o (a scenario's engine overrides).
func (c Config) merge(o Config) Config {
	if c.MaxNumSeqs == 0 {
		c.MaxNumSeqs = o.MaxNumSeqs
	}
	if c.MaxNumBatchedTokens == 0 {
		c.MaxNumBatchedTokens = o.MaxNumBatchedTokens
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = o.MaxModelLen
	}
	if c.GPUMemoryUtil == 0 {
		c.GPUMemoryUtil = o.GPUMemoryUtil
	}
	if c.ChunkedPrefill == nil {
		c.ChunkedPrefill = o.ChunkedPrefill
	}
	if c.PrefixCaching == nil {
		c.PrefixCaching = o.PrefixCaching
	}
	if c.NumGPUBlocksOverride == 0 {
		c.NumGPUBlocksOverride = o.NumGPUBlocksOverride
	}
	if c.StartupTime == 0 {
		c.StartupTime = o.StartupTime
	}
	if c.LoRAAdapters == 0 {
		c.LoRAAdapters = o.LoRAAdapters
	}
	if c.MaxLoRAs == 0 {
		c.MaxLoRAs = o.MaxLoRAs
	}
	return c
}

// resolve validates c the way vLLM's argument checks do and applies vLLM's
// defaults (EngineArgs.get_batch_defaults for an OpenAI server).
func (c Config) resolve() (engineConfig, error) {
	var e engineConfig
	var err error
	if c.Model == "" {
		c.Model = "llama-3.1-8b"
	}
	if c.GPU == "" {
		c.GPU = "h100-80gb"
	}
	if e.model, err = lookupModel(c.Model); err != nil {
		return e, err
	}
	if e.gpu, err = lookupGPU(c.GPU); err != nil {
		return e, err
	}
	e.served = c.ServedModelName
	if e.served == "" {
		e.served = e.model.ID
	}
	note := func(k string, v any) { e.explicit = append(e.explicit, fmt.Sprintf("'%s': %v", k, v)) }
	note("model", "'"+e.model.ID+"'")
	big := e.gpu.VRAM >= 160*GiB || (e.gpu.VRAM >= 70*GiB && !strings.Contains(e.gpu.Name, "A100"))
	e.maxNumSeqs, e.maxBatched = 256, 2048
	if big {
		e.maxNumSeqs, e.maxBatched = 1024, 8192
		if e.gpu.VRAM >= 160*GiB {
			e.maxBatched = 16384
		}
	}
	if c.MaxNumSeqs < 0 || c.MaxNumBatchedTokens < 0 || c.MaxModelLen < 0 || c.BlockSize < 0 || c.NumGPUBlocksOverride < 0 || c.MaxLoRAs < 0 {
		return e, fmt.Errorf("negative values are not allowed for --max-num-seqs, --max-num-batched-tokens, --max-model-len, --block-size, --num-gpu-blocks-override or --max-loras")
	}
	if c.MaxNumSeqs > 0 {
		e.maxNumSeqs = c.MaxNumSeqs
		note("max_num_seqs", c.MaxNumSeqs)
	}
	e.maxModelLen = e.model.MaxModelLen
	if c.MaxModelLen > 0 {
		if c.MaxModelLen > e.model.MaxModelLen {
			return e, fmt.Errorf("User-specified max_model_len (%d) is greater than the derived max_model_len (max_position_embeddings=%d or model_max_length=None in model's config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error", c.MaxModelLen, e.model.MaxModelLen)
		}
		e.maxModelLen = c.MaxModelLen
		note("max_model_len", c.MaxModelLen)
	}
	e.chunked = boolOr(c.ChunkedPrefill, true)
	if c.ChunkedPrefill != nil {
		note("enable_chunked_prefill", pyBool(e.chunked))
	}
	e.prefixCaching = boolOr(c.PrefixCaching, true)
	if c.PrefixCaching != nil {
		note("enable_prefix_caching", pyBool(e.prefixCaching))
	}
	if !e.chunked {
		e.maxBatched = max(e.maxModelLen, e.maxBatched)
	}
	if c.MaxNumBatchedTokens > 0 {
		e.maxBatched = c.MaxNumBatchedTokens
		note("max_num_batched_tokens", c.MaxNumBatchedTokens)
		if !e.chunked && e.maxBatched < e.maxModelLen {
			return e, fmt.Errorf("max_num_batched_tokens (%d) is smaller than max_model_len (%d). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len.", e.maxBatched, e.maxModelLen)
		}
	}
	if e.maxBatched < e.maxNumSeqs {
		return e, fmt.Errorf("max_num_batched_tokens (%d) must be greater than or equal to max_num_seqs (%d).", e.maxBatched, e.maxNumSeqs)
	}
	e.blockSize = 16
	if c.BlockSize > 0 {
		switch c.BlockSize {
		case 1, 8, 16, 32, 64, 128:
		default:
			return e, fmt.Errorf("argument --block-size: invalid choice: %d (choose from 1, 8, 16, 32, 64, 128)", c.BlockSize)
		}
		e.blockSize = c.BlockSize
		note("block_size", c.BlockSize)
	}
	e.memUtil = 0.92
	if c.GPUMemoryUtil != 0 {
		if c.GPUMemoryUtil <= 0 || c.GPUMemoryUtil > 1 {
			return e, fmt.Errorf("GPU memory utilization must be less than 1.0. Got %v.", c.GPUMemoryUtil)
		}
		e.memUtil = c.GPUMemoryUtil
		note("gpu_memory_utilization", c.GPUMemoryUtil)
	}
	e.kvDtype = c.KVCacheDtype
	switch e.kvDtype {
	case "", "auto":
		e.kvDtype = "auto"
	case "bfloat16", "float16":
	case "fp8", "fp8_e4m3", "fp8_e5m2":
		e.fp8 = true
	default:
		return e, fmt.Errorf("argument --kv-cache-dtype: invalid choice: '%s' (choose from 'auto', 'bfloat16', 'float16', 'fp8', 'fp8_e4m3', 'fp8_e5m2')", e.kvDtype)
	}
	if e.kvDtype != "auto" {
		note("kv_cache_dtype", "'"+e.kvDtype+"'")
	}
	e.blocksOverride = c.NumGPUBlocksOverride
	if e.blocksOverride > 0 {
		note("num_gpu_blocks_override", e.blocksOverride)
	}
	e.logStats = !c.DisableLogStats
	e.logInterval = c.LogStatsInterval
	if e.logInterval <= 0 {
		e.logInterval = 10 * time.Second
	}
	e.port = c.Port
	e.pd, e.kvXfer = c.PD, c.KVTransfer
	e.loras, e.maxLoras = c.LoRAAdapters, c.MaxLoRAs
	if e.loras > 0 && e.maxLoras <= 0 {
		e.maxLoras = 1
	}
	if e.pd == PDDecode && e.kvXfer <= 0 {
		e.kvXfer = 40 * time.Millisecond
	}
	if e.port == 0 {
		e.port = 8000
	}
	e.startup = c.StartupTime
	if e.startup <= 0 {
		e.startup = 12 * time.Second
	}
	return e, nil
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// kvPlan is the startup arithmetic vLLM logs: how many blocks the pool
// holds, or which error stops the engine.
type kvPlan struct {
	availBytes float64
	numBlocks  int
	tokens     int
	maxConc    float64
	fault      startupFault
}

type startupFault int

const (
	faultNone      startupFault = iota
	faultLoadOOM                // weights do not fit the device
	faultNoKVMem                // nothing left for the cache blocks
	faultSeqLen                 // pool smaller than one max_model_len request
	faultWarmupOOM              // the sampler warm-up does not fit outside vLLM's memory share
)

// The sampler warm-up (vLLM's _dummy_sampler_run) runs max_num_seqs dummy
// requests after the KV pool is allocated, so it must fit in the memory
// outside vLLM's --gpu-memory-utilization share, less the CUDA context and
// other non-torch memory: fp32 logits, probabilities and sort buffers over a
// 128k vocabulary, about 1.5 MiB per request. 1024 requests (the default on
// an 80 GB GPU) fit at 0.97 (1.88 GiB left) but not at 0.98 (1.08 GiB).
const (
	warmupPerSeq   = 1.5 * (1 << 20)
	nonTorchMemory = 0.5 * GiB
)

// warmupBytes is what the sampler warm-up allocates.
func (e engineConfig) warmupBytes() float64 { return float64(e.maxNumSeqs) * warmupPerSeq }

// warmupRoom is the memory the warm-up can use.
func (e engineConfig) warmupRoom() float64 {
	return e.gpu.VRAM*(1-e.memUtil) - nonTorchMemory
}

func (e engineConfig) planKV() kvPlan {
	var p kvPlan
	requested := e.gpu.VRAM * e.memUtil
	if e.model.WeightsBytes > e.gpu.VRAM*0.97 {
		p.fault = faultLoadOOM
		return p
	}
	p.availBytes = requested - e.model.WeightsBytes - nonKVOverhead
	if p.availBytes <= 0 && e.blocksOverride == 0 {
		p.fault = faultNoKVMem
		return p
	}
	perBlock := e.model.kvBytesPerToken(e.fp8) * float64(e.blockSize)
	p.numBlocks = int(p.availBytes / perBlock)
	if e.blocksOverride > 0 {
		p.numBlocks = e.blocksOverride
	}
	p.tokens = p.numBlocks * e.blockSize
	perReq := (e.maxModelLen + e.blockSize - 1) / e.blockSize
	p.maxConc = float64(p.numBlocks) / float64(perReq)
	if p.tokens < e.maxModelLen {
		p.fault = faultSeqLen
	} else if e.warmupBytes() > e.warmupRoom() {
		p.fault = faultWarmupOOM
	}
	return p
}
