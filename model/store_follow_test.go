package model

import (
	"math/rand"
	"reflect"
	"testing"
	"time"
)

// followSteps feeds s a random history of one endpoint and calls check
// after every sample: refreshes closer than the spacing (the ring
// overwrites its newest point), rings full (they let the oldest go),
// restarts seen by the store (counters back) and announced from outside
// (StartRun), gaps in a series.
func followSteps(t *testing.T, seed int64, s *Store, check func(step int)) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	reqs := 0.0
	for step := 0; step < 400; step++ {
		switch d := rng.Intn(10); {
		case d < 3:
			at = at.Add(time.Duration(1+rng.Intn(4)) * time.Second) // within the spacing
		default:
			at = at.Add(time.Duration(5+rng.Intn(20)) * time.Second)
		}
		sm := NewSample("http://a:8000", "m", at, FromScrape)
		if rng.Intn(8) > 0 {
			sm.Gauges[Running] = float64(rng.Intn(40))
		}
		reqs += float64(rng.Intn(50))
		if rng.Intn(40) == 0 {
			reqs = 0 // a restart the counters show
		}
		sm.Counters[Requests] = reqs
		if rng.Intn(6) > 0 {
			mean := None
			if rng.Intn(5) > 0 {
				mean = Some(rng.Float64())
			}
			sm.Derived = &Derived{By: "prometheus", Window: time.Minute, Latency: map[Latency]Dist{ITL: {Mean: mean}}}
		}
		if rng.Intn(60) == 0 {
			s.StartRun("http://a:8000", at.Add(-time.Second)) // the log's banner
		}
		s.Add(sm)
		check(step)
	}
}

// A cursor read after every sample (or after every few) holds what
// AppendRunSeries returns, and says truly from where it changed.
func TestFollowRunSeriesIsAppendRunSeries(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		s := NewStore(StoreConfig{MaxWindow: 2 * time.Minute, Points: 14}) // 10 s spacing, rings full soon
		k := Key{Endpoint: "http://a:8000", Model: "m"}
		var cs [4]RunCursor
		names := []string{string(Running), string(ITL) + SeriesLatencyMean, SeriesRequestsPS, ""}
		rng := rand.New(rand.NewSource(seed * 7))
		followSteps(t, seed, s, func(step int) {
			// the last cursor follows one series, then another (the core's
			// ITL that turns TPOT)
			names[3] = names[rng.Intn(3)]
			for i, name := range names {
				if rng.Intn(3) == 0 {
					continue // not read at this refresh
				}
				before := append([]Point(nil), cs[i].Points...)
				changed := s.FollowRunSeries(&cs[i], k, name)
				want := s.AppendRunSeries(nil, k, name)
				if !reflect.DeepEqual(append([]Point{}, cs[i].Points...), append([]Point{}, want...)) {
					t.Fatalf("seed %d step %d %s: followed\n%v\nwant\n%v", seed, step, name, cs[i].Points, want)
				}
				if changed.IsZero() {
					continue
				}
				// every point before changed was there, as it was
				for _, p := range cs[i].Points {
					if !p.T.Before(changed) {
						break
					}
					found := false
					for _, q := range before {
						if q == p {
							found = true
						}
					}
					if !found {
						t.Fatalf("seed %d step %d %s: point %v before %v is new", seed, step, name, p, changed)
					}
				}
			}
		})
	}
}

// A ring is a slice that keeps its newest cap elements, whatever the
// pushes and overwrites (every capacity, every wrap-around).
func TestRingIsABoundedSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for capacity := 1; capacity <= 6; capacity++ {
		r := NewRing[int](capacity)
		var want []int
		for op := 0; op < 500; op++ {
			v := rng.Int()
			if rng.Intn(60) == 0 {
				r.Reset()
				want = want[:0]
				continue
			}
			if rng.Intn(4) == 0 {
				r.SetLast(v)
				if len(want) == 0 {
					want = append(want, v)
				} else {
					want[len(want)-1] = v
				}
			} else {
				r.Push(v)
				want = append(want, v)
				if len(want) > capacity {
					want = want[1:]
				}
			}
			if got := r.Slice(); !reflect.DeepEqual(got, want) {
				t.Fatalf("cap %d op %d: ring %v, want %v", capacity, op, got, want)
			}
			if last, ok := r.Last(); !ok || last != want[len(want)-1] {
				t.Fatalf("cap %d op %d: last %v", capacity, op, last)
			}
			if len(want) >= 2 && r.before() != want[len(want)-2] {
				t.Fatalf("cap %d op %d: the one before the last %v, want %v", capacity, op, r.before(), want[len(want)-2])
			}
		}
	}
}
