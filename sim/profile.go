package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// GiB is 2^30 bytes, the unit vLLM's logs use.
const GiB = 1 << 30

// GPUSpec is a simulated device: what the roofline needs.
type GPUSpec struct {
	Key       string  // flag value, e.g. "h100-80gb"
	Name      string  // as NVML would name it
	VRAM      float64 // bytes the driver reports as total
	Bandwidth float64 // HBM bytes/s (datasheet)
	FLOPS     float64 // dense bf16 FLOP/s (datasheet)
	PowerMax  float64 // W, board power limit
}

// ModelSpec is a simulated model: enough of its config.json to size weights
// and KV cache.
type ModelSpec struct {
	Key          string  // flag value, e.g. "llama-3.1-8b"
	ID           string  // served model name
	Arch         string  // architecture vLLM resolves
	Params       float64 // parameters
	Layers       int     // transformer layers
	KVHeads      int     // key/value heads (GQA)
	HeadDim      int     // per-head dimension
	MaxModelLen  int     // max_position_embeddings
	WeightsBytes float64 // bf16 weights on the device
}

// Efficiency factors of the roofline (documented in docs/sim.md).
const (
	prefillMFU    = 0.45                    // share of dense FLOPS a prefill reaches
	bandwidthEff  = 0.80                    // share of HBM bandwidth a decode step reaches
	stepOverhead  = 1200 * time.Microsecond // scheduler + sampler + launch per step
	perSeqCost    = 35 * time.Microsecond   // per decoding sequence (sampling, metadata)
	nonKVOverhead = 2.0 * GiB               // activations peak + CUDA graphs + non-torch memory
)

// GPUs is the table of simulated devices.
var GPUs = map[string]GPUSpec{
	"h100-80gb": {"h100-80gb", "NVIDIA H100 80GB HBM3", 79.19 * GiB, 3.35e12, 989e12, 700},
	"h200":      {"h200", "NVIDIA H200", 139.8 * GiB, 4.8e12, 989e12, 700},
	"a100-80gb": {"a100-80gb", "NVIDIA A100-SXM4-80GB", 79.15 * GiB, 2.039e12, 312e12, 400},
	"a100-40gb": {"a100-40gb", "NVIDIA A100-SXM4-40GB", 39.39 * GiB, 1.555e12, 312e12, 400},
	"l4":        {"l4", "NVIDIA L4", 22.49 * GiB, 300e9, 121e12, 72},
	"a10g":      {"a10g", "NVIDIA A10G", 22.49 * GiB, 600e9, 125e12, 300},
	"rtx-4090":  {"rtx-4090", "NVIDIA GeForce RTX 4090", 23.99 * GiB, 1008e9, 165e12, 450},
}

// Models is the table of simulated models.
var Models = map[string]ModelSpec{
	"llama-3.1-8b":  {"llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", "LlamaForCausalLM", 8.03e9, 32, 8, 128, 131072, 16.06e9},
	"llama-3.1-70b": {"llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", "LlamaForCausalLM", 70.6e9, 80, 8, 128, 131072, 141.1e9},
	"qwen2.5-7b":    {"qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", "Qwen2ForCausalLM", 7.62e9, 28, 4, 128, 32768, 15.23e9},
	"mistral-7b":    {"mistral-7b", "mistralai/Mistral-7B-Instruct-v0.3", "MistralForCausalLM", 7.25e9, 32, 8, 128, 32768, 14.5e9},
	"qwen3-0.6b":    {"qwen3-0.6b", "Qwen/Qwen3-0.6B", "Qwen3ForCausalLM", 0.75e9, 28, 8, 128, 40960, 1.5e9},
}

// keys lists a table's keys sorted, for error messages and docs.
func keys[V any](m map[string]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// lookupModel finds a model by table key or served ID.
func lookupModel(name string) (ModelSpec, error) {
	if m, ok := Models[name]; ok {
		return m, nil
	}
	for _, m := range Models {
		if strings.EqualFold(m.ID, name) {
			return m, nil
		}
	}
	return ModelSpec{}, fmt.Errorf("unknown simulated model %q (known: %s)", name, keys(Models))
}

func lookupGPU(name string) (GPUSpec, error) {
	if g, ok := GPUs[strings.ToLower(name)]; ok {
		return g, nil
	}
	return GPUSpec{}, fmt.Errorf("unknown simulated GPU %q (known: %s)", name, keys(GPUs))
}

// kvBytesPerToken is K and V for every layer: 2 × layers × kv_heads ×
// head_dim × bytes per element (2 for bf16/auto, 1 for fp8).
func (m ModelSpec) kvBytesPerToken(fp8 bool) float64 {
	el := 2.0
	if fp8 {
		el = 1
	}
	return 2 * float64(m.Layers*m.KVHeads*m.HeadDim) * el
}

// physics is the step-time model of one model on one GPU.
type physics struct {
	prefillRate float64       // prompt tokens/s when compute-bound
	weightsRead time.Duration // reading every weight once: the decode floor
	perKVToken  float64       // seconds per resident KV token read in a step
}

func newPhysics(m ModelSpec, g GPUSpec, fp8 bool) physics {
	bw := g.Bandwidth * bandwidthEff
	return physics{
		prefillRate: g.FLOPS * prefillMFU / (2 * m.Params),
		weightsRead: time.Duration(m.WeightsBytes / bw * float64(time.Second)),
		perKVToken:  m.kvBytesPerToken(fp8) / bw,
	}
}

// stepTime is one engine step: fixed overhead, then the roofline of compute
// (prefill tokens) against the weight read, then the per-sequence and
// attention (resident KV) costs.
func (p physics) stepTime(prefillTokens, decodeSeqs, residentKV int) time.Duration {
	compute := time.Duration(float64(prefillTokens) / p.prefillRate * float64(time.Second))
	d := stepOverhead + max(compute, p.weightsRead)
	d += time.Duration(decodeSeqs) * perSeqCost
	d += time.Duration(float64(residentKV) * p.perKVToken * float64(time.Second))
	return d
}
