package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Key identifies one model served by one endpoint.
type Key struct {
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
}

func (k Key) String() string {
	if k.Model == "" {
		return k.Endpoint
	}
	return k.Endpoint + " " + k.Model
}

// Dist is a latency distribution over a window, in seconds.
type Dist struct {
	P50, P90, P95, P99, Mean Opt
	// Count is the number of observations in the window.
	Count float64
	// Window is the span the numbers actually cover (shorter than asked
	// for right after start or a restart).
	Window time.Duration
	// Estimate is set when the quantiles come from histogram buckets.
	Estimate bool
	// Approx, when set, says how an approximation is made.
	Approx string
	// Exposed is false when the engine does not publish this latency.
	Exposed bool
	// SinceStart is set when the numbers cover the engine's life so far
	// (its cumulative histogram), not the window: State.SinceStart, for a
	// window with no observations. Show it labelled "since start".
	SinceStart bool
	// AllBelow is set when every observation in the window fell in the
	// lowest bucket: the quantiles are then interpolations inside
	// (0, AllBelow] and say little (vLLM's queue/prefill buckets start at
	// 300 ms, so a 15 ms queue reads p50≈150ms). Show "<AllBelow" instead.
	AllBelow Opt
	// Above is set when some percentiles lie past the highest finite
	// bucket bound (in the +Inf bucket): those from AboveQ up are only
	// known to be over Above, and carry Above as a floor (so a rule
	// comparing p99 with an SLO still sees at least that). Show "> 30s",
	// never "30s" (Past).
	Above  Opt
	AboveQ float64
	// Source is FromLog when the distribution comes from the engine's
	// per-request log lines (exact quantiles, Count requests); see
	// withLog in state_log.go. Empty: from the picture's own source.
	Source Source
	// LogCheck, when set, says how the log's per-request figures compare
	// with the metrics' (a note where they disagree).
	LogCheck string
}

// Point is one sparkline sample; OK=false is a gap (no data). Restart
// marks the gap a new run of the engine starts after.
type Point struct {
	T       time.Time
	V       float64
	OK      bool
	Restart bool
}

func (p Point) at() time.Time { return p.T }

// Series names for sparklines: gauges use their Gauge name, rates and
// latencies the names below.
const (
	SeriesPromptTPS   = "prompt_tokens_per_s"
	SeriesGenTPS      = "generation_tokens_per_s"
	SeriesRequestsPS  = "requests_per_s"
	SeriesPreemptPS   = "preemptions_per_s"
	SeriesPrefixHit   = "prefix_cache_hit_ratio"
	SeriesLatencyMean = "_mean" // suffix: "ttft_mean" is TTFT's per-refresh mean
)

// StoreConfig sizes a Store.
type StoreConfig struct {
	// MaxWindow is the longest window State will be asked for.
	MaxWindow time.Duration
	// Points is how many points each history keeps (sparklines and windows).
	Points int
}

// DefaultStoreConfig covers the TUI's longest window (15 min) at one point a
// second.
var DefaultStoreConfig = StoreConfig{MaxWindow: 15 * time.Minute, Points: 900}

// Store holds the history of every endpoint+model it is fed. It is not safe
// for concurrent use: one owner feeds it and reads it.
type Store struct {
	cfg     StoreConfig
	spacing time.Duration
	series  map[srcKey]*endpointSeries
	keys    []Key
	// byEndpoint holds keys by endpoint, in first-seen order: the core
	// asks an endpoint's keys at every refresh of every endpoint, and
	// reading all of them each time made a fleet's refresh quadratic.
	byEndpoint map[string][]Key
	// changes is, by endpoint, the newest of seq when its history
	// changed (Changes): a number no other change of any endpoint has, so
	// an endpoint forgotten and seen again never reads as unchanged.
	changes map[string]uint64
	// readings is, by endpoint, the newest of seq when what its history
	// reads changed (Readings): as changes, but a sample that reads as the
	// one before it (sameReading) moves changes only.
	readings map[string]uint64
	seq      uint64
	// noReplay adds every sample in full (the tests hold replayPoints
	// equal to it).
	noReplay bool
	replayed int // samples added by replayPoints
}

