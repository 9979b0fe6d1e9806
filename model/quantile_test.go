package model

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

func TestBucketQuantileInterpolates(t *testing.T) {
	// 10 observations ≤0.1, 10 more in (0.1,0.5], 0 above.
	b := []Bucket{{0.1, 10}, {0.5, 20}, {math.Inf(1), 20}}
	cases := []struct {
		q    float64
		want float64
	}{
		{0.5, 0.1},                 // rank 10 → top of the first bucket
		{0.25, 0.05},               // rank 5 → halfway into [0,0.1]
		{0.75, 0.1 + 0.4*5.0/10.0}, // rank 15 → halfway into (0.1,0.5]
		{1, 0.5},
	}
	for _, c := range cases {
		got := BucketQuantile(c.q, b)
		if !got.OK || math.Abs(got.V-c.want) > 1e-12 {
			t.Errorf("q=%v: got %+v, want %v", c.q, got, c.want)
		}
	}
}

func TestBucketQuantileInfBucketReturnsLastFiniteBound(t *testing.T) {
	b := []Bucket{{1, 1}, {2, 2}, {math.Inf(1), 100}}
	if got := BucketQuantile(0.99, b); !got.OK || got.V != 2 {
		t.Fatalf("got %+v, want 2 (Prometheus returns the highest finite bound)", got)
	}
}

func TestBucketQuantileEmptyIsNoData(t *testing.T) {
	for _, b := range [][]Bucket{nil, {{1, 0}, {math.Inf(1), 0}}} {
		if got := BucketQuantile(0.5, b); got.OK {
			t.Errorf("empty buckets %v gave %+v, want no data", b, got)
		}
	}
}

// TestBucketQuantileMatchesExactWithinBucketWidth checks the estimate against
// the exact quantile of known data: the error can never exceed the width of
// the bucket the true quantile falls in.
func TestBucketQuantileMatchesExactWithinBucketWidth(t *testing.T) {
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	rng := rand.New(rand.NewSource(7))
	obs := make([]float64, 5000)
	for i := range obs {
		obs[i] = math.Exp(rng.NormFloat64()*0.8 - 2.5) // log-normal around 80 ms
	}
	b := make([]Bucket, 0, len(bounds)+1)
	for _, ub := range append(bounds, math.Inf(1)) {
		n := 0
		for _, o := range obs {
			if o <= ub {
				n++
			}
		}
		b = append(b, Bucket{ub, float64(n)})
	}
	sorted := append([]float64(nil), obs...)
	sort.Float64s(sorted)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := sorted[int(math.Ceil(q*float64(len(sorted))))-1]
		est := BucketQuantile(q, b)
		lo, hi := 0.0, math.Inf(1)
		for _, ub := range bounds {
			if ub >= exact {
				hi = ub
				break
			}
			lo = ub
		}
		if !est.OK || math.Abs(est.V-exact) > hi-lo {
			t.Errorf("q=%v: estimate %v, exact %v, bucket (%v,%v]", q, est, exact, lo, hi)
		}
	}
}
