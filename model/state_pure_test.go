package model

import (
	"sync"
	"testing"
	"time"
)

// State is a read: it wrote the window-free State it worked out into the
// series (its cache), so two readers under a read lock wrote the same
// memory at once, and a face reading the store beside the core raced it.
// Now the owner keeps (Settle, the core before each evaluation) and a
// read writes nothing. Run with -race (make test): the writer adds and
// settles under the write lock while two readers read.
func TestStateReadsWriteNothing(t *testing.T) {
	s := NewStore(StoreConfig{MaxWindow: 15 * time.Minute, Points: 64})
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	keys := []Key{{Endpoint: "http://a:8000", Model: "m"}, {Endpoint: "http://b:8000", Model: "m"}}
	add := func(k Key, i int) {
		sm := NewSample(k.Endpoint, k.Model, at.Add(time.Duration(i)*time.Second), FromScrape)
		sm.Gauges[Running] = float64(i)
		sm.Derived = &Derived{By: "prometheus", Window: time.Minute, Rates: map[Counter]float64{GenTokens: float64(10 * i)}}
		s.Add(sm)
	}
	for _, k := range keys {
		add(k, 1)
	}
	// a read keeps nothing; Settle keeps, and a read then reads what it kept
	if st := s.State(keys[0], time.Minute); st.Running.V != 1 || s.series[srcKey{keys[0], FromScrape}].kept.ok {
		t.Fatalf("State kept its answer (running %v)", st.Running)
	}
	s.Settle()
	es := s.series[srcKey{keys[0], FromScrape}]
	if !es.kept.ok || es.kept.readings != s.Readings(keys[0].Endpoint) {
		t.Fatal("Settle kept no window-free State")
	}
	es.kept.st.Running = Some(-1) // what a read of the kept State shows
	if st := s.State(keys[0], time.Minute); st.Running.V != -1 || st.Window != time.Minute {
		t.Fatalf("a settled State is worked out again: running %v over %v", st.Running, st.Window)
	}
	add(keys[0], 2)
	if st := s.State(keys[0], 5*time.Minute); st.Running.V != 2 || st.GenTPS.V != 20 {
		t.Fatalf("a State kept before the endpoint changed is read: running %v, gen %v", st.Running, st.GenTPS)
	}

	// an engine's own counters and histogram beside its log's timings:
	// the State every scrape of vLLM gives, read with the log's merged in
	full := Key{Endpoint: "http://c:8000", Model: "m"}
	addFull := func(i int) {
		sm := NewSample(full.Endpoint, full.Model, at.Add(time.Duration(i)*time.Second), FromScrape)
		sm.Gauges[Running] = 1
		sm.Counters[GenTokens] = float64(100 * i)
		sm.Latencies[TTFT] = Histogram{Buckets: []Bucket{{UpperBound: 0.1, Count: float64(i)}, {UpperBound: 1, Count: float64(2 * i)}}, Sum: float64(i), Count: float64(2 * i)}
		s.Add(sm)
		lg := NewSample(full.Endpoint, "", sm.Time, FromLog)
		lg.Observations = []Observation{{Time: sm.Time, Values: map[Latency]float64{Queue: 0.01 * float64(i%7), TTFT: 0.2}}}
		s.Add(lg)
	}
	addFull(1)
	keys = append(keys, full)

	var mu sync.RWMutex
	var wg sync.WaitGroup
	const n = 300
	wg.Add(3)
	go func() { // the owner
		defer wg.Done()
		for i := 3; i < n; i++ {
			mu.Lock()
			add(keys[i%2], i)
			addFull(i)
			if i%3 == 0 {
				s.Settle()
			}
			mu.Unlock()
		}
	}()
	for range 2 { // two faces reading
		go func() {
			defer wg.Done()
			for range n {
				mu.RLock()
				for _, k := range keys {
					if st := s.State(k, time.Minute); !st.Running.OK {
						t.Errorf("%s: no running count", k.Endpoint)
					}
				}
				mu.RUnlock()
			}
		}()
	}
	wg.Wait()
}
