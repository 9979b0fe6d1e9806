package diagnosis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPluralAndAgo(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{plural(1, "restart"), "1 restart"},
		{plural(3, "restart"), "3 restarts"},
		{ago(0), "just now"},
		{ago(400 * time.Millisecond), "just now"},
		{ago(12*time.Second + 400*time.Millisecond), "12 s ago"},
		{ago(5 * time.Minute), "5 m ago"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// QA #21: a restart seen in this very refresh says "just now", not "0 ms ago".
func TestRestartJustNow(t *testing.T) {
	f := byID(Evaluate(input(ep(func(e *Endpoint) { e.State.Restarts = []time.Time{t0} })), DefaultConfig()), "restarts")
	if f == nil || !hasEvidence(f, "1 restart, newest just now (counters went backwards)") {
		t.Fatalf("%+v", f)
	}
}

// secs, dur and pct print what fmt printed before they used strconv: the
// same digits, roundings and signs, across scales and edge values.
func TestFormatsMatchFmt(t *testing.T) {
	fmtSecs := func(s float64) string {
		switch {
		case s < 0.001:
			return fmt.Sprintf("%.2f ms", s*1000)
		case s < 1:
			return fmt.Sprintf("%.0f ms", s*1000)
		case s < 10:
			return fmt.Sprintf("%.1f s", s)
		default:
			return fmt.Sprintf("%.0f s", s)
		}
	}
	fmtPct := func(r float64) string {
		if r > 0 && r < 0.1 {
			return fmt.Sprintf("%.1f %%", r*100)
		}
		return fmt.Sprintf("%.0f %%", r*100)
	}
	vals := []float64{0, math.Copysign(0, -1), -0.0004, -3, 1e-9, 0.0005, 0.000995, 0.001, 0.0125, 0.0005 * 3, 0.2125, 0.9995, 0.99951,
		1, 2.25, 2.35, 9.95, 9.96, 10, 10.5, 11.5, 1e6, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		vals = append(vals, math.Pow(10, r.Float64()*8-5), r.Float64())
	}
	for _, v := range vals {
		if got, want := secs(v), fmtSecs(v); got != want {
			t.Errorf("secs(%v) = %q, fmt %q", v, got, want)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v > 1.005 {
			continue // pct's own words, not fmt's
		}
		if got, want := pct(v), fmtPct(v); got != want {
			t.Errorf("pct(%v) = %q, fmt %q", v, got, want)
		}
	}
	for _, d := range []time.Duration{0, time.Millisecond, 999 * time.Millisecond, time.Second, 1499 * time.Millisecond, 1500 * time.Millisecond,
		2500 * time.Millisecond, 59499 * time.Millisecond, 59500 * time.Millisecond, time.Minute, 3 * time.Minute, -time.Second} {
		var want string
		switch {
		case d < time.Second:
			want = fmt.Sprintf("%d ms", d.Milliseconds())
		case d < time.Minute:
			want = fmt.Sprintf("%.0f s", d.Seconds())
		case d%time.Minute == 0:
			want = fmt.Sprintf("%d m", int(d.Minutes()))
		default:
			want = d.Round(time.Second).String()
		}
		if got := dur(d); got != want {
			t.Errorf("dur(%v) = %q, fmt %q", d, got, want)
		}
	}
}
