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
