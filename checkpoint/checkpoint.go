// Package checkpoint writes a Go value's whole state — every field,
// unexported ones included, through pointers, maps, slices and interfaces
// — to bytes and reads it back as a new, independent value. The replay
// uses it to keep the monitor core's state every so many records in a
// temporary file, so that a seek starts from the nearest checkpoint
// instead of the recording's start, and the core needs no code of its own
// to be saved.
//
// The bytes are for the process that wrote them: types are numbered in a
// Codec's own table, and what has no state to copy (functions, channels,
// *time.Location) is kept by reference in it. Pointers and maps shared
// within the value stay shared in the copy; two slices sharing a backing
// array become two arrays.
package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"
)

// Codec encodes and decodes values of any type. It is safe for
// concurrent use; its tables grow with the types and references seen.
type Codec struct {
	mu    sync.Mutex
	types []reflect.Type
	tnum  map[reflect.Type]int
	refs  []reflect.Value
	rnum  map[any]int
}

// New returns an empty Codec.
func New() *Codec { return &Codec{tnum: map[reflect.Type]int{}, rnum: map[any]int{}} }

// Portable reports whether nothing c encoded needed its tables (a type
// behind an interface, a function, a channel, a location other than
// UTC's): such bytes decode with a New Codec in another process running
// the same build, so they may be kept in a file (a recording's
// checkpoints, issue 33).
func (c *Codec) Portable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.types) == 0 && len(c.refs) == 0
}

// Encode appends v's state (v a non-nil pointer) to dst.
func (c *Codec) Encode(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return dst, errors.New("checkpoint: Encode wants a non-nil pointer")
	}
	e := &encoder{c: c, buf: dst, ptrs: map[ptrKey]int{}}
	pp := reflect.New(rv.Type())
	pp.Elem().Set(rv)
	encPlanOf(rv.Type())(e, pp.UnsafePointer())
	return e.buf, nil
}

// Decode reads what Encode wrote into a new value of T (a pointer type).
func Decode[T any](c *Codec, b []byte) (out T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("checkpoint: %v", p)
		}
	}()
	d := &decoder{c: c, buf: b}
	t := reflect.TypeFor[T]()
	v := reflect.New(t)
	decPlanOf(t)(d, v.UnsafePointer())
	if d.err != nil {
		return out, d.err
	}
	return v.Elem().Interface().(T), nil
}

type ptrKey struct {
	p unsafe.Pointer
	t reflect.Type
}

type encoder struct {
	c    *Codec
	buf  []byte
	ptrs map[ptrKey]int // pointers and maps already written, by number
}

func (e *encoder) uint(u uint64) { e.buf = binary.AppendUvarint(e.buf, u) }
func (e *encoder) int(i int64)   { e.buf = binary.AppendVarint(e.buf, i) }
func (e *encoder) f64(f float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(f))
}

func (c *Codec) typeNum(t reflect.Type) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.tnum[t]
	if !ok {
		n = len(c.types)
		c.types = append(c.types, t)
		c.tnum[t] = n
	}
	return n
}

func (c *Codec) typeOf(n int) reflect.Type {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.types[n]
}

// ref keeps v (a function, channel, location) by reference.
func (c *Codec) ref(v reflect.Value) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var key any = ptrKey{v.UnsafePointer(), v.Type()}
	if v.Kind() == reflect.Func { // a func's pointer is its code, not its closure
		key = v.Interface()
		if !reflect.TypeOf(key).Comparable() {
			key = nil
		}
	}
	if key != nil {
		if n, ok := c.rnum[key]; ok {
			return n
		}
	}
	n := len(c.refs)
	c.refs = append(c.refs, v)
	if key != nil {
		c.rnum[key] = n
	}
	return n
}

func (c *Codec) refOf(n int) reflect.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refs[n]
}

// byRef says values of t are kept by reference.
func byRef(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Pointer:
		return t.Elem().PkgPath() == "time" && t.Elem().Name() == "Location"
	}
	return false
}

// seenAt writes a reference to a pointer or map (at p, of type t)
// written before (true), or numbers it as new (false: its contents
// follow). 0 is nil, 1 new, 2+n the n-th seen.
func (e *encoder) seenAt(p unsafe.Pointer, t reflect.Type) bool {
	k := ptrKey{p, t}
	if n, ok := e.ptrs[k]; ok {
		e.uint(uint64(n) + 2)
		return true
	}
	e.ptrs[k] = len(e.ptrs)
	e.uint(1)
	return false
}

type decoder struct {
	c    *Codec
	buf  []byte
	ptrs []reflect.Value
	err  error
}

func (d *decoder) fail(s string) {
	if d.err == nil {
		d.err = errors.New("checkpoint: " + s)
	}
	panic(d.err)
}

func (d *decoder) uint() uint64 {
	u, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("truncated")
	}
	d.buf = d.buf[n:]
	return u
}

func (d *decoder) int() int64 {
	i, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("truncated")
	}
	d.buf = d.buf[n:]
	return i
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.buf)) {
		d.fail("truncated")
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) f64() float64 { return math.Float64frombits(binary.LittleEndian.Uint64(d.bytes(8))) }

func (d *decoder) ptr(n uint64, t reflect.Type) reflect.Value {
	if n >= uint64(len(d.ptrs)) || d.ptrs[n].Type() != t {
		d.fail("a reference to nothing written")
	}
	return d.ptrs[n]
}
