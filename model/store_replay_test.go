package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// A sample that reads as the one before it adds the points that one added
// (replayPoints), without reading its maps: random histories of endpoints
// whose samples mostly repeat (the same maps handed again, as the
// Prometheus source does, or equal ones), with gauges only, evaluated
// rates (Derived), counters and histograms now and then, restarts,
// announced runs, samples out of order, endpoints forgotten and seen again,
// and stores thinning to a point a second or keeping every one, leave the
// store as adding every sample in full does.
func TestReplayedPointsEqualAddingInFull(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { replayedPoints(t, seed) })
	}
}

func replayedPoints(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 2))
	cfg := StoreConfig{MaxWindow: 2 * time.Minute, Points: 20 + r.IntN(30)}
	replay, full := NewStore(cfg), NewStore(cfg)
	full.noReplay = true
	const n = 6
	type ep struct {
		sm      Sample
		started time.Time
	}
	eps := make([]ep, n)
	fresh := func(i int, now time.Time) Sample {
		sm := Sample{Endpoint: fmt.Sprintf("http://e%d", i), Model: "m", Time: now, Source: FromScrape, Started: eps[i].started,
			Gauges: map[Gauge]float64{Running: float64(r.IntN(3)), KVUsage: float64(r.IntN(3)) / 4}}
		if r.IntN(3) == 0 {
			sm.Gauges[GenTPSGauge] = float64(r.IntN(2) * 100)
		}
		switch r.IntN(6) {
		case 0, 1, 2:
			sm.Derived = &Derived{By: "prometheus", Window: time.Minute,
				Rates:   map[Counter]float64{GenTokens: float64(r.IntN(3) * 100), Requests: 4},
				Ratios:  map[Gauge]float64{PrefixHitGauge: 0.5},
				Latency: map[Latency]Dist{TTFT: {P99: Some(float64(r.IntN(3))), Mean: Some(0.1)}, TPOT: {Mean: None}}}
		case 3:
			sm.Counters = map[Counter]float64{GenTokens: float64(1000 + r.IntN(2)*500)}
		case 4:
			sm.Latencies = map[Latency]Histogram{TTFT: hist([]float64{0.1, inf}, []float64{5, float64(10 + r.IntN(2))}, 1)}
		}
		return sm
	}
	now := t0
	for i := range eps {
		eps[i].started = now.Add(-time.Hour)
		eps[i].sm = fresh(i, now)
	}
	steady := 0
	for step := range 400 {
		now = now.Add(time.Duration(200+r.IntN(1800)) * time.Millisecond)
		i := r.IntN(n)
		e := &eps[i]
		sm := e.sm
		sm.Time = now
		switch x := r.IntN(40); {
		case x < 6:
			sm = fresh(i, now) // new numbers
		case x < 8:
			// equal numbers in maps of their own
			sm.Gauges = maps2(sm.Gauges)
			if sm.Derived != nil {
				d := *sm.Derived
				sm.Derived = &d
			}
		case x == 8:
			e.started = now.Add(-time.Second) // restarted
			sm.Started = e.started
		case x == 9:
			sm.Time = now.Add(-3 * time.Second) // out of order
		case x == 10:
			for _, s := range []*Store{replay, full} {
				s.StartRun(sm.Endpoint, now) // the log's start banner
			}
		case x == 11:
			for _, s := range []*Store{replay, full} {
				s.Forget(Key{sm.Endpoint, "m"})
			}
		}
		e.sm = sm
		a, b := replay.Add(sm), full.Add(sm)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d: events %v, in full %v", step, a, b)
		}
		replay.Settle()
		full.Settle()
		steady += steadyHolds(t, step, replay)
		same := sameStores(replay, full)
		if !same {
			k := Key{sm.Endpoint, "m"}
			for name := range full.series[srcKey{k, FromScrape}].spark {
				if x, y := replay.Series(k, name), full.Series(k, name); !reflect.DeepEqual(x, y) {
					t.Fatalf("step %d: %s %s:\n%v\nin full:\n%v", step, k, name, x, y)
				}
			}
			t.Fatalf("step %d: the stores differ", step)
		}
	}
	if steady < 50 {
		t.Fatalf("%d steady windows checked: the test proves little", steady)
	}
	if replay.replayed < 50 {
		t.Fatalf("%d samples replayed: the test proves little", replay.replayed)
	}
	t.Logf("%d of 400 samples replayed", replay.replayed)
}

func maps2[M ~map[K]V, K comparable, V any](m M) M {
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sameStores reports whether a and b hold the same, but for how they add
// (noReplay, replayed, steadySince, which adding in full moves at every
// sample) and the order of the points a sample added (the order of its
// maps).
func sameStores(a, b *Store) bool {
	type aside struct {
		replay   map[*endpointSeries][]sparkPoint
		since    map[*endpointSeries]time.Time
		noReplay bool
		replayed int
	}
	put := func(s *Store) aside {
		as := aside{replay: map[*endpointSeries][]sparkPoint{}, since: map[*endpointSeries]time.Time{}, noReplay: s.noReplay, replayed: s.replayed}
		s.noReplay, s.replayed = false, 0
		for _, es := range s.series {
			as.replay[es], es.replay = es.replay, nil
			as.since[es], es.steadySince = es.steadySince, time.Time{}
		}
		return as
	}
	back := func(s *Store, as aside) {
		s.noReplay, s.replayed = as.noReplay, as.replayed
		for es, r := range as.replay {
			es.replay, es.steadySince = r, as.since[es]
		}
	}
	x, y := put(a), put(b)
	defer back(a, x)
	defer back(b, y)
	return reflect.DeepEqual(a, b)
}

// steadyHolds checks SteadySince on every key of s: a window that starts
// there or later reads the newest numbers throughout, every point a sample
// pushes once holding its ring's newest value. It returns how many windows
// it checked that held more than one point.
func steadyHolds(t *testing.T, step int, s *Store) int {
	t.Helper()
	n := 0
	for _, k := range s.Keys() {
		since := s.SteadySince(k)
		if since.IsZero() {
			continue
		}
		es := s.pick(k)
		for name, r := range es.spark {
			if name == SeriesGenTPS || name == SeriesPromptTPS {
				// a sample with the gauge of that name (GenTPSGauge)
				// pushes it twice, the gauge and the rate: not once
				continue
			}
			last, _ := r.Last()
			pts := 0
			for i := range r.Len() {
				if p := r.At(i); !p.T.Before(since) {
					pts++
					if p.V != last.V || p.OK != last.OK {
						t.Fatalf("step %d: %s %s since %v: %v, newest %v", step, k, name, since, p, last)
					}
				}
			}
			if pts > 1 {
				n++
			}
		}
	}
	return n
}

// appendSince, searching from the end, returns the points a filter of the
// whole ring keeps: every point after since, in order.
func TestAppendSinceIsAFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		ring := NewRing[Point](1 + r.IntN(12))
		at := t0
		for range r.IntN(30) {
			at = at.Add(time.Duration(r.IntN(3)) * time.Second) // equal times too
			ring.Push(Point{T: at, V: float64(r.IntN(5)), OK: true})
		}
		since := t0.Add(time.Duration(r.IntN(40)-5) * time.Second)
		var want []Point
		for _, p := range ring.Slice() {
			if p.T.After(since) {
				want = append(want, p)
			}
		}
		if got := appendSince(nil, ring, since); !reflect.DeepEqual(got, want) {
			t.Fatalf("since %v: %v, want %v", since, got, want)
		}
	}
}