type srcKey struct {
	Key
	src Source
}

// NewStore returns an empty store.
func NewStore(cfg StoreConfig) *Store {
	if cfg.MaxWindow <= 0 {
		cfg.MaxWindow = DefaultStoreConfig.MaxWindow
	}
	if cfg.Points < 3 {
		cfg.Points = DefaultStoreConfig.Points
	}
	return &Store{
		cfg: cfg,
		// Points−2 gaps between kept points, the newest point being live:
		// the kept points then always span MaxWindow.
		spacing:    cfg.MaxWindow / time.Duration(cfg.Points-2),
		series:     map[srcKey]*endpointSeries{},
		byEndpoint: map[string][]Key{},
		changes:    map[string]uint64{},
		readings:   map[string]uint64{},
	}
}

// Changes moves whenever endpoint's history changes (a sample, a run
// announced, a key forgotten): what a reader derives from the history
// stands while it does not. Zero when the store holds nothing of it. At a fleet's refresh most of what is read
// is unchanged, and working it out again was the refresh's cost.
func (s *Store) Changes(endpoint string) uint64 { return s.changes[endpoint] }

// Readings moves whenever what endpoint's history reads changes: as
// Changes, but not for a sample that reads as the one before it (the same
// numbers, facts and notes at a later time, sameReading). A window-free
// State (windowFree) stands while it does, but for its Time and Samples:
// a steady replica of a fleet reads the same numbers refresh after
// refresh, and what is worked out from them need not be again.
func (s *Store) Readings(endpoint string) uint64 { return s.readings[endpoint] }

// StateMark is the mark k's State follows: Readings when the State is
// window-free (its newest sample decides it, but for Time and Samples),
// Changes otherwise (its windows move with every sample).
func (s *Store) StateMark(k Key) uint64 {
	if s.windowFree(s.pick(k), k) {
		return s.readings[k.Endpoint]
	}
	return s.changes[k.Endpoint]
}

func (s *Store) changed(endpoint string) {
	s.seq++
	s.changes[endpoint] = s.seq
	s.readings[endpoint] = s.seq
}

type endpointSeries struct {
	key      Key
	src      Source
	n        int
	last     Sample
	counters map[Counter]*counterTrack
	finish   map[string]*counterTrack
	hists    map[Latency][]*histTrack
	spark    map[string]*Ring[Point]
	restarts *Ring[time.Time]
	// obs are per-request timings from the log (observations.go).
	obs obsLog
	// runStart is the first sample of the current run; pending is a run
	// boundary announced from outside (the log's start banner): the next
	// sample after it starts a new run.
	runStart, pending time.Time
	// kept is the series' State worked out by Settle while it is window
	// free (Store.windowFree).
	kept keptState
	// spacing is the store's (push)
	spacing time.Duration
	// steadySince is the time of the newest sample added in full (add):
	// the samples after it read as it did (replayPoints), so every point
	// from then on holds its numbers (SteadySince).
	steadySince time.Time
	// replay is the sparkline points the last sample added, in order;
	// replayOK says a sample that reads as it did adds the same again at
	// its own time (replayPoints).
	replay   []sparkPoint
	replayOK bool
}

// sparkPoint is a value pushed onto a sparkline.
type sparkPoint struct {
	name string
	r    *Ring[Point]
	v    Opt
}

