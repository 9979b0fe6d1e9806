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
type decFn = func(d *decoder, p unsafe.Pointer)

// decPlans holds each type's decoding plan, encPlans its encoding plan.
var decPlans, encPlans planCache

// planCache keeps the plans of one direction, by type (reflect.Type → F).
type planCache struct{ m sync.Map }

// planOf is t's plan from cache, built (with the plans of the types
// inside it) by build the first time.
func planOf[F any](cache *planCache, t reflect.Type, build func(*planner[F], reflect.Type) F) F {
	if f, ok := cache.m.Load(t); ok {
		return f.(F)
	}
	b := planner[F]{cache: cache, build: build, m: map[reflect.Type]*F{}}
	f := b.plan(t)
	for t, f := range b.m {
		cache.m.LoadOrStore(t, *f)
	}
	return *f
}

// planner builds the plans of a type and the types inside it; a type
// that holds itself (through a pointer, slice or map) finds its own plan
// through the pointer made before it was built.
type planner[F any] struct {
	cache *planCache
	build func(*planner[F], reflect.Type) F
	m     map[reflect.Type]*F
}

func (b *planner[F]) plan(t reflect.Type) *F {
	if f, ok := b.m[t]; ok {
		return f
	}
	if f, ok := b.cache.m.Load(t); ok {
		fn := f.(F)
		return &fn
	}
	f := new(F)
	b.m[t] = f
	*f = b.build(b, t)
	return f
}

func decPlanOf(t reflect.Type) decFn { return planOf(&decPlans, t, decBuild) }

func encPlanOf(t reflect.Type) encFn { return planOf(&encPlans, t, encBuild) }

func decBuild(b *planner[decFn], t reflect.Type) decFn {
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
		return decInt[int]
	case reflect.Int8:
		return decInt[int8]
	case reflect.Int16:
		return decInt[int16]
	case reflect.Int32:
		return decInt[int32]
	case reflect.Int64:
		return decInt[int64]
	case reflect.Uint:
		return decUint[uint]
	case reflect.Uint8:
		return decUint[uint8]
	case reflect.Uint16:
		return decUint[uint16]
	case reflect.Uint32:
		return decUint[uint32]
	case reflect.Uint64:
		return decUint[uint64]
	case reflect.Uintptr:
		return decUint[uintptr]
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
		return decSlice(b, t)
	case reflect.Array:
		return arrayPlan(b, t)
	case reflect.Struct:
		return structPlan(b, t)
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
		return decMap(b, t)
	case reflect.Interface:
		return func(d *decoder, p unsafe.Pointer) {
			n := d.uint()
			if n == 0 {
				return
			}
			et := d.c.typeOf(int(n - 1))
			x := reflect.New(et)
			decPlanOf(et)(d, x.UnsafePointer())
			reflect.NewAt(t, p).Elem().Set(x.Elem())
		}
	}
	return func(d *decoder, p unsafe.Pointer) { d.fail("cannot decode a " + t.String()) }
}

func decSlice(b *planner[decFn], t reflect.Type) decFn {
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

func decMap(b *planner[decFn], t reflect.Type) decFn {
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
type encFn = func(e *encoder, p unsafe.Pointer)

// sliceHeader is a slice's header, as the runtime lays it out.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func encBuild(b *planner[encFn], t reflect.Type) encFn {
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
		return encInt[int]
	case reflect.Int8:
		return encInt[int8]
	case reflect.Int16:
		return encInt[int16]
	case reflect.Int32:
		return encInt[int32]
	case reflect.Int64:
		return encInt[int64]
	case reflect.Uint:
		return encUint[uint]
	case reflect.Uint8:
		return encUint[uint8]
	case reflect.Uint16:
		return encUint[uint16]
	case reflect.Uint32:
		return encUint[uint32]
	case reflect.Uint64:
		return encUint[uint64]
	case reflect.Uintptr:
		return encUint[uintptr]
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
		raw := et.Kind() == reflect.Uint8 // bytes as they are
		var elem *encFn
		if !raw {
			elem = b.plan(et)
		}
		size := et.Size()
		return func(e *encoder, p unsafe.Pointer) {
			h := (*sliceHeader)(p)
			if h.data == nil {
				e.uint(0)
				return
			}
			e.uint(uint64(h.len) + 1)
			if raw {
				e.buf = append(e.buf, unsafe.Slice((*byte)(h.data), h.len)...)
				return
			}
			for i := range uintptr(h.len) {
				(*elem)(e, unsafe.Add(h.data, i*size))
			}
		}
	case reflect.Array:
		return arrayPlan(b, t)
	case reflect.Struct:
		return structPlan(b, t)
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

// arrayPlan reads or writes an array element after element (S: the
// decoder or the encoder).
func arrayPlan[S any](b *planner[func(S, unsafe.Pointer)], t reflect.Type) func(S, unsafe.Pointer) {
	elem, size, n := b.plan(t.Elem()), t.Elem().Size(), t.Len()
	return func(s S, p unsafe.Pointer) {
		for i := range n {
			(*elem)(s, unsafe.Add(p, uintptr(i)*size))
		}
	}
}

// structPlan reads or writes a struct field after field, at their
// offsets.
func structPlan[S any](b *planner[func(S, unsafe.Pointer)], t reflect.Type) func(S, unsafe.Pointer) {
	type field struct {
		off uintptr
		fn  *func(S, unsafe.Pointer)
	}
	fields := make([]field, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = field{f.Offset, b.plan(f.Type)}
	}
	return func(s S, p unsafe.Pointer) {
		for _, f := range fields {
			(*f.fn)(s, unsafe.Add(p, f.off))
		}
	}
}

// The integers, each width its own plan: a varint (zig-zag when signed),
// cut to the width when read, as reflect's SetInt and SetUint cut it.
func decInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64](d *decoder, p unsafe.Pointer) {
	*(*T)(p) = T(d.int())
}

func decUint[T ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr](d *decoder, p unsafe.Pointer) {
	*(*T)(p) = T(d.uint())
}

func encInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64](e *encoder, p unsafe.Pointer) {
	e.int(int64(*(*T)(p)))
}

func encUint[T ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr](e *encoder, p unsafe.Pointer) {
	e.uint(uint64(*(*T)(p)))
}
