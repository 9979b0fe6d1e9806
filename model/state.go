package model

import (
	"sort"
	"time"
)

// State is an endpoint+model's picture over a window, as every pane and the
// diagnosis read it. Rates and distributions cover Window (or less right
// after start: see each Dist's Window and RateWindow).
type State struct {
	Key    Key
	Source Source
	// Time is the newest sample's time; Samples how many were fed.
	Time    time.Time
	Samples int
	Window  time.Duration

	Running, Waiting, Deferred Opt
	KVUsage                    Opt // 0–1
	// KVUsageMax is the most KV usage can be when only a floor is known
	// (KVUsage; llama.cpp with an unknown KV layout: model.SlotKV).
	KVUsageMax       Opt
	KVCapacityTokens Opt
	MaxRunning       Opt
	BatchPerStep     Opt // the engine's average requests per step
	Paused           Opt // requests paused for KV blocks now (TensorRT-LLM)
	PrefixHit        Opt // 0–1, over the window
	SpecAccept       Opt // 0–1, over the window
	// SpecAcceptPos is, per draft position, the share of drafts whose
	// token there was accepted (over the window; nil where the engine
	// does not count by position).
	SpecAcceptPos []Opt

	PromptTPS, GenTPS Opt // tokens/s over the window
	// EnginePromptTPS / EngineGenTPS are the engine's own throughput gauges
	// (sglang:gen_throughput, llama.cpp predicted_tokens_seconds), as it
	// states them: its own averaging, not the window's.
	EnginePromptTPS, EngineGenTPS Opt
	RequestsPS                    Opt // finished requests/s
	// RequestsFromLog: RequestsPS counts the requests the engine's log
	// timed in the window (its metrics count none: llama.cpp).
	RequestsFromLog bool
	PreemptionsPS   Opt
	Preemptions     Opt // count in the window
	ErrorsPS        Opt
	// KVFailPS are failed KV hand-overs per second (absent: not served).
	KVFailPS Opt
	// KVBytesPS are the bytes KV hand-overs moved per second, KVExpiredPS
	// the requests whose KV expired on the prefill side per second, over
	// the window (absent: not served).
	KVBytesPS, KVExpiredPS Opt
	// BootstrapQ, PreallocQ and TransferQ are a disaggregated SGLang
	// instance's KV hand-over queues now (model.PDBootstrapQueue…).
	BootstrapQ, PreallocQ, TransferQ Opt
	// LoRASlots and LoRASlotsMax are the LoRA adapter slots in use and in
	// all now (SGLang's LoRA pool).
	LoRASlots, LoRASlotsMax Opt
	// HTTPPS, HTTP5xxPS and HTTPRejectedPS are API responses per second over
	// the window: all, 5xx, and 429/503 (where the engine serves exact
	// codes).
	HTTPPS, HTTP5xxPS, HTTPRejectedPS Opt
	// HTTP4xxPS are client errors per second (400 context too long, 404
	// unknown model…), rejections (429) not counted where codes are exact.
	HTTP4xxPS Opt
	// RateWindow is the span the rates cover.
	RateWindow time.Duration

	// Latency may be shared with the store and other States: read it, and
	// copy it before changing it.
	Latency map[Latency]Dist
	// SinceStart holds, for each latency exposed but without observations
	// in the window (an idle server), its distribution since the engine
	// started (Dist.SinceStart set). Never the window's numbers.
	SinceStart map[Latency]Dist
	// FinishShare is each finish reason's share of the requests finished in
	// the window; FinishCount their count.
	FinishShare map[string]float64
	FinishCount map[string]float64

	// Started is when the engine process started (zero when unknown).
	Started time.Time
	// RunStart is the first sample of the current run: windows start no
	// earlier (a window right after a restart is shorter than asked).
	RunStart time.Time
	// Restarts lists restart times seen (newest last).
	Restarts []time.Time
	Info     map[string]string
	Notes    []string
	// Engines is each data-parallel engine's gauges at the newest sample
	// (nil for one engine); KVUsage is then the fullest one's.
	Engines []EngineShare
	// From names the metric each concept was read from (Sample.From).
	From map[string]string
	// LoRA is the newest sample's adapters (nil without LoRA).
	LoRA *LoRA
}

// State returns k's state over the window ending at its newest sample.
// Scraped data wins over log-derived data for the same key, unless the
// scrape never carried a number (Ollama): then the log's stats lines stand
// in, Source says FromLog, and the facts (Info, Started) stay the scrape's.
func (s *Store) State(k Key, window time.Duration) State {
	es := s.pick(k)
	free := s.windowFree(es, k)
	if free && es.kept.ok && es.kept.readings == s.readings[k.Endpoint] {
		// what it reads stands (a steady replica's same numbers): only
		// the newest sample's time and the count moved
		st := es.kept.st
		st.Window, st.Time, st.Samples = window, es.last.Time, es.n
		return st
	}
	// Nothing is kept here: a read writes nothing (readers on several
	// goroutines under a read lock may call it at once); Settle keeps.
	st := s.stateOf(es, k, window)
	if sc := s.series[srcKey{k, FromScrape}]; sc != nil && es != sc {
		// The numbers are the log's; the facts (configuration, start
		// time, the adapter's notes) stay the scrape's.
		st.Info, st.Started = sc.last.Info, sc.last.Started
		st.Notes = append(append([]string(nil), sc.last.Notes...), st.Notes...)
	}
	if es != nil && es.pending.IsZero() {
		s.withLog(&st, es, k, window)
	}
	return st
}

