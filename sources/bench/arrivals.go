package bench

import (
	"math"
	"math/rand/v2"
	"time"
)

// arrivals spaces open-loop requests: gamma-distributed gaps of mean 1/rate
// and shape burstiness (1 is a Poisson process, +Inf a constant rate), as
// `vllm bench serve --burstiness` does.
type arrivals struct {
	rate, shape float64
	r           *rand.Rand
}

func newArrivals(rate, burstiness float64, seed uint64) *arrivals {
	return &arrivals{rate: rate, shape: burstiness, r: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// next returns the gap before the next request.
func (a *arrivals) next() time.Duration {
	mean := 1 / a.rate
	var g float64
	switch {
	case math.IsInf(a.shape, 1):
		g = mean
	case a.shape == 1:
		g = a.r.ExpFloat64() * mean
	default:
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
