package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Write encodes f as a GGUF v3 file. It validates names, dims and data lengths before writing a
// byte, so a bad File never produces a half-written model.
func Write(w io.Writer, f *File) error {
	align := f.alignment()
	if align&(align-1) != 0 {
		return fmt.Errorf("gguf: alignment %d is not a power of two", align)
	}
	kvs := f.KV
	if align != DefaultAlignment {
		if _, ok := f.Get("general.alignment"); !ok {
			kvs = append(append([]KV(nil), kvs...), KV{"general.alignment", uint32(align)})
		}
	}
	seen := map[string]bool{}
	for _, kv := range kvs {
		if kv.Key == "" || seen[kv.Key] {
			return fmt.Errorf("gguf: empty or duplicate metadata key %q", kv.Key)
		}
		seen[kv.Key] = true
		if _, _, err := typeOf(kv.Value); err != nil {
			return fmt.Errorf("%w (key %q)", err, kv.Key)
		}
	}
	offsets := make([]uint64, len(f.Tensors))
	var off uint64
	names := map[string]bool{}
	for i, t := range f.Tensors {
		if t.Name == "" || names[t.Name] {
			return fmt.Errorf("gguf: empty or duplicate tensor name %q", t.Name)
		}
		names[t.Name] = true
		if len(t.Dims) == 0 || len(t.Dims) > 4 {
			return fmt.Errorf("gguf: tensor %s has %d dims (want 1-4)", t.Name, len(t.Dims))
		}
		if t.Type.Size() == 0 {
			return fmt.Errorf("gguf: tensor %s: unsupported type %v", t.Name, t.Type)
		}
		if uint64(len(t.Data)) != t.Elements() {
			return fmt.Errorf("gguf: tensor %s has %d values for dims %v", t.Name, len(t.Data), t.Dims)
		}
		offsets[i] = off
		off = pad(off+t.Elements()*uint64(t.Type.Size()), align)
	}

	bw := bufio.NewWriterSize(w, 1<<16)
	e := &enc{w: bw}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(f.Tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.value(kv.Value)
	}
	for i, t := range f.Tensors {
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offsets[i])
	}
	e.zeros(pad(e.n, align) - e.n)
	start := e.n
	for i, t := range f.Tensors {
		e.zeros(start + offsets[i] - e.n)
		for _, v := range t.Data {
			if t.Type == F16 {
				e.u16(ToF16(v))
			} else {
				e.u32(math.Float32bits(v))
			}
		}
	}
	if e.err != nil {
		return fmt.Errorf("gguf: write: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gguf: write: %w", err)
	}
	return nil
}

func pad(n uint64, align int) uint64 {
	a := uint64(align)
	return (n + a - 1) / a * a
}

// enc writes little-endian values and keeps the first error and the byte count.
type enc struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *enc) raw(b []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(b)
	e.n += uint64(k)
}

func (e *enc) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:2], v); e.raw(e.buf[:2]) }
func (e *enc) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:4], v); e.raw(e.buf[:4]) }
func (e *enc) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:8], v); e.raw(e.buf[:8]) }
func (e *enc) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

func (e *enc) zeros(n uint64) {
	var z [64]byte
	for n > 0 {
		k := min(n, uint64(len(z)))
		e.raw(z[:k])
		n -= k
	}
}

// value writes the type tag and the value; typeOf has already accepted v.
func (e *enc) value(v any) {
	t, elem, _ := typeOf(v)
	e.u32(uint32(t))
	if t == TypeArray {
		e.u32(uint32(elem))
	}
	switch x := v.(type) {
	case uint8:
		e.raw([]byte{x})
	case int8:
		e.raw([]byte{byte(x)})
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.raw([]byte{1})
		} else {
			e.raw([]byte{0})
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case []string:
		e.u64(uint64(len(x)))
		for _, s := range x {
			e.str(s)
		}
	case []float32:
		e.u64(uint64(len(x)))
		for _, f := range x {
			e.u32(math.Float32bits(f))
		}
	case []int32:
		e.u64(uint64(len(x)))
		for _, i := range x {
			e.u32(uint32(i))
		}
	case []uint32:
		e.u64(uint64(len(x)))
		for _, i := range x {
			e.u32(i)
		}
	}
}
