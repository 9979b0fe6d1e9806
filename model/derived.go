package model

import (
	"strconv"
	"time"
)

// Derived is what an outside evaluator (Prometheus) has already computed
// over its own window: rates and latency distributions that the Store
// cannot compute from cumulative samples because it never saw them. A
// sample that carries one has no counters or histograms of its own; the
// Store shows these values as they are, labelled with their window and
// evaluator, and never mixes them with values it computed itself.
type Derived struct {
	// By names the evaluator ("prometheus"), shown next to the numbers.
	By string
	// Window is the span the evaluator's rate() and histogram_quantile()
	// covered.
	Window time.Duration
	// Rates are per-second rates over Window (PromptTokens, GenTokens,
	// Requests, Preemptions, RequestErrors).
	Rates map[Counter]float64
	// Ratios are ratios over Window (PrefixHit, SpecAccept by their
	// Gauge names PrefixHitGauge and SpecAcceptGauge).
	Ratios map[Gauge]float64
	// Latency are the distributions over Window.
	Latency map[Latency]Dist

	// note is the label and latency the distributions as a State shows
	// them (window, exposed, labelled), built once: State is read many
	// times per refresh.
	note    string
	latency map[Latency]Dist
}

// Label says who computed the numbers over which window ("prometheus, 5m").
func (d *Derived) Label() string {
	w := d.Window.String()
	if m := d.Window / time.Minute; d.Window%time.Minute == 0 && m > 0 {
		w = strconv.Itoa(int(m)) + "m"
	}
	return d.By + " over " + w
}

// applyTo overlays the derived values on a state built from the sample's
// gauges: a rate or distribution the evaluator returned wins; one it did
// not return stays unknown (the state had none: no counters were fed).
func (d *Derived) applyTo(st *State) {
	if d == nil {
		return
	}
	note, latency := d.note, d.latency
	if note == "" {
		// not added through a Store (which prepares it): worked out for
		// this read only, a read writes nothing
		note, latency = d.prepared()
	}
	rate := func(c Counter, dst *Opt) {
		if v, ok := d.Rates[c]; ok {
			*dst = Some(v)
			st.RateWindow = d.Window
		}
	}
	rate(PromptTokens, &st.PromptTPS)
	rate(GenTokens, &st.GenTPS)
	rate(Requests, &st.RequestsPS)
	rate(Preemptions, &st.PreemptionsPS)
	rate(RequestErrors, &st.ErrorsPS)
	if v, ok := d.Rates[Preemptions]; ok {
		st.Preemptions = Some(v * d.Window.Seconds())
	}
	if v, ok := d.Ratios[PrefixHitGauge]; ok {
		st.PrefixHit = Some(v)
	}
	if v, ok := d.Ratios[SpecAcceptGauge]; ok {
		st.SpecAccept = Some(v)
	}
	if len(st.Latency) == 0 {
		// The map built once, shared by every State read from this
		// sample (State.Latency is read-only): a Dist is stored
		// apart in a map, and a map per State was an allocation per
		// latency per replica per read.
		st.Latency = latency
	} else {
		for l, dist := range latency {
			st.Latency[l] = dist
		}
	}
	st.Notes = append(st.Notes, note)
}

// prepare builds the label and the distributions as a State shows them,
// once, as the sample is added to a Store (its owner's write): State is
// read many times per refresh, by readers that write nothing.
func (d *Derived) prepare() {
	if d != nil && d.note == "" {
		d.note, d.latency = d.prepared()
	}
}

// prepared is what prepare keeps.
func (d *Derived) prepared() (string, map[Latency]Dist) {
	approx := "evaluated by " + d.Label()
	latency := make(map[Latency]Dist, len(d.Latency))
	for l, dist := range d.Latency {
		dist.Window = d.Window
		dist.Exposed = true
		if dist.Approx == "" {
			dist.Approx = approx
		}
		latency[l] = dist
	}
	return "rates and percentiles evaluated by " + d.Label() + " (PromQL rate() and histogram_quantile())", latency
}

var derivedRateSeries = []struct {
	c    Counter
	name string
}{{PromptTokens, SeriesPromptTPS}, {GenTokens, SeriesGenTPS}, {Requests, SeriesRequestsPS}, {Preemptions, SeriesPreemptPS}}

// derivedSparks are the sparkline points a derived sample adds: the same
// series names the Store draws from its own counters and histograms.
func (d *Derived) derivedSparks(spark func(name string, v Opt)) {
	if d == nil {
		return
	}
	for _, r := range derivedRateSeries {
		if v, ok := d.Rates[r.c]; ok {
			spark(r.name, Some(v))
		}
	}
	if v, ok := d.Ratios[PrefixHitGauge]; ok {
		spark(SeriesPrefixHit, Some(v))
	}
	for l, dist := range d.Latency {
		spark(meanSeries(l), dist.Mean)
	}
}

// KeysOf lists the endpoint's keys in first-seen order, from an index by
// endpoint: the core asks this per endpoint per scrape, and reading every
// key of a 2 000-endpoint fleet each time made a refresh quadratic.
func (s *Store) KeysOf(endpoint string) []Key {
	return s.AppendKeysOf(nil, endpoint)
}

// AppendKeysOf is KeysOf appending to dst.
func (s *Store) AppendKeysOf(dst []Key, endpoint string) []Key {
	return append(dst, s.byEndpoint[endpoint]...)
}
