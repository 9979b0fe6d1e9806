package model

import (
	"math/rand/v2"
	"testing"
	"time"
)

// RunSeriesEnds finds what scanning the run's series finds: the first and
// last known point within [from, to] of the current run, across restarts,
// gaps (a gauge missing from a sample) and windows past either end.
func TestRunSeriesEndsMatchesTheScan(t *testing.T) {
	s := NewStore(DefaultStoreConfig)
	k := Key{Endpoint: "http://e", Model: "m"}
	rng := rand.New(rand.NewPCG(5, 6))
	gen := 0.0
	for sec := range 400 {
		sm := sample(sec)
		if rng.IntN(5) > 0 {
			sm.Gauges[Running] = float64(rng.IntN(20))
		}
		gen += float64(rng.IntN(100))
		if sec == 250 {
			gen = 3 // a restart: the counter went back
		}
		sm.Counters[GenTokens] = gen
		s.Add(sm)
		if sec%37 != 0 {
			continue
		}
		for range 20 {
			from, to := at(rng.IntN(sec+20)-10), at(rng.IntN(sec+20)-10)
			var wf, wl Opt
			for _, p := range s.RunSeries(k, string(Running)) {
				if !p.OK || p.T.Before(from) || p.T.After(to) {
					continue
				}
				if !wf.OK {
					wf = Some(p.V)
				}
				wl = Some(p.V)
			}
			if f, l := s.RunSeriesEnds(k, string(Running), from, to); f != wf || l != wl {
				t.Fatalf("at %d [%s, %s]: %v %v, the scan %v %v", sec, from.Format(time.TimeOnly), to.Format(time.TimeOnly), f, l, wf, wl)
			}
		}
	}
}
