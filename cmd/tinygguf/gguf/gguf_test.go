package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

func mustWrite(t *testing.T, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// TestHeaderBytes checks the fixed header against the spec byte by byte, not against our reader.
func TestHeaderBytes(t *testing.T) {
	f := &File{
		KV:      []KV{{"general.architecture", "llama"}},
		Tensors: []Tensor{{Name: "a", Dims: []uint64{3}, Type: F32, Data: []float32{1, 2, 3}}},
	}
	b := mustWrite(t, f)
	want := []byte{'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(b[:24], want) {
		t.Fatalf("header = % x, want % x", b[:24], want)
	}
	// key: u64 len 20, "general.architecture", type 8 (string), u64 len 5, "llama"
	p := 24
	if n := binary.LittleEndian.Uint64(b[p:]); n != 20 || string(b[p+8:p+28]) != "general.architecture" {
		t.Fatalf("first key = %d %q", n, b[p+8:p+28])
	}
	p += 28
	if typ := binary.LittleEndian.Uint32(b[p:]); typ != uint32(TypeString) {
		t.Fatalf("value type = %d, want 8", typ)
	}
	// tensor info follows: name "a", 1 dim of 3, type F32, offset 0; then data at the next 32-byte boundary.
	p += 4 + 8 + 5
	if string(b[p+8:p+9]) != "a" || binary.LittleEndian.Uint32(b[p+9:]) != 1 || binary.LittleEndian.Uint64(b[p+13:]) != 3 {
		t.Fatalf("tensor info malformed at %d: % x", p, b[p:p+33])
	}
	end := p + 9 + 4 + 8 + 4 + 8
	data := (end + 31) / 32 * 32
	if len(b) != data+12 {
		t.Fatalf("file is %d bytes, want %d (data at %d)", len(b), data+12, data)
	}
	if v := math.Float32frombits(binary.LittleEndian.Uint32(b[data+8:])); v != 3 {
		t.Fatalf("third value = %v, want 3", v)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	kv := []KV{
		{"u8", uint8(7)}, {"i8", int8(-7)}, {"u16", uint16(65535)}, {"i16", int16(-300)},
		{"u32", uint32(1 << 31)}, {"i32", int32(-1)}, {"f32", float32(1e-5)}, {"t", true}, {"f", false},
		{"s", "héllo ▁ world"}, {"empty", ""}, {"u64", uint64(1 << 40)}, {"i64", int64(-1 << 40)},
		{"f64", math.Pi}, {"strs", []string{"a", "", "<0x0A>"}}, {"f32s", []float32{0.5, -2}},
		{"i32s", []int32{1, 6, 3}}, {"u32s", []uint32{}},
	}
	got, _, err := Read(bytes.NewReader(mustWrite(t, &File{KV: kv})))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.KV, kv) {
		t.Fatalf("metadata round trip:\n got %#v\nwant %#v", got.KV, kv)
	}
}

func TestTensorLayout(t *testing.T) {
	f := &File{
		Alignment: 64,
		Tensors: []Tensor{
			{Name: "odd", Dims: []uint64{3}, Type: F16, Data: []float32{1, -2, 0.5}},
			{Name: "m", Dims: []uint64{2, 3}, Type: F32, Data: []float32{1, 2, 3, 4, 5, 6}},
			{Name: "h", Dims: []uint64{4, 1, 2}, Type: F16, Data: []float32{0, 1, 2, 3, 4, 5, 6, 65504}},
		},
	}
	b := mustWrite(t, f)
	got, lay, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if lay.DataStart%64 != 0 {
		t.Errorf("data section at %d, not 64-aligned", lay.DataStart)
	}
	if want := []uint64{0, 64, 128}; !reflect.DeepEqual(lay.Offsets, want) {
		t.Errorf("offsets = %v, want %v (each tensor padded to the alignment)", lay.Offsets, want)
	}
	if a, ok := got.Get("general.alignment"); !ok || a != uint32(64) {
		t.Errorf("general.alignment = %v, %v; a non-default alignment must be written", a, ok)
	}
	for i := range f.Tensors {
		w, g := f.Tensors[i], got.Tensors[i]
		if g.Name != w.Name || g.Type != w.Type || !reflect.DeepEqual(g.Dims, w.Dims) || !reflect.DeepEqual(g.Data, w.Data) {
			t.Errorf("tensor %d: got %+v, want %+v", i, g, w)
		}
	}
	if uint64(len(b)) != lay.DataStart+128+16 {
		t.Errorf("file length %d, want %d (no trailing padding after the last tensor)", len(b), lay.DataStart+128+16)
	}
}

func TestWriteRejects(t *testing.T) {
	cases := map[string]*File{
		"dup key":       {KV: []KV{{"a", uint32(1)}, {"a", uint32(2)}}},
		"bad value":     {KV: []KV{{"a", []bool{true}}}},
		"short data":    {Tensors: []Tensor{{Name: "t", Dims: []uint64{4}, Type: F32, Data: []float32{1}}}},
		"no dims":       {Tensors: []Tensor{{Name: "t", Type: F32}}},
		"dup tensor":    {Tensors: []Tensor{{Name: "t", Dims: []uint64{1}, Type: F32, Data: []float32{1}}, {Name: "t", Dims: []uint64{1}, Type: F32, Data: []float32{1}}}},
		"quantised":     {Tensors: []Tensor{{Name: "t", Dims: []uint64{1}, Type: 2, Data: []float32{1}}}},
		"bad alignment": {Alignment: 48},
	}
	for name, f := range cases {
		var buf bytes.Buffer
		if err := Write(&buf, f); err == nil {
			t.Errorf("%s: Write accepted it", name)
		} else if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", name, buf.Len())
		}
	}
}

