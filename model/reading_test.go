package model

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// Issue 33: a steady replica's sample reads as the one before it, so its
// window-free State is kept (but for Time and Samples) and Readings stands
// while Changes moves; any difference in what a sample reads (a number,
// a fact, a note, the start time, an adapter's names, the engines behind
// it) is read anew. The kept State always equals the one worked out from
// scratch.
func TestSameReadingKeepsTheStateAndNothingElse(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	s := NewStore(StoreConfig{MaxWindow: 15 * time.Minute, Points: 64})
	k := Key{Endpoint: "http://a:8000", Model: "m"}
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	gauge, rate, p99, info, note, started := 2.0, 100.0, 0.5, "16", "", at.Add(-time.Hour)
	var engines []EngineShare
	kept := 0
	for i := range 400 {
		untouched := false
		switch r.IntN(12) {
		case 0:
			gauge = float64(r.IntN(3))
		case 1:
			rate = float64(100 + r.IntN(3))
		case 2:
			p99 = []float64{0.5, 0.6}[r.IntN(2)]
		case 3:
			info = []string{"16", "32"}[r.IntN(2)]
		case 4:
			note = []string{"", "restarted 3s ago"}[r.IntN(2)]
		case 5:
			started = at.Add(time.Duration(i) * time.Second)
		case 6:
			engines = []EngineShare{{ID: "0", Running: Some(gauge)}, {ID: "1", KVUsage: Some(float64(r.IntN(2)) / 2)}}
		default:
			untouched = i > 0
		}
		sm := NewSample(k.Endpoint, k.Model, at.Add(time.Duration(i)*5*time.Second), FromScrape)
		sm.Gauges[Running], sm.Info["block_size"], sm.Started, sm.Engines = gauge, info, started, engines
		if note != "" {
			sm.Notes = []string{note}
		}
		sm.Derived = &Derived{By: "prometheus", Window: time.Minute, Rates: map[Counter]float64{GenTokens: rate},
			Latency: map[Latency]Dist{TTFT: {Mean: Some(0.2), P99: Some(p99)}}}
		readings, changes := s.Readings(k.Endpoint), s.Changes(k.Endpoint)
		s.Add(sm)
		if s.Changes(k.Endpoint) == changes {
			t.Fatalf("sample %d: Changes did not move", i)
		}
		same := s.Readings(k.Endpoint) == readings
		if untouched && !same {
			t.Fatalf("sample %d reads as the one before it, but Readings moved", i)
		}
		if same {
			kept++
		}
		s.Settle() // as the core does before each evaluation
		got := s.State(k, time.Minute)
		want := s.stateOf(s.pick(k), k, time.Minute)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("sample %d (readings kept: %v): the kept State differs from the one worked out\n%+v\n%+v", i, same, got, want)
		}
		if got.Time != sm.Time || got.Samples != i+1 {
			t.Fatalf("sample %d: State at %v with %d samples", i, got.Time, got.Samples)
		}
	}
	if kept < 100 {
		t.Errorf("only %d of 400 samples kept the readings: a steady sample is read anew", kept)
	}
}

// A sample with request timings is news whatever its numbers; so is one
// that is out of order or the first of a run.
func TestTimingsAreNeverTheSameReading(t *testing.T) {
	a := NewSample("u", "m", time.Unix(0, 0), FromScrape)
	b := a
	if !sameReading(&a, &b) {
		t.Fatal("a sample does not read as itself")
	}
	b.Observations = []Observation{{Time: time.Unix(1, 0)}}
	if sameReading(&a, &b) {
		t.Error("a sample with request timings reads as one without")
	}
	c := a
	c.Derived = &Derived{By: "prometheus"}
	if sameReading(&a, &c) {
		t.Error("a derived sample reads as a direct one")
	}
}
