package checkpoint

import (
	"math"
	"reflect"
	"testing"
	"time"
)

type node struct {
	name  string
	next  *node
	peers map[string]*node
}

type state struct {
	n       int
	f       float64
	when    time.Time
	local   time.Time
	tags    []string
	empty   []string
	raw     []byte
	counts  map[string]int
	alias   map[string]int // the same map as counts
	head    *node
	any     any
	nilAny  any
	fn      func(int) int
	arr     [3]int16
	shared  *int
	shared2 *int
	nan     float64
}

func TestRoundTripKeepsStateSharingAndCycles(t *testing.T) {
	x := 7
	a := &node{name: "a"}
	b := &node{name: "b", next: a}
	a.next = b // a cycle
	a.peers = map[string]*node{"b": b, "self": a}
	counts := map[string]int{"x": 1}
	in := &state{n: -3, f: 1.5, when: time.Date(2026, 11, 24, 14, 0, 0, 5, time.UTC), local: time.Date(2026, 1, 1, 0, 0, 0, 0, time.Local),
		tags: []string{"p", ""}, empty: []string{}, raw: []byte{0, 1, 255}, counts: counts, alias: counts, head: a,
		any: node{name: "in an interface"}, fn: func(i int) int { return i * 2 }, arr: [3]int16{1, -2, 3},
		shared: &x, shared2: &x, nan: math.NaN()}
	c := New()
	buf, err := c.Encode(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode[*state](c, buf)
	if err != nil {
		t.Fatal(err)
	}
	if out == in || out.head == in.head {
		t.Fatal("the copy shares the original's memory")
	}
	if out.n != -3 || out.f != 1.5 || !out.when.Equal(in.when) || out.when.Location() != time.UTC || out.local.Location() != time.Local ||
		!reflect.DeepEqual(out.tags, in.tags) || out.empty == nil || len(out.empty) != 0 || !reflect.DeepEqual(out.raw, in.raw) ||
		out.arr != in.arr || *out.shared != 7 || !math.IsNaN(out.nan) || out.nilAny != nil || out.fn(4) != 8 {
		t.Fatalf("copy %+v", out)
	}
	if out.head.next.next != out.head || out.head.peers["self"] != out.head || out.head.peers["b"] != out.head.next {
		t.Fatal("the cycle or the shared pointers were not kept")
	}
	if out.shared != out.shared2 {
		t.Fatal("two pointers to one int became two ints")
	}
	out.counts["y"] = 2
	if out.alias["y"] != 2 || in.counts["y"] != 0 {
		t.Fatal("a map shared within the value is no longer shared, or the copy writes the original")
	}
	if n, ok := out.any.(node); !ok || n.name != "in an interface" {
		t.Fatalf("interface %#v", out.any)
	}
	// a truncated buffer is an error, never a panic
	for i := range len(buf) {
		if _, err := Decode[*state](c, buf[:i]); err == nil {
			t.Fatalf("%d of %d bytes decoded", i, len(buf))
		}
	}
}

type blob []byte

type tree struct {
	kids  []tree
	byKey map[int8][]tree
}

type widths struct {
	i8   int8
	i16  int16
	i32  int32
	u    uint
	u8   uint8
	u16  uint16
	u32  uint32
	u64  uint64
	up   uintptr
	f32  float32
	c64  complex64
	c128 complex128
	b    blob
	ok   bool
	arr  [2]struct {
		s string
		p *int
	}
	anyPtr any
	anyMap any
	_      int
}

// Every kind of field, each integer width at its extremes, a type that
// holds itself through a slice and a map, a pointer and a map behind an
// interface: the decoding plans read back what the encoder wrote.
func TestRoundTripEveryKind(t *testing.T) {
	x := 42
	in := &struct {
		w widths
		t tree
	}{
		w: widths{i8: math.MinInt8, i16: math.MaxInt16, i32: math.MinInt32, u: math.MaxUint, u8: 255, u16: math.MaxUint16,
			u32: math.MaxUint32, u64: math.MaxUint64, up: 12345, f32: 1.25, c64: complex(1, -2), c128: complex(-3.5, 4),
			b: blob{9, 8}, ok: true, anyPtr: &x, anyMap: map[string][]int{"a": {1, 2}, "b": nil}},
		t: tree{kids: []tree{{}, {kids: []tree{{}}}}, byKey: map[int8][]tree{-1: {{}}, 2: nil}},
	}
	in.w.arr[0] = struct {
		s string
		p *int
	}{"first", &x}
	in.w.arr[1].s = "second"
	c := New()
	buf, err := c.Encode(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode[*struct {
		w widths
		t tree
	}](c, buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v", out, in)
	}
	if out.w.arr[0].p == &x || out.w.anyPtr.(*int) != out.w.arr[0].p {
		t.Fatal("a pointer behind an interface and one in a field to the same int are no longer one int (or still the original)")
	}
}
