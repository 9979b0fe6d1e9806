package model

import (
	"math"
	"sort"
	"time"
)

// counterTrack turns one cumulative counter into a reset-corrected running
// total, so a window's increase is a subtraction and a restart never yields a
// negative rate (Prometheus' rate() semantics: after a reset the increase is
// the new value).
type counterTrack struct {
	raw  float64 // last raw value
	adj  float64 // reset-corrected cumulative
	hist *Ring[tv]
}

type tv struct {
	t time.Time
	v float64
}

func newCounterTrack(points int) *counterTrack {
	return &counterTrack{hist: NewRing[tv](points)}
}

// observe records a raw value (a value that went back is taken as a reset
// of this counter alone). It returns the increase since the previous sample.
func (c *counterTrack) observe(t time.Time, raw float64, first bool, spacing time.Duration) float64 {
	var inc float64
	switch {
	case first:
	case raw < c.raw:
		inc = raw
	default:
		inc = raw - c.raw
	}
	c.raw = raw
	c.adj += inc
	pushSpaced(c.hist, tv{t, c.adj}, spacing)
	return inc
}

// rate is the per-second increase over the window ending at the newest
// point; None when fewer than two points span it.
func (c *counterTrack) rate(window time.Duration) (Opt, time.Duration) {
	base, last, ok := windowBounds(c.hist, window, func(tv) bool { return true })
	if !ok {
		return None, 0
	}
	dt := last.t.Sub(base.t)
	return Some((last.v - base.v) / dt.Seconds()), dt
}

// increase is the reset-corrected increase over the window.
func (c *counterTrack) increase(window time.Duration) (Opt, time.Duration) {
	base, last, ok := windowBounds(c.hist, window, func(tv) bool { return true })
	if !ok {
		return None, 0
	}
	return Some(last.v - base.v), last.t.Sub(base.t)
}

// windowBounds finds the baseline for a window ending at the newest element:
// the newest element at or before (last − window), or failing that the
// oldest element accepted by same. same must hold for a suffix of the ring
// (bucket layouts only change forward). ok is false when no element before
// the last qualifies. Both searches are binary: the ring is time-ordered.
func windowBounds[T interface{ at() time.Time }](r *Ring[T], window time.Duration, same func(T) bool) (base, last T, ok bool) {
	n := r.Len()
	if n < 2 {
		return base, last, false
	}
	last = r.At(n - 1)
	start := last.at().Add(-window)
	// first index whose time is after start; the baseline is the one before.
	bi := sort.Search(n-1, func(i int) bool { return r.At(i).at().After(start) }) - 1
	if bi < 0 {
		bi = 0
	}
	// oldest index still in the newest layout.
	first := sort.Search(n-1, func(i int) bool { return same(r.At(i)) })
	if first >= n-1 {
		return base, last, false
	}
	if bi < first {
		bi = first
	}
	return r.At(bi), last, true
}

func (v tv) at() time.Time { return v.t }

// histTrack keeps reset-corrected cumulative histogram snapshots so any
// window's distribution is the difference of two snapshots. A change of
// bucket layout (engine upgraded) starts a new epoch: windows never span two
// layouts.
type histTrack struct {
	bounds []float64
	raw    Histogram
	adj    []float64 // reset-corrected cumulative bucket counts
	adjSum float64
	adjCnt float64
	epoch  int
	hist   *Ring[histPoint]
	approx string
}

type histPoint struct {
	t      time.Time
	counts []float64
	sum    float64
	count  float64
	epoch  int
}

func (h histPoint) at() time.Time { return h.t }

func newHistTrack(points int) *histTrack {
	return &histTrack{hist: NewRing[histPoint](points)}
}

func boundsOf(h Histogram) []float64 {
	b := make([]float64, len(h.Buckets))
	for i, x := range h.Buckets {
		b[i] = x.UpperBound
	}
	return b
}

func sameBounds(a []float64, h Histogram) bool {
	if len(a) != len(h.Buckets) {
		return false
	}
	for i, b := range h.Buckets {
		if a[i] != b.UpperBound && !(math.IsInf(a[i], 1) && math.IsInf(b.UpperBound, 1)) {
			return false
		}
	}
	return true
}

