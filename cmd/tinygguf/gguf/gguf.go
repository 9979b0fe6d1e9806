// Package gguf writes and reads GGUF v3 files, the model format of llama.cpp and Ollama.
//
// It exists so the real-engine tests can serve a model without downloading weights: Build makes a
// tiny llama-architecture model with random weights that both engines load. The reader is the
// writer's test oracle and only supports what the writer produces plus the common scalar types.
//
// Layout (all little-endian): "GGUF", version u32, tensor count u64, metadata count u64, the
// metadata key/value pairs, the tensor infos (name, dims innermost first, type, offset relative to
// the data section), zero padding to the alignment, then the tensor data, each tensor aligned.
package gguf

import (
	"fmt"
	"math"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version this package writes.
const Version = 3

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// ValueType is the on-disk type tag of a metadata value.
type ValueType uint32

// The metadata value types of GGUF v3.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

// TensorType is the ggml element type of a tensor. Only the unquantised types are supported.
type TensorType uint32

// Tensor element types (ggml_type).
const (
	F32 TensorType = 0
	F16 TensorType = 1
)

// Size returns the bytes per element.
func (t TensorType) Size() int {
	switch t {
	case F32:
		return 4
	case F16:
		return 2
	}
	return 0
}

func (t TensorType) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// KV is one metadata pair. Value holds one of: uint8, int8, uint16, int16, uint32, int32, float32,
// bool, string, uint64, int64, float64, or a slice []string, []float32, []int32, []uint32.
type KV struct {
	Key   string
	Value any
}

// Tensor is one named tensor. Dims are innermost first (ggml's ne[0] is the row length). Data holds
// the values as float32; the writer converts them to Type.
type Tensor struct {
	Name string
	Dims []uint64
	Type TensorType
	Data []float32
}

// Elements returns the product of the dims.
func (t Tensor) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a whole GGUF file in memory.
type File struct {
	KV      []KV
	Tensors []Tensor
	// Alignment of tensor data; 0 means DefaultAlignment (written as general.alignment only when
	// it differs from the default).
	Alignment int
}

// Get returns the value of a metadata key.
func (f *File) Get(key string) (any, bool) {
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the named tensor.
func (f *File) Tensor(name string) (*Tensor, bool) {
	for i := range f.Tensors {
		if f.Tensors[i].Name == name {
			return &f.Tensors[i], true
		}
	}
	return nil, false
}

func (f *File) alignment() int {
	if f.Alignment > 0 {
		return f.Alignment
	}
	return DefaultAlignment
}

// typeOf maps a Go value to its GGUF type and, for arrays, the element type.
func typeOf(v any) (t, elem ValueType, err error) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, nil
	case int8:
		return TypeInt8, 0, nil
	case uint16:
		return TypeUint16, 0, nil
	case int16:
		return TypeInt16, 0, nil
	case uint32:
		return TypeUint32, 0, nil
	case int32:
		return TypeInt32, 0, nil
	case float32:
		return TypeFloat32, 0, nil
	case bool:
		return TypeBool, 0, nil
	case string:
		return TypeString, 0, nil
	case uint64:
		return TypeUint64, 0, nil
	case int64:
		return TypeInt64, 0, nil
	case float64:
		return TypeFloat64, 0, nil
	case []string:
		return TypeArray, TypeString, nil
	case []float32:
		return TypeArray, TypeFloat32, nil
	case []int32:
		return TypeArray, TypeInt32, nil
	case []uint32:
		return TypeArray, TypeUint32, nil
	}
	return 0, 0, fmt.Errorf("gguf: unsupported metadata value type %T", v)
}

// ToF16 converts a float32 to IEEE 754 half precision bits, rounding to nearest even; values out of
// range become ±Inf, NaN stays NaN.
func ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // overflow
		return sign | 0x7c00
	case exp-127 >= -14: // normal half
		e := uint32(exp - 127 + 15)
		m := mant >> 13
		rest := mant & 0x1fff
		h := e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is the correct rounding (up to Inf)
		}
		return sign | uint16(h)
	case exp-127 >= -25: // subnormal half
		m := mant | 0x800000 // implicit leading one
		shift := uint32(-14-(exp-127)) + 13
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign // underflow to ±0
}

// FromF16 converts half precision bits to float32 (exact).
func FromF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	// subnormal: mant * 2^-24
	v := float32(mant) * float32(1.0/(1<<24))
	if sign != 0 {
		return -v
	}
	return v
}
