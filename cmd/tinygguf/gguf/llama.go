package gguf

import (
	"fmt"
	"math/rand/v2"
)

// Shape is the size of a generated llama-architecture model.
type Shape struct {
	Name    string // general.name
	Layers  int    // llama.block_count
	Embd    int    // llama.embedding_length
	Heads   int    // llama.attention.head_count
	KVHeads int    // llama.attention.head_count_kv
	FFN     int    // llama.feed_forward_length
	Context int    // llama.context_length (the model's trained context)
	Words   int    // how many words of the built-in list go into the vocabulary (with their prefixes)
	Seed    uint64 // weights are a pure function of Shape, Seed included
}

// Tiny is the default shape: ≈300 KB, loads in milliseconds, decodes hundreds of tokens per second
// on one CPU thread.
var Tiny = Shape{Name: "llmtop-tiny", Layers: 2, Embd: 64, Heads: 4, KVHeads: 2, FFN: 192, Context: 4096, Words: 48, Seed: 1}

// Validate reports a shape the engines would refuse.
func (s Shape) Validate() error {
	switch {
	case s.Layers < 1 || s.Layers > 256:
		return fmt.Errorf("layers %d: want 1-256", s.Layers)
	case s.Embd < 8 || s.Embd > 16384 || s.Embd%8 != 0:
		return fmt.Errorf("embd %d: want a multiple of 8 in 8-16384", s.Embd)
	case s.Heads < 1 || s.Embd%s.Heads != 0:
		return fmt.Errorf("heads %d must divide embd %d", s.Heads, s.Embd)
	case (s.Embd/s.Heads)%2 != 0:
		return fmt.Errorf("head size %d must be even (rotary embedding)", s.Embd/s.Heads)
	case s.KVHeads < 1 || s.Heads%s.KVHeads != 0:
		return fmt.Errorf("kv-heads %d must divide heads %d", s.KVHeads, s.Heads)
	case s.FFN < 1 || s.FFN > 65536:
		return fmt.Errorf("ffn %d: want 1-65536", s.FFN)
	case s.Context < 16 || s.Context > 1<<20:
		return fmt.Errorf("context %d: want 16-1048576", s.Context)
	case s.Words < 0 || s.Words > len(words):
		return fmt.Errorf("words %d: want 0-%d", s.Words, len(words))
	}
	return nil
}

// Params returns the number of weights.
func (s Shape) Params(vocab int) int {
	kv := s.Embd / s.Heads * s.KVHeads
	perLayer := 2*s.Embd + 2*s.Embd*s.Embd + 2*s.Embd*kv + 3*s.Embd*s.FFN
	return 2*vocab*s.Embd + s.Embd + s.Layers*perLayer
}

// Hidden channel 0 carries a constant through every layer (nothing writes to it), and the output
// rows of special and byte tokens weigh it strongly negative: their logits sit far below every
// printable token's, so a request never samples EOS and runs exactly to its max_tokens, one
// printable token per streamed chunk.
const (
	constChannel = 8.0  // the embedding value of channel 0 for every token
	suppress     = -8.0 // output weight on channel 0 for special and byte tokens
	weightStd    = 0.1  // projections that read from the residual stream
	writeStd     = 0.02 // projections that write into it, kept small so channel 0 dominates
)

// Build makes a llama-architecture GGUF with F16 weights (norms F32, as llama.cpp converts them) and
// the vocabulary of Vocab.
func Build(s Shape) (*File, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("gguf: shape: %w", err)
	}
	v := NewVocab(s.Words)
	n := len(v.Tokens)
	headDim := s.Embd / s.Heads
	kvDim := headDim * s.KVHeads
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	normal := func(count int, std float64) []float32 {
		out := make([]float32, count)
		for i := range out {
			out[i] = float32(rng.NormFloat64() * std)
		}
		return out
	}
	ones := func(count int) []float32 {
		out := make([]float32, count)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	// ggml dims are [inputs, outputs]: row o of a weight is data[o*inputs : (o+1)*inputs].
	mat := func(name string, in, out int, std float64) Tensor {
		return Tensor{Name: name, Dims: []uint64{uint64(in), uint64(out)}, Type: F16, Data: normal(in*out, std)}
	}
	zeroRow0 := func(t Tensor) Tensor {
		in := int(t.Dims[0])
		clear(t.Data[:in])
		return t
	}

	embd := Tensor{Name: "token_embd.weight", Dims: []uint64{uint64(s.Embd), uint64(n)}, Type: F16, Data: normal(s.Embd*n, 1)}
	for tok := 0; tok < n; tok++ {
		embd.Data[tok*s.Embd] = constChannel
	}
	out := mat("output.weight", s.Embd, n, weightStd)
	for tok := 0; tok < n; tok++ {
		if v.Types[tok] == TokenNormal {
			out.Data[tok*s.Embd] = 0
		} else {
			out.Data[tok*s.Embd] = suppress
		}
	}
	tensors := []Tensor{embd}
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		tensors = append(tensors,
			Tensor{Name: p + "attn_norm.weight", Dims: []uint64{uint64(s.Embd)}, Type: F32, Data: ones(s.Embd)},
			mat(p+"attn_q.weight", s.Embd, s.Embd, weightStd),
			mat(p+"attn_k.weight", s.Embd, kvDim, weightStd),
			mat(p+"attn_v.weight", s.Embd, kvDim, weightStd),
			zeroRow0(mat(p+"attn_output.weight", s.Embd, s.Embd, writeStd)),
			Tensor{Name: p + "ffn_norm.weight", Dims: []uint64{uint64(s.Embd)}, Type: F32, Data: ones(s.Embd)},
			mat(p+"ffn_gate.weight", s.Embd, s.FFN, weightStd),
			mat(p+"ffn_up.weight", s.Embd, s.FFN, weightStd),
			zeroRow0(mat(p+"ffn_down.weight", s.FFN, s.Embd, writeStd)),
		)
	}
	tensors = append(tensors,
		Tensor{Name: "output_norm.weight", Dims: []uint64{uint64(s.Embd)}, Type: F32, Data: ones(s.Embd)},
		out)

	kv := []KV{
		{"general.architecture", "llama"},
		{"general.name", s.Name},
		{"general.file_type", uint32(1)}, // LLAMA_FTYPE_MOSTLY_F16
		{"llama.context_length", uint32(s.Context)},
		{"llama.embedding_length", uint32(s.Embd)},
		{"llama.block_count", uint32(s.Layers)},
		{"llama.feed_forward_length", uint32(s.FFN)},
		{"llama.attention.head_count", uint32(s.Heads)},
		{"llama.attention.head_count_kv", uint32(s.KVHeads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.rope.dimension_count", uint32(headDim)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.vocab_size", uint32(n)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", v.Tokens},
		{"tokenizer.ggml.scores", v.Scores},
		{"tokenizer.ggml.token_type", v.Types},
		{"tokenizer.ggml.unknown_token_id", uint32(v.Unk)},
		{"tokenizer.ggml.bos_token_id", uint32(v.BOS)},
		{"tokenizer.ggml.eos_token_id", uint32(v.EOS)},
		{"tokenizer.ggml.padding_token_id", uint32(v.Unk)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
		{"tokenizer.chat_template", ChatMLTemplate},
	}
	return &File{KV: kv, Tensors: tensors}, nil
}