// Add feeds one sample. It returns the events the sample reveals: a restart
// (a counter went backwards) or a changed histogram layout.
func (s *Store) Add(sm Sample) []Event {
	if sm.Source == "" {
		sm.Source = FromScrape
	}
	k := srcKey{Key{sm.Endpoint, sm.Model}, sm.Source}
	sm.Derived.prepare() // here, by the owner: State only reads it
	es := s.series[k]
	same := es != nil && es.n > 0 && es.pending.IsZero() && sm.Time.After(es.last.Time) && sameReading(&es.last, &sm)
	if same {
		// the history grew by a point; what it reads did not change
		s.seq++
		s.changes[sm.Endpoint] = s.seq
	} else {
		s.changed(sm.Endpoint) // even out of order: its observations are kept
	}
	if es == nil {
		es = &endpointSeries{
			key:      k.Key,
			src:      k.src,
			counters: map[Counter]*counterTrack{},
			finish:   map[string]*counterTrack{},
			hists:    map[Latency][]*histTrack{},
			spark:    map[string]*Ring[Point]{},
			restarts: NewRing[time.Time](32),
		}
		s.series[k] = es
		if !s.hasKey(k.Key) {
			s.keys = append(s.keys, k.Key)
			s.byEndpoint[k.Endpoint] = append(s.byEndpoint[k.Endpoint], k.Key)
		}
	}
	if es.n > 0 && !sm.Time.After(es.last.Time) {
		// Out of order or duplicate: keep history monotonic. A request's
		// timings are not cumulative, so they are kept all the same
		// (lines stamped in whole seconds share a time).
		if es.pending.IsZero() {
			es.obs.add(sm.Observations)
		}
		return nil
	}
	if same && es.replayOK && !s.noReplay {
		es.replayPoints(sm)
		s.replayed++
		return nil
	}
	return es.add(sm, s.cfg.Points, s.spacing)
}

func (s *Store) hasKey(k Key) bool {
	for _, x := range s.byEndpoint[k.Endpoint] {
		if x == k {
			return true
		}
	}
	return false
}

// Samples is how many samples k's state counts (State(k, …).Samples),
// without working out the state.
func (s *Store) Samples(k Key) int {
	es := s.pick(k)
	if es == nil || !es.pending.IsZero() {
		return 0
	}
	return es.n
}

// Keys lists the endpoint+model pairs seen, in first-seen order.
func (s *Store) Keys() []Key { return append([]Key(nil), s.keys...) }

// Forget drops an endpoint+model's history (an endpoint removed by the user).
func (s *Store) Forget(k Key) {
	s.changed(k.Endpoint)
	delete(s.series, srcKey{k, FromScrape})
	delete(s.series, srcKey{k, FromLog})
	for i, x := range s.keys {
		if x == k {
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
			break
		}
	}
	ks := s.byEndpoint[k.Endpoint]
	for i, x := range ks {
		if x == k {
			ks = append(ks[:i:i], ks[i+1:]...)
			break
		}
	}
	if len(ks) == 0 {
		delete(s.byEndpoint, k.Endpoint)
		delete(s.changes, k.Endpoint) // nothing kept of it: nothing to change
		delete(s.readings, k.Endpoint)
	} else {
		s.byEndpoint[k.Endpoint] = ks
	}
}

