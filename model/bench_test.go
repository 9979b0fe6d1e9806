package model

import (
	"testing"
	"time"
)

// vllmLikeSample has the shape of a vLLM scrape: a dozen gauges and
// counters, seven latency histograms with vLLM's bucket counts.
func vllmLikeSample(i int) Sample {
	sm := NewSample("http://e", "m", t0.Add(time.Duration(i)*time.Second), FromScrape)
	for _, g := range []Gauge{Running, Waiting, Deferred, KVUsage, KVCapacityTokens} {
		sm.Gauges[g] = float64(i % 13)
	}
	for _, c := range []Counter{PromptTokens, GenTokens, Requests, Preemptions, PrefixQueries, PrefixHits} {
		sm.Counters[c] = float64(i * 17)
	}
	for _, r := range []string{"stop", "length", "abort"} {
		sm.FinishReasons[r] = float64(i)
	}
	for _, l := range Latencies {
		h := Histogram{Sum: float64(i), Count: float64(i * 22)}
		for b := 0; b < 22; b++ {
			h.Buckets = append(h.Buckets, Bucket{UpperBound: float64(b + 1), Count: float64(i * (b + 1))})
		}
		h.Buckets[21].UpperBound = inf
		sm.Latencies[l] = h
	}
	return sm
}

func BenchmarkStoreAdd(b *testing.B) {
	s := NewStore(DefaultStoreConfig)
	samples := make([]Sample, 1000)
	for i := range samples {
		samples[i] = vllmLikeSample(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sm := samples[i%len(samples)]
		sm.Time = t0.Add(time.Duration(i) * time.Second)
		s.Add(sm)
	}
}

func BenchmarkStoreState(b *testing.B) {
	s := NewStore(DefaultStoreConfig)
	for i := 0; i < 1000; i++ {
		s.Add(vllmLikeSample(i))
	}
	k := Key{"http://e", "m"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.State(k, 5*time.Minute)
	}
}

// BenchmarkStateWithLogObservations: State over 15 minutes with the ring
// of per-request observations full (llama.cpp's four latencies, 8192
// requests): the exact percentiles sort the window each read.
func BenchmarkStateWithLogObservations(b *testing.B) {
	s := NewStore(DefaultStoreConfig)
	k := Key{"http://e", "m"}
	for sec := 0; sec <= 900; sec++ {
		sm := NewSample("http://e", "m", t0.Add(time.Duration(sec)*time.Second), FromScrape)
		sm.Gauges[Waiting], sm.Gauges[Running] = 4, 2
		s.Add(sm)
	}
	for i := 0; i < LogObsCap; i++ {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		sm := NewSample("http://e", "", at, FromLog)
		v := float64(i%97) / 1000
		sm.Observations = []Observation{{Time: at, Values: map[Latency]float64{Prefill: v, Decode: 2 * v, E2E: 3 * v, TPOT: v / 100}}}
		s.Add(sm)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := s.State(k, 15*time.Minute); st.Latency[Prefill].Count == 0 {
			b.Fatal("no observations")
		}
	}
}