// observe records a raw cumulative histogram. It reports whether the bucket
// layout changed, and returns the interval's (Δsum, Δcount).
func (h *histTrack) observe(t time.Time, raw Histogram, first bool, spacing time.Duration) (changed bool, dSum, dCnt float64) {
	reset := false
	h.approx = raw.Approx
	switch {
	case first:
		h.bounds = boundsOf(raw)
		h.adj = make([]float64, len(raw.Buckets))
		for i, b := range raw.Buckets {
			h.adj[i] = b.Count
		}
		h.adjSum, h.adjCnt = raw.Sum, raw.Count
	case !sameBounds(h.bounds, raw):
		changed = true
		h.epoch++
		h.bounds = boundsOf(raw)
		h.adj = make([]float64, len(raw.Buckets))
		for i, b := range raw.Buckets {
			h.adj[i] = b.Count
		}
		dSum, dCnt = h.deltaSumCount(raw, reset)
		h.adjSum += dSum
		h.adjCnt += dCnt
	default:
		reset = reset || raw.Count < h.raw.Count
		for i, b := range raw.Buckets {
			d := b.Count
			if !reset {
				d = b.Count - h.raw.Buckets[i].Count
				if d < 0 {
					d = 0
				}
			}
			h.adj[i] += d
		}
		dSum, dCnt = h.deltaSumCount(raw, reset)
		h.adjSum += dSum
		h.adjCnt += dCnt
	}
	h.raw = raw
	p := histPoint{t: t, counts: append([]float64(nil), h.adj...), sum: h.adjSum, count: h.adjCnt, epoch: h.epoch}
	if changed {
		h.hist.Push(p)
	} else {
		pushSpaced(h.hist, p, spacing)
	}
	return changed, dSum, dCnt
}

func (h *histTrack) deltaSumCount(raw Histogram, reset bool) (float64, float64) {
	if reset || raw.Count < h.raw.Count || raw.Sum < h.raw.Sum {
		return raw.Sum, raw.Count
	}
	return raw.Sum - h.raw.Sum, raw.Count - h.raw.Count
}

// window returns the distribution of observations in the window ending at
// the newest snapshot.
func (h *histTrack) window(window time.Duration) Dist {
	d := Dist{Exposed: true, Approx: h.approx}
	n := h.hist.Len()
	if n == 0 {
		return d
	}
	epoch := h.hist.At(n - 1).epoch
	base, last, ok := windowBounds(h.hist, window, func(p histPoint) bool { return p.epoch == epoch })
	if !ok {
		return d
	}
	d.Window = last.t.Sub(base.t)
	d.Count = last.count - base.count
	if d.Count <= 0 {
		d.Count = 0
		return d
	}
	d.Mean = Some((last.sum - base.sum) / d.Count)
	if len(h.bounds) == 0 {
		return d
	}
	buckets := make([]Bucket, len(h.bounds))
	for i, ub := range h.bounds {
		buckets[i] = Bucket{UpperBound: ub, Count: last.counts[i] - base.counts[i]}
	}
	d.Estimate = true
	if buckets[0].Count >= buckets[len(buckets)-1].Count && !math.IsInf(buckets[0].UpperBound, 1) {
		d.AllBelow = Some(buckets[0].UpperBound)
	}
	d.setQuantiles(buckets)
	return d
}

// sinceStart is the distribution over the engine's life so far: its own
// cumulative histogram at the newest snapshot (counters restart with the
// process, so it never spans two runs). It is for an idle window to fall
// back on, labelled as such (Dist.SinceStart).
func (h *histTrack) sinceStart() Dist {
	d := Dist{Exposed: true, Approx: h.approx, SinceStart: true}
	raw := h.raw
	if raw.Count <= 0 || h.hist.Len() == 0 {
		return d
	}
	d.Count = raw.Count
	d.Mean = Some(raw.Sum / raw.Count)
	if len(raw.Buckets) == 0 {
		return d
	}
	d.Estimate = true
	if raw.Buckets[0].Count >= raw.Buckets[len(raw.Buckets)-1].Count && !math.IsInf(raw.Buckets[0].UpperBound, 1) {
		d.AllBelow = Some(raw.Buckets[0].UpperBound)
	}
	d.setQuantiles(raw.Buckets)
	return d
}
