package checkpoint

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// A decoding plan: for each type, once, a function that reads a value of
// it from the decoder into memory at p, with the fields' offsets and the
// element plans worked out beforehand. Decoding through reflect.Value one
// field at a time (making each unexported field settable, asking its
// kind) was most of a replay's seek; a plan reads the same bytes four
// times faster (a day's core: 24 ms → 6 ms). Maps and interfaces still
// go through reflect, their keys and values through their plans.

// decFn reads one value into the memory at p, of the plan's type, zeroed.
type decFn func(d *decoder, p unsafe.Pointer)

// plans holds each type's plan (reflect.Type → decFn).
var plans sync.Map

func planOf(t reflect.Type) decFn {
	if f, ok := plans.Load(t); ok {
		return f.(decFn)
	}
	b := planner{m: map[reflect.Type]*decFn{}}
	f := b.plan(t)
	for t, f := range b.m {
		plans.LoadOrStore(t, *f)
	}
	return *f
}

// planner builds the plans of a type and the types inside it; a type
// that holds itself (through a pointer, slice or map) finds its own plan
// through the pointer made before it was built.
type planner struct{ m map[reflect.Type]*decFn }

func (b *planner) plan(t reflect.Type) *decFn {
	if f, ok := b.m[t]; ok {
		return f
	}
	if f, ok := plans.Load(t); ok {
		fn := f.(decFn)
		return &fn
	}
	f := new(decFn)
	b.m[t] = f
	*f = b.build(t)
	return f
}