// windowFree reports whether k's State is the same over every window but
// its Window: a scrape's series with nothing cumulative of its own (a
// Prometheus-evaluated sample, gauges) and no log timings to merge. The
// core reads such a State over the store's window for the run's summary
// and over its own for the rules at every refresh: it is worked out once
// per change of the endpoint's history (keptState, by Settle).
func (s *Store) windowFree(es *endpointSeries, k Key) bool {
	if es == nil || es.key != k || es.src != FromScrape || !es.pending.IsZero() ||
		len(es.counters) > 0 || len(es.hists) > 0 || len(es.finish) > 0 {
		return false
	}
	lg := s.series[srcKey{k, FromLog}]
	if lg == nil && k.Model != "" {
		lg = s.series[srcKey{Key{Endpoint: k.Endpoint}, FromLog}]
	}
	return lg == nil || lg.obs.seen == 0 || !lg.pending.IsZero() // as withLog reads it: nothing to merge
}

// Settle works out the window-free States of the keys whose endpoint
// changed since they were last worked out, so that State reads them
// without working them out again. It writes the store: only its owner
// calls it (the core, before each evaluation), never a reader; State
// itself writes nothing, and reads a State not settled by working it
// out for itself.
func (s *Store) Settle() {
	for _, k := range s.keys {
		es := s.pick(k)
		if es == nil || es.kept.ok && es.kept.readings == s.readings[k.Endpoint] || !s.windowFree(es, k) {
			continue
		}
		es.kept = keptState{st: s.stateOf(es, k, s.cfg.MaxWindow), readings: s.readings[k.Endpoint], ok: true}
	}
}

// keptState is a window-free State kept with the endpoint's readings mark
// it was worked out at (Readings).
type keptState struct {
	st       State
	readings uint64
	ok       bool
}

// StateFrom returns the state built from one source only (to cross-check a
// log-derived picture against the scraped one).
func (s *Store) StateFrom(k Key, src Source, window time.Duration) State {
	es := s.series[srcKey{k, src}]
	st := s.stateOf(es, k, window)
	if src == FromLog && es != nil && es.pending.IsZero() {
		s.withLog(&st, es, k, window)
	}
	return st
}

