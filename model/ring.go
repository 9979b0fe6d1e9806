package model

import "time"

// Ring is a fixed-capacity FIFO: pushing onto a full ring drops the oldest
// element, so memory stays bounded however long llmtop runs.
type Ring[T any] struct {
	buf   []T
	start int
	n     int
	// pushes counts every Push (SetLast is none): a reader that noted it
	// knows how many elements the ring let go since (RunCursor).
	pushes uint64
	// last and prev are copies of the newest element and the one before
	// it (when there are): a fleet's refresh pushes onto tens of thousands
	// of rings, and reading them from buf was a cache miss each.
	last, prev T
}

// NewRing returns a ring holding at most capacity elements (minimum 1).
func NewRing[T any](capacity int) *Ring[T] {
	if capacity < 1 {
		capacity = 1
	}
	return &Ring[T]{buf: make([]T, capacity)}
}

// Push appends v, dropping the oldest element when full.
func (r *Ring[T]) Push(v T) {
	r.pushes++
	r.prev, r.last = r.last, v
	if r.n < len(r.buf) {
		r.buf[r.slot(r.n)] = v
		r.n++
		return
	}
	r.buf[r.start] = v
	if r.start++; r.start == len(r.buf) {
		r.start = 0
	}
}

// slot is the buffer index of the i-th element, 0 ≤ i < len(buf): a
// subtraction, not a division (a fleet's refresh reads rings millions of
// times, binary searches included).
func (r *Ring[T]) slot(i int) int {
	j := r.start + i
	if j >= len(r.buf) {
		j -= len(r.buf)
	}
	return j
}

// Len is the number of elements held.
func (r *Ring[T]) Len() int { return r.n }

// Cap is the capacity.
func (r *Ring[T]) Cap() int { return len(r.buf) }

// At returns the i-th element, oldest first. It panics when i is out of
// range, like a slice.
func (r *Ring[T]) At(i int) T {
	if i < 0 || i >= r.n {
		panic("model.Ring: index out of range")
	}
	return r.buf[r.slot(i)]
}

// Last returns the newest element and whether there is one.
func (r *Ring[T]) Last() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	return r.last, true
}

// before returns the element before the newest (valid when Len ≥ 2).
func (r *Ring[T]) before() T { return r.prev }

// Slice copies the elements, oldest first.
func (r *Ring[T]) Slice() []T {
	out := make([]T, r.n)
	for i := range out {
		out[i] = r.At(i)
	}
	return out
}

// Reset empties the ring without releasing its storage.
func (r *Ring[T]) Reset() {
	var zero T
	r.start, r.n, r.last, r.prev = 0, 0, zero, zero
}

// SetLast overwrites the newest element; on an empty ring it pushes.
func (r *Ring[T]) SetLast(v T) {
	if r.n == 0 {
		r.Push(v)
		return
	}
	r.buf[r.slot(r.n-1)] = v
	r.last = v
}

// pushSpaced appends v, or overwrites the newest element when the one before
// it is less than spacing older: the ring then holds points at least spacing
// apart plus the live newest one, so a fixed capacity covers a fixed span of
// time whatever the refresh rate.
func pushSpaced[T interface{ at() time.Time }](r *Ring[T], v T, spacing time.Duration) {
	if n := r.Len(); n >= 2 && v.at().Sub(r.before().at()) < spacing {
		r.SetLast(v)
		return
	}
	r.Push(v)
}
