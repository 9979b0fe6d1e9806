package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The arrival tests draw from fixed seeds, so they are deterministic; the
// tolerances are still set at 5 standard errors for the sample size, so that
// they hold for any seed and fail only when the distribution is wrong.

const draws = 100_000

// gapStats draws n gaps and returns their mean and standard deviation in
// seconds and the fraction longer than over seconds.
func gapStats(a *arrivals, n int, over float64) (mean, std, fracOver float64) {
	var sum, sumSq float64
	longer := 0
	for range n {
		g := a.next().Seconds()
		sum += g
		sumSq += g * g
		if g > over {
			longer++
		}
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(max(sumSq/float64(n)-mean*mean, 0)), float64(longer) / float64(n)
}

func mustArrivals(t *testing.T, rate, b float64, seed uint64) *arrivals {
	t.Helper()
	a, err := newArrivals(rate, b, seed)
	if err != nil {
		t.Fatalf("newArrivals(%g, %g): %v", rate, b, err)
	}
	return a
}

// Gamma gaps of shape b: mean 1/rate whatever b, coefficient of variation
// 1/√b (b = 1 is the Poisson process's exponential gaps, CV 1).
func TestArrivalsMeanAndBurstiness(t *testing.T) {
	const rate = 50.0
	for _, b := range []float64{0.25, 0.5, 1, 2, 4, 16} {
		a := mustArrivals(t, rate, b, 42)
		mean, std, _ := gapStats(a, draws, 1/rate)
		cv := 1 / math.Sqrt(b)
		// Standard errors: of the mean, CV/√n (relative); of the sample
		// standard deviation, ½·√((2 + excess kurtosis)/n) with the gamma's
		// excess kurtosis 6/b.
		seMean := cv / math.Sqrt(draws)
		seStd := 0.5 * math.Sqrt((2+6/b)/draws)
		if rel := math.Abs(mean*rate - 1); rel > 5*seMean {
			t.Errorf("b=%g: mean gap %.6fs, want %.6fs (±%.2f%%, off %.2f%%)", b, mean, 1/rate, 500*seMean, 100*rel)
		}
		if got := std / mean; math.Abs(got/cv-1) > 5*(seStd+seMean) {
			t.Errorf("b=%g: CV %.4f, want 1/√b = %.4f (±%.1f%%)", b, got, cv, 500*(seStd+seMean))
		}
	}
}

// Burstiness 1 is a Poisson process: exponential gaps, so P(gap > mean) is
// 1/e and the process is memoryless.
func TestArrivalsPoisson(t *testing.T) {
	const rate = 8.0
	a := mustArrivals(t, rate, 1, 7)
	mean, std, over := gapStats(a, draws, 1/rate)
	se := math.Sqrt(math.Exp(-1) * (1 - math.Exp(-1)) / draws)
	if math.Abs(over-math.Exp(-1)) > 5*se {
		t.Errorf("P(gap > 1/rate) = %.4f, want 1/e = %.4f", over, math.Exp(-1))
	}
	if math.Abs(mean*rate-1) > 5/math.Sqrt(draws) || math.Abs(std/mean-1) > 5*(0.5*math.Sqrt(8.0/draws)+1/math.Sqrt(draws)) {
		t.Errorf("mean %.5fs std %.5fs, want both %.5fs", mean, std, 1/rate)
	}
}

// Burstiness +Inf is a constant rate: every gap is exactly 1/rate.
func TestArrivalsConstant(t *testing.T) {
	for _, rate := range []float64{50, 3, 0.5} {
		a := mustArrivals(t, rate, math.Inf(1), 1)
		want := time.Duration(float64(time.Second) / rate)
		for i := range 10_000 {
			if g := a.next(); g != want {
				t.Fatalf("rate %g: gap %d is %v, want %v every time (zero variance)", rate, i, g, want)
			}
		}
	}
}

// A rate of +Inf (vllm's --request-rate inf) spaces requests by nothing.
func TestArrivalsInfiniteRate(t *testing.T) {
	for _, b := range []float64{0.5, 1, 3, math.Inf(1)} {
		a := mustArrivals(t, math.Inf(1), b, 1)
		for range 100 {
			if g := a.next(); g != 0 {
				t.Fatalf("b=%g: gap %v at rate inf, want 0", b, g)
			}
		}
	}
}

// The same seed gives the same arrival times (runs are repeatable); another
// seed gives others.
func TestArrivalsSeeded(t *testing.T) {
	for _, b := range []float64{0.5, 1, 4} {
		a, same, other := mustArrivals(t, 10, b, 3), mustArrivals(t, 10, b, 3), mustArrivals(t, 10, b, 4)
		differ := 0
		for i := range 1000 {
			g := a.next()
			if s := same.next(); s != g {
				t.Fatalf("b=%g: draw %d differs with the same seed: %v vs %v", b, i, g, s)
			}
			if other.next() != g {
				differ++
			}
		}
		if differ < 990 {
			t.Errorf("b=%g: another seed matched %d of 1000 draws", b, 1000-differ)
		}
	}
}

func TestArrivalsRejectInvalid(t *testing.T) {
	for _, b := range []float64{0, -1, math.Inf(-1), math.NaN()} {
		if _, err := newArrivals(5, b, 1); err == nil {
			t.Errorf("burstiness %g accepted", b)
		}
		if err := checkBurstiness(b); err == nil {
			t.Errorf("checkBurstiness(%g) accepted", b)
		}
	}
	for _, r := range []float64{0, -3, math.Inf(-1), math.NaN()} {
		if _, err := newArrivals(r, 1, 1); err == nil {
			t.Errorf("rate %g accepted", r)
		}
	}
	for _, b := range []float64{1e-3, 0.5, 1, 7, math.Inf(1)} {
		if _, err := newArrivals(5, b, 1); err != nil {
			t.Errorf("burstiness %g refused: %v", b, err)
		}
	}
}

// gamma(shape) itself, including shape 1 (which next() leaves to
// ExpFloat64) and shapes below 1 (the boost): mean and variance both equal
// the shape.
func TestGammaMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, k := range []float64{0.3, 1, 1.5, 9} {
		var sum, sumSq float64
		for range draws {
			x := gamma(r, k)
			if !(x >= 0) {
				t.Fatalf("shape %g: draw %g", k, x)
			}
			sum += x
			sumSq += x * x
		}
		mean := sum / draws
		variance := sumSq/draws - mean*mean
		seMean := math.Sqrt(k / draws)                 // absolute
		seVar := k * math.Sqrt((2+6/k)/float64(draws)) // absolute
		if math.Abs(mean-k) > 5*seMean || math.Abs(variance-k) > 5*seVar {
			t.Errorf("shape %g: mean %.4f variance %.4f, want both %g (±%.4f, ±%.4f)", k, mean, variance, k, 5*seMean, 5*seVar)
		}
	}
}
