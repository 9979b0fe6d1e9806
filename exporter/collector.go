package exporter

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Collector serves the newest published View. Publish and Collect may run
// on different goroutines.
type Collector struct {
	view    atomic.Pointer[View]
	version string

	// titles keeps each open finding's title as it read when first
	// served: a title quotes numbers that change every refresh, and a
	// label that changes starts a new series (and resets an alert joined
	// on it).
	mu     sync.Mutex
	titles map[string]string
}

// New returns a Collector with nothing published yet; version is llmtop's
// (llmtop_build_info).
func New(version string) *Collector { return &Collector{version: version} }

// Publish makes v the view scrapes read. v must not change afterwards.
func (c *Collector) Publish(v *View) { c.view.Store(v) }

// Describe sends every family's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect writes the newest view's series. Before the first refresh only
// llmtop_build_info is there: nothing is known yet, so nothing is claimed.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch, seen: map[seriesKey]bool{}}
	e.gauge(dBuildInfo, 1, labelValue(c.version))
	v := c.view.Load()
	if v == nil {
		return
	}
	window := windowLabel(v.Window)
	e.gauge(dLastRefresh, float64(v.Time.UnixNano())/1e9)
	e.counter(dEvaluations, float64(v.Evaluations))
	for _, ep := range v.Endpoints {
		e.endpoint(ep)
	}
	for _, s := range v.Series {
		e.series(s, window)
	}
	e.findings(v, c.stableTitles())
	e.notChecked(v.NotChecked)
}

// notChecked counts the checks not made by why (diagnosis.MissingReason):
// a line names endpoints, paths and what outside text said, so it never
// becomes a label; the reasons are a fixed few.
func (e *emitter) notChecked(lines []string) {
	if len(lines) == 0 {
		return
	}
	n := map[string]int{}
	for _, l := range lines {
		n[diagnosis.MissingReason(l)]++
	}
	for _, r := range diagnosis.MissingReasons {
		if n[r.Code] > 0 {
			e.gauge(dNotChecked, float64(n[r.Code]), r.Code)
		}
	}
}

// emitter writes const metrics, dropping a second series with the same
// labels (two outside names can clean or cut to one value): a registry
// refuses a whole scrape over a duplicate.
type emitter struct {
	ch   chan<- prometheus.Metric
	seen map[seriesKey]bool
}

type seriesKey struct {
	d      *prometheus.Desc
	labels string
}

func (e *emitter) emit(d *prometheus.Desc, t prometheus.ValueType, v float64, lv ...string) {
	key := seriesKey{d, strings.Join(lv, "\xff")}
	if e.seen[key] {
		return
	}
	m, err := prometheus.NewConstMetric(d, t, v, lv...)
	if err != nil {
		return // an invalid label value: leave the series out rather than fail the scrape
	}
	e.seen[key] = true
	e.ch <- m
}

func (e *emitter) gauge(d *prometheus.Desc, v float64, lv ...string) {
	e.emit(d, prometheus.GaugeValue, v, lv...)
}

func (e *emitter) counter(d *prometheus.Desc, v float64, lv ...string) {
	e.emit(d, prometheus.CounterValue, v, lv...)
}

// opt writes a present value and leaves an absent one out.
func (e *emitter) opt(d *prometheus.Desc, o model.Opt, lv ...string) {
	if o.OK {
		e.gauge(d, o.V, lv...)
	}
}

func (e *emitter) endpoint(ep Endpoint) {
	id := endpointLabel(ep.URL)
	eng := labelValue(string(ep.Engine))
	sim := "false"
	if ep.Simulated {
		sim = "true"
	}
	e.gauge(dEndpointInfo, 1, id, eng, labelValue(ep.Version), sim)
	for _, st := range lifecycles {
		v := 0.0
		if st == ep.State {
			v = 1
		}
		e.gauge(dEndpointState, v, id, string(st))
	}
	if ep.Scrapes == 0 {
		return // not scraped yet: up is unknown, not 0
	}
	up := 0.0
	if ep.Up {
		up = 1
	}
	e.gauge(dEndpointUp, up, id, eng)
	if ep.ErrKind != model.ErrNone {
		e.gauge(dScrapeError, 1, id, labelValue(string(ep.ErrKind)))
	}
	if !ep.LastOK.IsZero() {
		e.gauge(dLastSuccess, float64(ep.LastOK.UnixNano())/1e9, id)
	}
}

func (e *emitter) series(s Series, window string) {
	lv := []string{endpointLabel(s.Endpoint), labelValue(string(s.Engine)), labelValue(s.Model)}
	m := s.Metrics
	e.opt(dRunning, m.Running, lv...)
	e.opt(dWaiting, m.Waiting, lv...)
	e.opt(dKVUsage, m.KVCacheUsageRatio, lv...)
	e.opt(dKVUsageMax, m.KVCacheUsageRatioMax, lv...)
	e.opt(dKVCapacity, m.KVCapacityTokens, lv...)
	wl := append(lv[:3:3], window)
	e.opt(dPrefixHit, m.PrefixCacheHitRatio, wl...)
	e.opt(dPreemptPS, m.PreemptionsPerS, wl...)
	e.opt(dPromptTPS, m.PromptTokensPerS, wl...)
	e.opt(dGenTPS, m.GenerationTokensPerS, wl...)
	e.opt(dRequestsPS, m.RequestsPerS, wl...)
	e.opt(dSpecAccept, m.SpecDecodeAcceptance, wl...)
	if m.WindowS > 0 {
		e.gauge(dWindowCovered, m.WindowS, wl...)
	}
	for _, l := range latencies {
		e.dist(l, l.get(&m), wl)
	}
}

// dist writes one latency's percentiles (estimates from the engine's
// histogram buckets when estimate="true"), mean and observation count, in
// seconds; each only when the engine gave it.
func (e *emitter) dist(l latency, d model.DistJSON, wl []string) {
	est := "false"
	if d.Estimate {
		est = "true"
	}
	for _, p := range []struct {
		name string
		v    model.Opt
	}{{"50", d.P50}, {"90", d.P90}, {"99", d.P99}} {
		e.opt(l.pct, p.v.Scale(1e-3), append(wl[:4:4], p.name, est)...)
	}
	e.opt(l.mean, d.Mean.Scale(1e-3), wl...)
	e.opt(l.count, d.Count, wl...)
}

// stableTitles returns a function giving the title and action a finding (key: its
// endpoint, id and opening time) was first served with, and forgets the
// findings the newest view no longer has open.
func (c *Collector) stableTitles() func(key, title string) string {
	c.mu.Lock()
	old := c.titles
	c.titles = map[string]string{}
	c.mu.Unlock()
	return func(key, title string) string {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t, ok := old[key]; ok {
			title = t
		}
		c.titles[key] = title
		return title
	}
}
