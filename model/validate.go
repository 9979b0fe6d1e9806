package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Every concept in this package is a count, a fraction, a rate or a
// duration: none can be negative, NaN or infinite. An engine that serves
// such a value has a bug or is not what it says; showing it ("waiting: -5",
// "-2547 tok/s", "TTFT mean -3000 ms") would be worse than showing "--".

// Plausible reports whether v is a value a serving engine can mean for a
// count, fraction, rate or duration: finite and not negative.
func Plausible(v float64) bool { return v >= 0 && !math.IsInf(v, 1) && !math.IsNaN(v) }

// PlausibleHist reports whether every number of h (sum, count, bucket
// counts and bounds, parts) is one an engine can mean.
func PlausibleHist(h Histogram) bool {
	if !Plausible(h.Sum) || !Plausible(h.Count) {
		return false
	}
	for _, b := range h.Buckets {
		if !Plausible(b.Count) || math.IsNaN(b.UpperBound) {
			return false
		}
	}
	for _, p := range h.Parts {
		if !PlausibleHist(p) {
			return false
		}
	}
	return true
}

// RejectImplausible removes from s every gauge, counter, finish reason and
// latency whose value no engine can mean, and notes what it removed: the
// concept is then not exposed ("--"), never shown wrong.
func RejectImplausible(s *Sample) {
	var bad []string
	for g, v := range s.Gauges {
		if !Plausible(v) {
			bad = append(bad, fmt.Sprintf("%s = %g", g, v))
			delete(s.Gauges, g)
		}
	}
	for c, v := range s.Counters {
		if !Plausible(v) {
			bad = append(bad, fmt.Sprintf("%s = %g", c, v))
			delete(s.Counters, c)
		}
	}
	for r, v := range s.FinishReasons {
		if !Plausible(v) {
			bad = append(bad, fmt.Sprintf("finished %q = %g", r, v))
			delete(s.FinishReasons, r)
		}
	}
	for l, h := range s.Latencies {
		if !PlausibleHist(h) {
			bad = append(bad, fmt.Sprintf("%s (sum %g, count %g)", l, h.Sum, h.Count))
			delete(s.Latencies, l)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		s.Notes = append(s.Notes, "rejected values no engine can mean (negative, NaN or infinite): "+strings.Join(bad, ", "))
	}
}
