package report

import (
	"math"
	"sort"

	"github.com/llmtop/llmtop/model"
)

// Summary is one metric's distribution in milliseconds, with the statistics
// `vllm bench serve` reports. Every field is null when there were no
// observations (vllm writes 0 there; we never invent a zero).
type Summary struct {
	Mean, Median, Std, P90, P95, P99 model.Opt
	N                                int
}

// summarize computes a Summary of values given in seconds. It sorts vals in
// place. Percentiles interpolate linearly between closest ranks (numpy's
// default, which vllm uses); Std is the population standard deviation
// (numpy's np.std).
func summarize(vals []float64) Summary {
	n := len(vals)
	if n == 0 {
		return Summary{}
	}
	sort.Float64s(vals)
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(n)
	var sq float64
	for _, v := range vals {
		d := v - mean
		sq += d * d
	}
	ms := func(v float64) model.Opt { return model.Some(v * 1000) }
	return Summary{
		Mean: ms(mean), Median: ms(Percentile(vals, 50)), Std: ms(math.Sqrt(sq / float64(n))),
		P90: ms(Percentile(vals, 90)), P95: ms(Percentile(vals, 95)), P99: ms(Percentile(vals, 99)),
		N: n,
	}
}

// Percentile returns the p-th percentile (0–100) of sorted values with
// numpy's linear interpolation: rank p/100·(n−1) between the closest ranks.
// sorted must be ascending and non-empty.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 1 {
		return sorted[0]
	}
	rank := p / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	if lo >= n-1 {
		return sorted[n-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[lo+1]-sorted[lo])*frac
}