func (s *Store) stateOf(es *endpointSeries, k Key, window time.Duration) State {
	st := State{Key: k, Window: window}
	if es == nil || !es.pending.IsZero() {
		st.Latency = noLatency
		return st // nothing, or only numbers of a run that has ended
	}
	if window > s.cfg.MaxWindow {
		window = s.cfg.MaxWindow
	}
	sm := es.last
	st.Source, st.Time, st.Samples = es.src, sm.Time, es.n
	gauge := func(g Gauge) Opt {
		if v, ok := sm.Gauges[g]; ok {
			return Some(v)
		}
		return None
	}
	st.Running, st.Waiting, st.Deferred = gauge(Running), gauge(Waiting), gauge(Deferred)
	st.KVUsage, st.KVCapacityTokens, st.MaxRunning = gauge(KVUsage), gauge(KVCapacityTokens), gauge(MaxRunning)
	st.BatchPerStep, st.Paused = gauge(BatchPerStep), gauge(Paused)
	st.KVUsageMax = gauge(KVUsageMax)

	rate := func(c Counter) Opt {
		t := es.counters[c]
		if t == nil {
			return None
		}
		r, dt := t.rate(window)
		if dt > st.RateWindow {
			st.RateWindow = dt
		}
		return r
	}
	st.PromptTPS = rateOrGauge(rate(PromptTokens), gauge(PromptTPSGauge))
	st.GenTPS = rateOrGauge(rate(GenTokens), gauge(GenTPSGauge))
	st.EnginePromptTPS, st.EngineGenTPS = gauge(PromptTPSGauge), gauge(GenTPSGauge)
	st.RequestsPS = rate(Requests)
	st.PreemptionsPS = rate(Preemptions)
	st.ErrorsPS = rate(RequestErrors)
	st.KVFailPS = rate(KVTransferFailures)
	st.KVBytesPS, st.KVExpiredPS = rate(KVTransferBytes), rate(KVExpired)
	st.BootstrapQ, st.PreallocQ, st.TransferQ = gauge(PDBootstrapQueue), gauge(PDPreallocQueue), gauge(PDTransferQueue)
	st.LoRASlots, st.LoRASlotsMax = gauge(LoRASlotsUsed), gauge(LoRASlotsTotal)
	st.HTTPPS, st.HTTP5xxPS, st.HTTPRejectedPS = rate(HTTPResponses), rate(HTTP5xx), rate(HTTPRejected)
	st.HTTP4xxPS = rate(HTTP4xx)
	if t := es.counters[Preemptions]; t != nil {
		st.Preemptions, _ = t.increase(window)
	}
	st.PrefixHit = es.ratio(PrefixHits, PrefixQueries, window, gauge(PrefixHitGauge))
	st.SpecAccept = es.ratio(SpecAcceptTokens, SpecDraftTokens, window, gauge(SpecAcceptGauge))
	st.SpecAcceptPos = nil
	for i := range MaxSpecPos {
		if es.counters[SpecAcceptPos(i)] == nil {
			break
		}
		st.SpecAcceptPos = append(st.SpecAcceptPos, es.ratio(SpecAcceptPos(i), SpecDrafts, window, None))
	}

	if sm.Derived == nil || len(es.hists) > 0 {
		// (a derived sample's distributions come with the map it copies)
		st.Latency = make(map[Latency]Dist, len(es.hists))
	}
	for l, tracks := range es.hists {
		d := combine(tracks, window)
		st.Latency[l] = d
		if d.Count == 0 && len(tracks) == 1 {
			if ss := tracks[0].sinceStart(); ss.Count > 0 {
				if st.SinceStart == nil {
					st.SinceStart = map[Latency]Dist{}
				}
				st.SinceStart[l] = ss
			}
		}
	}
	if len(es.finish) > 0 {
		st.FinishShare, st.FinishCount = map[string]float64{}, map[string]float64{}
		// Summed in a fixed order: a float sum in map order differs in its
		// last bit from run to run, and a share at a threshold would flip.
		reasons := make([]string, 0, len(es.finish))
		for r := range es.finish {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		var total float64
		for _, r := range reasons {
			inc, _ := es.finish[r].increase(window)
			st.FinishCount[r] = inc.V
			total += inc.V
		}
		for r, n := range st.FinishCount {
			if total > 0 {
				st.FinishShare[r] = n / total
			}
		}
	}
	st.Restarts = es.restarts.Slice()
	st.RunStart = es.runStart
	st.Info = sm.Info
	st.Started = sm.Started
	st.Notes = sm.Notes
	st.Engines = sm.Engines
	st.From = sm.From
	st.LoRA = sm.LoRA
	if sm.Derived != nil {
		st.Notes = append(make([]string, 0, len(sm.Notes)+1), sm.Notes...)
		sm.Derived.applyTo(&st)
	}
	return st
}

// noLatency is the Latency of a State with nothing: one empty map, read
// only (a fleet's every endpoint asks for its log's State each refresh).
var noLatency = map[Latency]Dist{}

func rateOrGauge(r, g Opt) Opt {
	if r.OK {
		return r
	}
	return g
}

// ratio is Δnum/Δden over the window, falling back to a gauge the engine
// publishes; no denominator movement is "no data".
func (es *endpointSeries) ratio(num, den Counter, window time.Duration, fallback Opt) Opt {
	tn, td := es.counters[num], es.counters[den]
	if tn == nil || td == nil {
		return fallback
	}
	n, _ := tn.increase(window)
	d, _ := td.increase(window)
	if !d.OK || d.V <= 0 {
		return fallback
	}
	return Some(n.V / d.V)
}

// combine turns one or more tracks into a Dist: one track is the plain case;
// several are a composite whose mean is the sum of the parts' means.
func combine(tracks []*histTrack, window time.Duration) Dist {
	if len(tracks) == 1 {
		return tracks[0].window(window)
	}
	d := Dist{Exposed: true}
	mean := 0.0
	for i, t := range tracks {
		p := t.window(window)
		if i == 0 {
			d.Window, d.Count, d.Approx = p.Window, p.Count, p.Approx
		}
		if !p.Mean.OK {
			return Dist{Exposed: true, Approx: d.Approx, Window: d.Window}
		}
		mean += p.Mean.V
	}
	d.Mean = Some(mean)
	return d
}

// Reasons returns finish reasons sorted by share, largest first.
func (st State) Reasons() []string {
	rs := make([]string, 0, len(st.FinishShare))
	for r := range st.FinishShare {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool {
		if st.FinishShare[rs[i]] != st.FinishShare[rs[j]] {
			return st.FinishShare[rs[i]] > st.FinishShare[rs[j]]
		}
		return rs[i] < rs[j]
	})
	return rs
}

// EngineOwnTPS is the engine's own throughput gauges worth showing beside
// the window's rates, each None where it says nothing more: not a scrape's
// (a log's averages are its rates already), the same value as the rate
// shown (no counter: the rate is the gauge), or a 0 beside a rate measured
// above 0 (llama.cpp's gauges average the requests finished since the
// previous /metrics read and read 0 when none did: "none finished since",
// not the engine's throughput).
func (st State) EngineOwnTPS() (prompt, gen Opt) {
	if st.Source != FromScrape {
		return None, None
	}
	worth := func(own, win Opt) Opt {
		if !own.OK || (own.V == 0 && win.OK && win.V > 0) || (win.OK && win.V == own.V) {
			return None
		}
		return own
	}
	return worth(st.EnginePromptTPS, st.PromptTPS), worth(st.EngineGenTPS, st.GenTPS)
}
