package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Limits that keep a corrupt file from making the reader allocate gigabytes.
const (
	maxString   = 1 << 20
	maxArray    = 1 << 22
	maxCount    = 1 << 16
	maxDataSize = 1 << 30
)

// Layout says where things are in a file that was read: the byte offset of the data section and
// each tensor's offset relative to it, in the order of File.Tensors.
type Layout struct {
	DataStart uint64
	Offsets   []uint64
}

// Read decodes a GGUF v3 file with F32/F16 tensors. Array metadata of other element types than the
// writer's are rejected with an error naming the key.
func Read(r io.Reader) (*File, Layout, error) {
	d := &dec{r: bufio.NewReaderSize(r, 1<<16)}
	var lay Layout
	magic := d.raw(4)
	if d.err == nil && string(magic) != Magic {
		return nil, lay, fmt.Errorf("gguf: bad magic %q", magic)
	}
	if v := d.u32(); d.err == nil && v != Version {
		return nil, lay, fmt.Errorf("gguf: version %d, want %d", v, Version)
	}
	nt, nkv := d.u64(), d.u64()
	if d.err != nil {
		return nil, lay, fmt.Errorf("gguf: header: %w", d.err)
	}
	if nt > maxCount || nkv > maxCount {
		return nil, lay, fmt.Errorf("gguf: implausible counts: %d tensors, %d metadata keys", nt, nkv)
	}
	f := &File{}
	for i := uint64(0); i < nkv; i++ {
		k := d.str()
		v := d.value()
		if d.err != nil {
			return nil, lay, fmt.Errorf("gguf: metadata %d (%q): %w", i, k, d.err)
		}
		f.KV = append(f.KV, KV{k, v})
		if k == "general.alignment" {
			a, ok := v.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, lay, fmt.Errorf("gguf: bad general.alignment %v", v)
			}
			f.Alignment = int(a)
		}
	}
	for i := uint64(0); i < nt; i++ {
		var t Tensor
		t.Name = d.str()
		nd := d.u32()
		if d.err == nil && (nd == 0 || nd > 4) {
			return nil, lay, fmt.Errorf("gguf: tensor %q has %d dims", t.Name, nd)
		}
		for j := uint32(0); j < nd && d.err == nil; j++ {
			t.Dims = append(t.Dims, d.u64())
		}
		t.Type = TensorType(d.u32())
		lay.Offsets = append(lay.Offsets, d.u64())
		if d.err != nil {
			return nil, lay, fmt.Errorf("gguf: tensor info %d: %w", i, d.err)
		}
		if t.Type.Size() == 0 {
			return nil, lay, fmt.Errorf("gguf: tensor %q: unsupported type %v", t.Name, t.Type)
		}
		f.Tensors = append(f.Tensors, t)
	}
	lay.DataStart = pad(d.n, f.alignment())
	d.raw(int(lay.DataStart - d.n))
	data, err := io.ReadAll(io.LimitReader(d.r, maxDataSize+1))
	if d.err != nil || err != nil {
		return nil, lay, fmt.Errorf("gguf: data section: %w", errors.Join(d.err, err))
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		off := lay.Offsets[i]
		if off%uint64(f.alignment()) != 0 {
			return nil, lay, fmt.Errorf("gguf: tensor %q at unaligned offset %d", t.Name, off)
		}
		n := t.Elements()
		size := n * uint64(t.Type.Size())
		if n > maxDataSize || off > uint64(len(data)) || size > uint64(len(data))-off {
			return nil, lay, fmt.Errorf("gguf: tensor %q (%d bytes at %d) runs past the end of the file (%d data bytes)", t.Name, size, off, len(data))
		}
		b := data[off : off+size]
		t.Data = make([]float32, n)
		for j := range t.Data {
			if t.Type == F16 {
				t.Data[j] = FromF16(binary.LittleEndian.Uint16(b[2*j:]))
			} else {
				t.Data[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
			}
		}
	}
	return f, lay, nil
}

// dec reads little-endian values, keeping the first error and the byte count.
type dec struct {
	r   *bufio.Reader
	n   uint64
	err error
}

func (d *dec) raw(n int) []byte {
	if d.err != nil {
		return nil
	}
	b := make([]byte, n)
	k, err := io.ReadFull(d.r, b)
	d.n += uint64(k)
	if err != nil {
		d.err = err
		return nil
	}
	return b
}

func (d *dec) u8() uint8 {
	if b := d.raw(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *dec) u16() uint16 {
	if b := d.raw(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *dec) u32() uint32 {
	if b := d.raw(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *dec) u64() uint64 {
	if b := d.raw(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *dec) str() string {
	n := d.u64()
	if d.err == nil && n > maxString {
		d.err = fmt.Errorf("string of %d bytes", n)
	}
	return string(d.raw(int(n)))
}

func (d *dec) value() any {
	t := ValueType(d.u32())
	if d.err != nil {
		return nil
	}
	if t != TypeArray {
		return d.scalar(t)
	}
	et := ValueType(d.u32())
	n := d.u64()
	if d.err != nil {
		return nil
	}
	if n > maxArray {
		d.err = fmt.Errorf("array of %d elements", n)
		return nil
	}
	switch et {
	case TypeString:
		out := make([]string, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			out = append(out, d.str())
		}
		return out
	case TypeFloat32:
		out := make([]float32, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			out = append(out, math.Float32frombits(d.u32()))
		}
		return out
	case TypeInt32:
		out := make([]int32, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			out = append(out, int32(d.u32()))
		}
		return out
	case TypeUint32:
		out := make([]uint32, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			out = append(out, d.u32())
		}
		return out
	}
	d.err = fmt.Errorf("unsupported array element type %d", et)
	return nil
}

func (d *dec) scalar(t ValueType) any {
	switch t {
	case TypeUint8:
		return d.u8()
	case TypeInt8:
		return int8(d.u8())
	case TypeUint16:
		return d.u16()
	case TypeInt16:
		return int16(d.u16())
	case TypeUint32:
		return d.u32()
	case TypeInt32:
		return int32(d.u32())
	case TypeFloat32:
		return math.Float32frombits(d.u32())
	case TypeBool:
		b := d.u8()
		if b > 1 {
			d.err = fmt.Errorf("bool byte %d", b)
		}
		return b == 1
	case TypeString:
		return d.str()
	case TypeUint64:
		return d.u64()
	case TypeInt64:
		return int64(d.u64())
	case TypeFloat64:
		return math.Float64frombits(d.u64())
	}
	d.err = fmt.Errorf("unknown value type %d", t)
	return nil
}