func (es *endpointSeries) add(sm Sample, points int, spacing time.Duration) []Event {
	first := es.n == 0
	var events []Event
	evidence := ""
	if !first {
		evidence = es.resetEvidence(sm)
	}
	if external := !first && !es.pending.IsZero() && sm.Time.After(es.pending); evidence != "" || external {
		// A new run: its windows start here, never spanning the old one.
		es.newRun(sm.Time)
		first = true
		if evidence != "" {
			events = append(events, Event{
				Time: sm.Time, Endpoint: sm.Endpoint, Source: string(sm.Source), Kind: KindRestart,
				Severity: SevWarn, Category: "availability",
				Title: "engine restarted: " + evidence,
			})
		}
	}
	if first {
		es.runStart = sm.Time
	}
	es.obs.add(sm.Observations)
	dt := sm.Time.Sub(es.last.Time).Seconds()
	es.replay = es.replay[:0]
	es.spacing = spacing
	spark := func(name string, v Opt) {
		r := es.spark[name]
		if r == nil {
			r = NewRing[Point](points)
			es.spark[name] = r
		}
		es.replay = append(es.replay, sparkPoint{name, r, v})
		es.push(r, Point{T: sm.Time, V: v.V, OK: v.OK})
	}
	for g, v := range sm.Gauges {
		spark(string(g), Some(v))
	}
	incs := map[Counter]float64{}
	for c, v := range sm.Counters {
		t := es.counters[c]
		isFirst := t == nil
		if isFirst {
			t = newCounterTrack(points)
			es.counters[c] = t
		}
		incs[c] = t.observe(sm.Time, v, isFirst, spacing)
	}
	for r, v := range sm.FinishReasons {
		t := es.finish[r]
		isFirst := t == nil
		if isFirst {
			t = newCounterTrack(points)
			es.finish[r] = t
		}
		t.observe(sm.Time, v, isFirst, spacing)
	}
	if !first && dt > 0 {
		rate := func(c Counter) Opt {
			if _, ok := es.counters[c]; !ok {
				return None
			}
			return Some(incs[c] / dt)
		}
		tps := func(c Counter, g Gauge, name string) {
			if v := rate(c); v.OK {
				spark(name, v)
			} else if v, ok := sm.Gauges[g]; ok {
				spark(name, Some(v))
			}
		}
		tps(PromptTokens, PromptTPSGauge, SeriesPromptTPS)
		tps(GenTokens, GenTPSGauge, SeriesGenTPS)
		if v := rate(Requests); v.OK {
			spark(SeriesRequestsPS, v)
		}
		if v := rate(Preemptions); v.OK {
			spark(SeriesPreemptPS, v)
		}
		if _, ok := es.counters[PrefixQueries]; ok {
			q, h := incs[PrefixQueries], incs[PrefixHits]
			if q > 0 {
				spark(SeriesPrefixHit, Some(h/q))
			} else {
				spark(SeriesPrefixHit, None)
			}
		}
	}
	sm.Derived.derivedSparks(spark)
	for l, h := range sm.Latencies {
		parts := h.Parts
		if len(parts) == 0 {
			parts = []Histogram{h}
		}
		tracks := es.hists[l]
		isFirst := len(tracks) != len(parts)
		if isFirst {
			tracks = make([]*histTrack, len(parts))
			for i := range tracks {
				tracks[i] = newHistTrack(points)
			}
			es.hists[l] = tracks
		}
		mean, complete := 0.0, true
		for i, p := range parts {
			if h.Approx != "" {
				p.Approx = h.Approx
			}
			changed, dSum, dCnt := tracks[i].observe(sm.Time, p, isFirst, spacing)
			if changed && i == 0 {
				events = append(events, Event{
					Time: sm.Time, Endpoint: sm.Endpoint, Source: string(sm.Source), Kind: KindBucketsChanged,
					Severity: SevInfo, Category: "config",
					Title: fmt.Sprintf("%s histogram buckets changed (engine upgraded?): window restarted", l),
				})
			}
			if dCnt > 0 {
				mean += dSum / dCnt
			} else {
				complete = false
			}
		}
		if !isFirst {
			m := None
			if complete {
				m = Some(mean)
			}
			spark(meanSeries(l), m)
		}
	}
	es.last = sm
	es.n++
	es.steadySince = sm.Time
	// Without cumulative values, what a sample adds to the sparklines is
	// its numbers (the rates are its gauges' or its evaluator's): the next
	// one that reads the same adds the same points. A run's first sample
	// adds fewer (no rate yet) than the next.
	es.replayOK = !first && len(sm.Counters) == 0 && len(sm.FinishReasons) == 0 && len(sm.Latencies) == 0 &&
		len(sm.Observations) == 0
	if es.replayOK {
		// in the order of their names, not of the sample's maps: the
		// store's state is the same however it was fed (a replay's seek
		// compares it); one series pushed twice keeps its two in order
		slices.SortStableFunc(es.replay, func(a, b sparkPoint) int { return strings.Compare(a.name, b.name) })
	} else {
		es.replay = es.replay[:0]
	}
	return events
}

// push adds p to r, thinned to the store's spacing; a restart mark stays.
func (es *endpointSeries) push(r *Ring[Point], p Point) {
	if last, ok := r.Last(); ok && last.Restart {
		r.Push(p) // the restart mark stays
		return
	}
	pushSpaced(r, p, es.spacing)
}

// replayPoints adds sm, which reads as the sample before it (sameReading)
// and follows it in the same run, by pushing the points the one before
// added, at sm's time: what add would push, without reading the sample's
// maps again (a steady fleet's refresh is mostly such samples:
// TestReplayedPointsEqualAddingInFull).
func (es *endpointSeries) replayPoints(sm Sample) {
	for _, p := range es.replay {
		es.push(p.r, Point{T: sm.Time, V: p.v.V, OK: p.v.OK})
	}
	es.last = sm
	es.n++
}

