package bench

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// arrivals spaces open-loop requests: gamma-distributed gaps of mean 1/rate
// and shape burstiness (1 is a Poisson process, +Inf a constant rate), as
// `vllm bench serve --burstiness` does. A rate of +Inf spaces them by 0:
// all at once.
type arrivals struct {
	rate, shape float64
	r           *rand.Rand
}

// newArrivals checks rate (> 0, +Inf allowed) and burstiness (> 0, +Inf
// allowed) and returns a generator seeded with seed.
func newArrivals(rate, burstiness float64, seed uint64) (*arrivals, error) {
	if !(rate > 0) {
		return nil, errors.New("the request rate must be > 0 (inf = all at once)")
	}
	if err := checkBurstiness(burstiness); err != nil {
		return nil, err
	}
	return &arrivals{rate: rate, shape: burstiness, r: rand.New(rand.NewPCG(seed, 0x5eed))}, nil
}

// checkBurstiness accepts a gamma shape: > 0, or +Inf for constant spacing.
// NaN, 0 and negative values are refused.
func checkBurstiness(b float64) error {
	if !(b > 0) {
		return errors.New("burstiness must be > 0 (1 = Poisson, inf = constant rate)")
	}
	return nil
}

// next returns the gap before the next request.
func (a *arrivals) next() time.Duration {
	if math.IsInf(a.rate, 1) {
		return 0
	}
	mean := 1 / a.rate
	var g float64
	switch {
	case math.IsInf(a.shape, 1):
		g = mean
	case a.shape == 1:
		g = a.r.ExpFloat64() * mean
	default:
		// Gamma(shape, scale = mean/shape): mean `mean`, CV 1/√shape.
		g = gamma(a.r, a.shape) * mean / a.shape
	}
	return time.Duration(g * float64(time.Second))
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method.
func gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		// Boost: Gamma(a) = Gamma(a+1)·U^(1/a).
		return gamma(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