func TestReadRejects(t *testing.T) {
	good := mustWrite(t, &File{KV: []KV{{"k", "v"}}, Tensors: []Tensor{{Name: "t", Dims: []uint64{8}, Type: F32, Data: make([]float32, 8)}}})
	huge := append([]byte(nil), good[:16]...)
	huge = binary.LittleEndian.AppendUint64(huge, 1<<40)
	cases := map[string][]byte{
		"empty":          nil,
		"magic":          append([]byte("GGUG"), good[4:]...),
		"version 2":      append(append([]byte("GGUF"), 2, 0, 0, 0), good[8:]...),
		"truncated kv":   good[:30],
		"truncated data": good[:len(good)-4],
		"huge count":     huge,
	}
	for name, b := range cases {
		if _, _, err := Read(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: Read accepted it", name)
		}
	}
}

func TestF16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800},
		{65504, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{6.103515625e-05, 0x0400},     // smallest normal
		{5.960464477539063e-08, 0x01}, // smallest subnormal
		{2.9802322387695312e-08, 0},   // half of it: ties to even (0)
		{1e-10, 0},
		{1.0009765625, 0x3c01},  // exactly representable
		{1.00048828125, 0x3c00}, // halfway between 0x3c00 and 0x3c01: ties to even
		{1.00146484375, 0x3c02}, // halfway between 0x3c01 and 0x3c02: ties to even
		{-8, 0xc800},
	}
	for _, c := range cases {
		if got := ToF16(c.in); got != c.want {
			t.Errorf("ToF16(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	if h := ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN became %#04x", h)
	}
	// Every finite half survives the round trip through float32.
	for h := 0; h < 1<<16; h++ {
		if h&0x7c00 == 0x7c00 {
			continue
		}
		if got := ToF16(FromF16(uint16(h))); got != uint16(h) {
			t.Fatalf("round trip %#04x -> %g -> %#04x", h, FromF16(uint16(h)), got)
		}
	}
}

func TestBuildTiny(t *testing.T) {
	f, err := Build(Tiny)
	if err != nil {
		t.Fatal(err)
	}
	b := mustWrite(t, f)
	if len(b) < 200_000 || len(b) > 600_000 {
		t.Errorf("tiny model is %d bytes; expected ≈300 KB", len(b))
	}
	got, _, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	str := func(k string) string { v, _ := got.Get(k); s, _ := v.(string); return s }
	u32 := func(k string) uint32 { v, _ := got.Get(k); u, _ := v.(uint32); return u }
	if str("general.architecture") != "llama" || u32("general.file_type") != 1 || u32("llama.block_count") != 2 ||
		u32("llama.embedding_length") != 64 || u32("llama.attention.head_count_kv") != 2 || u32("llama.rope.dimension_count") != 16 {
		t.Errorf("llama metadata wrong: %v", got.KV[:13])
	}
	if !strings.Contains(str("tokenizer.chat_template"), "<|im_start|>assistant") {
		t.Error("chat template is not chatml")
	}
	v, _ := got.Get("tokenizer.ggml.tokens")
	tokens := v.([]string)
	ty, _ := got.Get("tokenizer.ggml.token_type")
	types := ty.([]int32)
	if u32("llama.vocab_size") != uint32(len(tokens)) || len(types) != len(tokens) {
		t.Fatalf("vocab_size %d, %d tokens, %d types", u32("llama.vocab_size"), len(tokens), len(types))
	}
	if tokens[u32("tokenizer.ggml.eos_token_id")] != "<|im_end|>" || tokens[5+0x0A] != "<0x0A>" {
		t.Errorf("eos %q, newline byte token %q", tokens[u32("tokenizer.ggml.eos_token_id")], tokens[5+0x0A])
	}
	seen := map[string]bool{}
	for i, tok := range tokens {
		if seen[tok] {
			t.Errorf("duplicate token %q", tok)
		}
		seen[tok] = true
		if types[i] == TokenNormal && strings.ContainsAny(tok, "<|>") {
			t.Errorf("printable token %q could start a stop string", tok)
		}
	}
	// Every word is reachable by bigram merges: each of its prefixes is a token.
	for _, w := range words[:Tiny.Words] {
		for i := 2; i <= len(w); i++ {
			if !seen[spaceMark+w[:i]] {
				t.Errorf("prefix %q of %q missing", w[:i], w)
			}
		}
	}
	params := 0
	for _, tn := range got.Tensors {
		params += int(tn.Elements())
	}
	if params != Tiny.Params(len(tokens)) {
		t.Errorf("tensors hold %d weights, Params says %d", params, Tiny.Params(len(tokens)))
	}
	if len(got.Tensors) != 3+9*Tiny.Layers {
		t.Errorf("%d tensors, want %d", len(got.Tensors), 3+9*Tiny.Layers)
	}
}

