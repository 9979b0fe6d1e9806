package model

import "math"

// BucketQuantile estimates the q-quantile (0 ≤ q ≤ 1) of observations in
// cumulative buckets the way Prometheus' histogram_quantile does: find the
// bucket holding rank q·total and interpolate linearly inside it. The lowest
// bucket's lower bound is 0 (latencies and token counts are not negative);
// a rank in the +Inf bucket returns the highest finite bound. No observations
// gives None, never 0.
func BucketQuantile(q float64, buckets []Bucket) Opt {
	if len(buckets) == 0 || math.IsNaN(q) {
		return None
	}
	total := buckets[len(buckets)-1].Count
	if total <= 0 || math.IsNaN(total) {
		return None
	}
	if q < 0 {
		q = 0
	}
	if q > 1 {
		q = 1
	}
	rank := q * total
	var lower, below float64
	for i, b := range buckets {
		if b.Count >= rank && b.Count > below {
			if math.IsInf(b.UpperBound, 1) {
				// Everything above the last finite bound: Prometheus
				// returns that bound.
				if i == 0 {
					return None
				}
				return Some(buckets[i-1].UpperBound)
			}
			if i == 0 && b.UpperBound <= 0 {
				return Some(b.UpperBound)
			}
			inBucket := b.Count - below
			return Some(lower + (b.UpperBound-lower)*(rank-below)/inBucket)
		}
		lower, below = b.UpperBound, b.Count
	}
	return Some(buckets[len(buckets)-1].UpperBound)
}

// PastFinite reports whether the q-quantile lies in the +Inf bucket:
// past the highest finite bound, where BucketQuantile can only return that
// bound, a floor. It returns the bound as well.
func PastFinite(q float64, buckets []Bucket) (Opt, bool) {
	n := len(buckets)
	if n < 2 || !math.IsInf(buckets[n-1].UpperBound, 1) {
		return None, false
	}
	total, finite := buckets[n-1].Count, buckets[n-2].Count
	if total <= 0 || math.IsNaN(total) {
		return None, false
	}
	return Some(buckets[n-2].UpperBound), q*total > finite
}

// reportedQuantiles are the quantiles a Dist carries, lowest first.
var reportedQuantiles = [...]float64{0.50, 0.90, 0.95, 0.99}

// setQuantiles fills d's percentiles from cumulative buckets, and its
// Above/AboveQ where some lie past the highest finite bound.
func (d *Dist) setQuantiles(buckets []Bucket) {
	d.P50 = BucketQuantile(0.50, buckets)
	d.P90 = BucketQuantile(0.90, buckets)
	d.P95 = BucketQuantile(0.95, buckets)
	d.P99 = BucketQuantile(0.99, buckets)
	for _, q := range reportedQuantiles {
		if bound, past := PastFinite(q, buckets); past {
			d.Above, d.AboveQ = bound, q
			return
		}
	}
}

// Past reports whether d's q-quantile (0.5, 0.9, 0.95 or 0.99) lies past
// the highest finite bucket bound: its value is then only a floor, to be
// shown as "> Above".
func (d Dist) Past(q float64) bool { return d.Above.OK && q >= d.AboveQ }