// SteadySince is a time since which every sample of k read as the newest
// (zero when none is known): the points a sample pushes once onto a
// sparkline (a gauge's) hold the newest numbers from then on, so a window
// that starts no earlier reads the same value at both ends
// (TestReplayedPointsEqualAddingInFull, steadyHolds). It is the newest sample that
// was added in full rather than replayed.
func (s *Store) SteadySince(k Key) time.Time {
	es := s.pick(k)
	if es == nil || !es.pending.IsZero() {
		return time.Time{}
	}
	return es.steadySince
}

// LastPoint is a sparkline's newest point; false when it has none.
func (s *Store) LastPoint(k Key, name string) (Point, bool) {
	es := s.pick(k)
	if es == nil {
		return Point{}, false
	}
	r := es.spark[name]
	if r == nil {
		return Point{}, false
	}
	return r.Last()
}

// Series returns a sparkline's points, oldest first; nil when unknown.
func (s *Store) Series(k Key, name string) []Point {
	es := s.pick(k)
	if es == nil {
		return nil
	}
	r := es.spark[name]
	if r == nil {
		return nil
	}
	return r.Slice()
}

// SeriesSince returns a sparkline's points newer than since.
func (s *Store) SeriesSince(k Key, name string, since time.Time) []Point {
	return s.AppendSeries(nil, k, name, since)
}

// AppendSeries appends a sparkline's points newer than since to dst and
// returns it: a renderer that keeps dst between frames allocates nothing.
func (s *Store) AppendSeries(dst []Point, k Key, name string, since time.Time) []Point {
	es := s.pick(k)
	if es == nil {
		return dst
	}
	return appendSince(dst, es.spark[name], since)
}

// appendSince appends r's points after since (none when r is nil).
func appendSince(dst []Point, r *Ring[Point], since time.Time) []Point {
	if r == nil {
		return dst
	}
	// found from the end: the points are appended anyway, and a reader
	// mostly asks for the newest few (a binary search read a fleet's
	// every ring at eight places)
	n := r.Len()
	i := n
	for i > 0 && r.At(i-1).T.After(since) {
		i--
	}
	for ; i < n; i++ {
		dst = append(dst, r.At(i))
	}
	return dst
}

// meanSeries is a latency's per-refresh mean sparkline ("ttft_mean"),
// its name made once for the known latencies (every sample of every
// replica names them).
func meanSeries(l Latency) string {
	if n, ok := meanSeriesNames[l]; ok {
		return n
	}
	return string(l) + SeriesLatencyMean
}

var meanSeriesNames = func() map[Latency]string {
	m := make(map[Latency]string, len(Latencies))
	for _, l := range Latencies {
		m[l] = string(l) + SeriesLatencyMean
	}
	return m
}()

// pick prefers scraped data over log-derived data for the same key.
func (s *Store) pick(k Key) *endpointSeries {
	sc := s.series[srcKey{k, FromScrape}]
	if sc != nil && sc.hasMetrics() {
		return sc
	}
	// No scrape, or one without a single number (Ollama answers with its
	// loaded models only): the log's stats lines are the numbers there are.
	// A log's samples carry no model name, so the nameless key is tried too.
	if lg := s.series[srcKey{k, FromLog}]; lg != nil {
		return lg
	}
	if k.Model != "" && sc != nil {
		if lg := s.series[srcKey{Key{Endpoint: k.Endpoint}, FromLog}]; lg != nil {
			return lg
		}
	}
	return sc
}

// hasMetrics reports whether the series ever carried a number: a gauge in
// its newest sample, a counter or a histogram.
func (es *endpointSeries) hasMetrics() bool {
	return len(es.last.Gauges) > 0 || len(es.counters) > 0 || len(es.hists) > 0 || len(es.finish) > 0
}

// HasSource reports whether data from src exists for k.
func (s *Store) HasSource(k Key, src Source) bool { return s.series[srcKey{k, src}] != nil }