func (b *planner) build(t reflect.Type) decFn {
	if byRef(t) {
		return func(d *decoder, p unsafe.Pointer) {
			if n := d.uint(); n > 0 {
				reflect.NewAt(t, p).Elem().Set(d.c.refOf(int(n - 1)))
			}
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(d *decoder, p unsafe.Pointer) { *(*bool)(p) = d.uint() == 1 }
	case reflect.Int:
		return func(d *decoder, p unsafe.Pointer) { *(*int)(p) = int(d.int()) }
	case reflect.Int8:
		return func(d *decoder, p unsafe.Pointer) { *(*int8)(p) = int8(d.int()) }
	case reflect.Int16:
		return func(d *decoder, p unsafe.Pointer) { *(*int16)(p) = int16(d.int()) }
	case reflect.Int32:
		return func(d *decoder, p unsafe.Pointer) { *(*int32)(p) = int32(d.int()) }
	case reflect.Int64:
		return func(d *decoder, p unsafe.Pointer) { *(*int64)(p) = d.int() }
	case reflect.Uint:
		return func(d *decoder, p unsafe.Pointer) { *(*uint)(p) = uint(d.uint()) }
	case reflect.Uint8:
		return func(d *decoder, p unsafe.Pointer) { *(*uint8)(p) = uint8(d.uint()) }
	case reflect.Uint16:
		return func(d *decoder, p unsafe.Pointer) { *(*uint16)(p) = uint16(d.uint()) }
	case reflect.Uint32:
		return func(d *decoder, p unsafe.Pointer) { *(*uint32)(p) = uint32(d.uint()) }
	case reflect.Uint64:
		return func(d *decoder, p unsafe.Pointer) { *(*uint64)(p) = d.uint() }
	case reflect.Uintptr:
		return func(d *decoder, p unsafe.Pointer) { *(*uintptr)(p) = uintptr(d.uint()) }
	case reflect.Float32:
		return func(d *decoder, p unsafe.Pointer) { *(*float32)(p) = float32(d.f64()) }
	case reflect.Float64:
		return func(d *decoder, p unsafe.Pointer) { *(*float64)(p) = d.f64() }
	case reflect.Complex64:
		return func(d *decoder, p unsafe.Pointer) {
			re := d.f64()
			*(*complex64)(p) = complex64(complex(re, d.f64()))
		}
	case reflect.Complex128:
		return func(d *decoder, p unsafe.Pointer) {
			re := d.f64()
			*(*complex128)(p) = complex(re, d.f64())
		}
	case reflect.String:
		return func(d *decoder, p unsafe.Pointer) { *(*string)(p) = string(d.bytes(d.uint())) }
	case reflect.Slice:
		return b.slice(t)
	case reflect.Array:
		elem, size, n := b.plan(t.Elem()), t.Elem().Size(), t.Len()
		return func(d *decoder, p unsafe.Pointer) {
			for i := range n {
				(*elem)(d, unsafe.Add(p, uintptr(i)*size))
			}
		}
	case reflect.Struct:
		type field struct {
			off uintptr
			fn  *decFn
		}
		fields := make([]field, t.NumField())
		for i := range fields {
			f := t.Field(i)
			fields[i] = field{f.Offset, b.plan(f.Type)}
		}
		return func(d *decoder, p unsafe.Pointer) {
			for _, f := range fields {
				(*f.fn)(d, unsafe.Add(p, f.off))
			}
		}
	case reflect.Pointer:
		et := t.Elem()
		elem := b.plan(et)
		return func(d *decoder, p unsafe.Pointer) {
			switch n := d.uint(); n {
			case 0:
			case 1:
				np := reflect.New(et)
				d.ptrs = append(d.ptrs, np)
				(*elem)(d, np.UnsafePointer())
				*(*unsafe.Pointer)(p) = np.UnsafePointer()
			default:
				*(*unsafe.Pointer)(p) = d.ptr(n-2, t).UnsafePointer()
			}
		}
	case reflect.Map:
		return b.mapOf(t)
	case reflect.Interface:
		return func(d *decoder, p unsafe.Pointer) {
			n := d.uint()
			if n == 0 {
				return
			}
			et := d.c.typeOf(int(n - 1))
			x := reflect.New(et)
			planOf(et)(d, x.UnsafePointer())
			reflect.NewAt(t, p).Elem().Set(x.Elem())
		}
	}
	return func(d *decoder, p unsafe.Pointer) { d.fail("cannot decode a " + t.String()) }
}

func (b *planner) slice(t reflect.Type) decFn {
	et := t.Elem()
	if et.Kind() == reflect.Uint8 {
		return func(d *decoder, p unsafe.Pointer) {
			n := d.uint()
			if n == 0 {
				return
			}
			bs := d.bytes(n - 1)
			s := reflect.MakeSlice(t, len(bs), len(bs))
			copy(unsafe.Slice((*byte)(s.UnsafePointer()), len(bs)), bs)
			reflect.NewAt(t, p).Elem().Set(s)
		}
	}
	elem, size := b.plan(et), et.Size()
	return func(d *decoder, p unsafe.Pointer) {
		n := d.uint()
		if n == 0 {
			return
		}
		n--
		if n > uint64(len(d.buf)) { // every element takes a byte at least
			d.fail("truncated")
		}
		s := reflect.MakeSlice(t, int(n), int(n))
		base := s.UnsafePointer()
		for i := range uintptr(n) {
			(*elem)(d, unsafe.Add(base, i*size))
		}
		reflect.NewAt(t, p).Elem().Set(s)
	}
}

func (b *planner) mapOf(t reflect.Type) decFn {
	kt, vt := t.Key(), t.Elem()
	key, val := b.plan(kt), b.plan(vt)
	return func(d *decoder, p unsafe.Pointer) {
		switch n := d.uint(); n {
		case 0:
		case 1:
			size := d.uint()
			m := reflect.MakeMapWithSize(t, int(min(size, uint64(len(d.buf)))))
			d.ptrs = append(d.ptrs, m)
			kp, vp := reflect.New(kt), reflect.New(vt)
			k, v := kp.Elem(), vp.Elem()
			for range size {
				k.SetZero()
				v.SetZero()
				(*key)(d, kp.UnsafePointer())
				(*val)(d, vp.UnsafePointer())
				m.SetMapIndex(k, v)
			}
			reflect.NewAt(t, p).Elem().Set(m)
		default:
			reflect.NewAt(t, p).Elem().Set(d.ptr(n-2, t))
		}
	}
}

// An encoding plan: the same for writing. The bytes are those the
// reflective walk wrote before the plans (a field after another, varints,
// floats as their 8 bytes, a pointer or map numbered where first met).

// encFn writes the value of the plan's type at p.
type encFn func(e *encoder, p unsafe.Pointer)

var encPlans sync.Map

func encPlanOf(t reflect.Type) encFn {
	if f, ok := encPlans.Load(t); ok {
		return f.(encFn)
	}
	b := encPlanner{m: map[reflect.Type]*encFn{}}
	f := b.plan(t)
	for t, f := range b.m {
		encPlans.LoadOrStore(t, *f)
	}
	return *f
}

type encPlanner struct{ m map[reflect.Type]*encFn }

func (b *encPlanner) plan(t reflect.Type) *encFn {
	if f, ok := b.m[t]; ok {
		return f
	}
	if f, ok := encPlans.Load(t); ok {
		fn := f.(encFn)
		return &fn
	}
	f := new(encFn)
	b.m[t] = f
	*f = b.build(t)
	return f
}

// sliceHeader is a slice's header, as the runtime lays it out.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (b *encPlanner) build(t reflect.Type) encFn {
	if byRef(t) {
		return func(e *encoder, p unsafe.Pointer) {
			v := reflect.NewAt(t, p).Elem()
			if v.IsNil() {
				e.uint(0)
				return
			}
			e.uint(uint64(e.c.ref(v)) + 1)
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encoder, p unsafe.Pointer) {
			if *(*bool)(p) {
				e.uint(1)
			} else {
				e.uint(0)
			}
		}
	case reflect.Int:
		return func(e *encoder, p unsafe.Pointer) { e.int(int64(*(*int)(p))) }
	case reflect.Int8:
		return func(e *encoder, p unsafe.Pointer) { e.int(int64(*(*int8)(p))) }
	case reflect.Int16:
		return func(e *encoder, p unsafe.Pointer) { e.int(int64(*(*int16)(p))) }
	case reflect.Int32:
		return func(e *encoder, p unsafe.Pointer) { e.int(int64(*(*int32)(p))) }
	case reflect.Int64:
		return func(e *encoder, p unsafe.Pointer) { e.int(*(*int64)(p)) }
	case reflect.Uint:
		return func(e *encoder, p unsafe.Pointer) { e.uint(uint64(*(*uint)(p))) }
	case reflect.Uint8:
		return func(e *encoder, p unsafe.Pointer) { e.uint(uint64(*(*uint8)(p))) }
	case reflect.Uint16:
		return func(e *encoder, p unsafe.Pointer) { e.uint(uint64(*(*uint16)(p))) }
	case reflect.Uint32:
		return func(e *encoder, p unsafe.Pointer) { e.uint(uint64(*(*uint32)(p))) }
	case reflect.Uint64:
		return func(e *encoder, p unsafe.Pointer) { e.uint(*(*uint64)(p)) }
	case reflect.Uintptr:
		return func(e *encoder, p unsafe.Pointer) { e.uint(uint64(*(*uintptr)(p))) }
	case reflect.Float32:
		return func(e *encoder, p unsafe.Pointer) { e.f64(float64(*(*float32)(p))) }
	case reflect.Float64:
		return func(e *encoder, p unsafe.Pointer) { e.f64(*(*float64)(p)) }
	case reflect.Complex64:
		return func(e *encoder, p unsafe.Pointer) {
			c := *(*complex64)(p)
			e.f64(float64(real(c)))
			e.f64(float64(imag(c)))
		}
	case reflect.Complex128:
		return func(e *encoder, p unsafe.Pointer) {
			c := *(*complex128)(p)
			e.f64(real(c))
			e.f64(imag(c))
		}
	case reflect.String:
		return func(e *encoder, p unsafe.Pointer) {
			s := *(*string)(p)
			e.uint(uint64(len(s)))
			e.buf = append(e.buf, s...)
		}
	case reflect.Slice:
		et := t.Elem()
		if et.Kind() == reflect.Uint8 {
			return func(e *encoder, p unsafe.Pointer) {
				h := (*sliceHeader)(p)
				if h.data == nil {
					e.uint(0)
					return
				}
				e.uint(uint64(h.len) + 1)
				e.buf = append(e.buf, unsafe.Slice((*byte)(h.data), h.len)...)
			}
		}
		elem, size := b.plan(et), et.Size()
		return func(e *encoder, p unsafe.Pointer) {
			h := (*sliceHeader)(p)
			if h.data == nil {
				e.uint(0)
				return
			}
			e.uint(uint64(h.len) + 1)
			for i := range uintptr(h.len) {
				(*elem)(e, unsafe.Add(h.data, i*size))
			}
		}
	case reflect.Array:
		elem, size, n := b.plan(t.Elem()), t.Elem().Size(), t.Len()
		return func(e *encoder, p unsafe.Pointer) {
			for i := range n {
				(*elem)(e, unsafe.Add(p, uintptr(i)*size))
			}
		}
	case reflect.Struct:
		type field struct {
			off uintptr
			fn  *encFn
		}
		fields := make([]field, t.NumField())
		for i := range fields {
			f := t.Field(i)
			fields[i] = field{f.Offset, b.plan(f.Type)}
		}
		return func(e *encoder, p unsafe.Pointer) {
			for _, f := range fields {
				(*f.fn)(e, unsafe.Add(p, f.off))
			}
		}
	case reflect.Pointer:
		elem := b.plan(t.Elem())
		return func(e *encoder, p unsafe.Pointer) {
			ptr := *(*unsafe.Pointer)(p)
			if ptr == nil {
				e.uint(0)
				return
			}
			if e.seenAt(ptr, t) {
				return
			}
			(*elem)(e, ptr)
		}
	case reflect.Map:
		kt, vt := t.Key(), t.Elem()
		key, val := b.plan(kt), b.plan(vt)
		return func(e *encoder, p unsafe.Pointer) {
			v := reflect.NewAt(t, p).Elem()
			if v.IsNil() {
				e.uint(0)
				return
			}
			if e.seenAt(v.UnsafePointer(), t) {
				return
			}
			e.uint(uint64(v.Len()))
			it := v.MapRange()
			kp, vp := reflect.New(kt), reflect.New(vt)
			k, x := kp.Elem(), vp.Elem()
			for it.Next() {
				k.SetIterKey(it)
				x.SetIterValue(it)
				(*key)(e, kp.UnsafePointer())
				(*val)(e, vp.UnsafePointer())
			}
		}
	case reflect.Interface:
		return func(e *encoder, p unsafe.Pointer) {
			v := reflect.NewAt(t, p).Elem()
			if v.IsNil() {
				e.uint(0)
				return
			}
			el := v.Elem()
			e.uint(uint64(e.c.typeNum(el.Type())) + 1)
			cp := reflect.New(el.Type())
			cp.Elem().Set(el)
			encPlanOf(el.Type())(e, cp.UnsafePointer())
		}
	}
	return func(e *encoder, p unsafe.Pointer) { panic(fmt.Sprintf("checkpoint: cannot encode a %s", t)) }
}