// TestSuppression checks the property the engine tests rely on: with the final norm, every special
// and byte token's logit is far below every printable token's for any hidden state whose channel 0
// carries the constant (nothing in the layers writes to it).
func TestSuppression(t *testing.T) {
	f, err := Build(Tiny)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blk.0.attn_output.weight", "blk.1.ffn_down.weight"} {
		w, _ := f.Tensor(name)
		for i := 0; i < int(w.Dims[0]); i++ {
			if w.Data[i] != 0 {
				t.Fatalf("%s writes to channel 0 (input %d: %g)", name, i, w.Data[i])
			}
		}
	}
	emb, _ := f.Tensor("token_embd.weight")
	out, _ := f.Tensor("output.weight")
	vocab := NewVocab(Tiny.Words)
	e := Tiny.Embd
	// A worst case hidden state: the constant channel plus the largest embedding row of another token.
	hidden := make([]float64, e)
	hidden[0] = constChannel
	for c := 1; c < e; c++ {
		hidden[c] = float64(emb.Data[7*e+c]) * 3
	}
	var ss float64
	for _, x := range hidden {
		ss += x * x
	}
	rms := math.Sqrt(ss/float64(e) + 1e-5)
	minNormal, maxOther := math.Inf(1), math.Inf(-1)
	for tok := range vocab.Tokens {
		var logit float64
		for c := 0; c < e; c++ {
			logit += float64(out.Data[tok*e+c]) * hidden[c] / rms
		}
		if vocab.Types[tok] == TokenNormal {
			minNormal = min(minNormal, logit)
		} else {
			maxOther = max(maxOther, logit)
		}
	}
	if maxOther > minNormal-10 {
		t.Errorf("special/byte logits reach %.1f, printable ones go down to %.1f: EOS could be sampled", maxOther, minNormal)
	}
}

func TestShapeValidate(t *testing.T) {
	bad := []func(*Shape){
		func(s *Shape) { s.Heads = 3 },
		func(s *Shape) { s.KVHeads = 3 },
		func(s *Shape) { s.Embd = 60 },
		func(s *Shape) { s.Layers = 0 },
		func(s *Shape) { s.Words = 1000 },
		func(s *Shape) { s.Embd, s.Heads = 24, 8 }, // head size 3: odd
	}
	for i, mutate := range bad {
		s := Tiny
		mutate(&s)
		if _, err := Build(s); err == nil {
			t.Errorf("case %d: %+v accepted", i, s)
		}
	}
}

func TestBuildDeterministic(t *testing.T) {
	a, _ := Build(Tiny)
	b, _ := Build(Tiny)
	s := Tiny
	s.Seed = 2
	c, _ := Build(s)
	ab, bb, cb := mustWrite(t, a), mustWrite(t, b), mustWrite(t, c)
	if !bytes.Equal(ab, bb) {
		t.Error("same shape and seed gave different files")
	}
	if bytes.Equal(ab, cb) {
		t.Error("a different seed gave the same file")
	}
}

func BenchmarkBuildWriteTiny(b *testing.B) {
	for b.Loop() {
		f, _ := Build(Tiny)
		var buf bytes.Buffer
		if err := Write(&buf, f); err != nil {
			b.Fatal(err)
		}
	}
}
