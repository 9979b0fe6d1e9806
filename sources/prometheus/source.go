// Package prometheus reads a fleet of inference engines through the
// Prometheus that already scrapes them: it finds every engine target by its
// metric names and reads the whole fleet's state with a fixed handful of
// PromQL queries per refresh (gauges as instant queries, rate() and
// histogram_quantile() over the window, evaluated by Prometheus), whatever
// the fleet's size. It delivers the same model.Scrape messages an engine
// poller does, plus a model.Origin per endpoint naming it and what
// Prometheus cannot give.
package prometheus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/api"

	"github.com/llmtop/llmtop/model"
)

// Source reads one Prometheus server. Refresh is not safe for concurrent
// use; SetWindow and SetInterval are.
type Source struct {
	cfg      Config
	client   api.Client
	http     *http.Client
	window   atomic.Int64
	interval atomic.Int64
	targets  map[tkey]*target
	order    []tkey
	// fleet is the fleet as the last refresh read it, kept to read the
	// next (fleet.go); upOf is up{}'s answer by target.
	fleet    *fleet
	upOf     map[tkey]float64
	followed followed
	// built are the queries for the window, forms each query as the
	// field of a form (queryAll).
	built *queries
	forms map[string]string
	// decoders are the queries' decoders, one per query of a refresh,
	// kept from refresh to refresh (their buffers and interned labels).
	decoders []*decoder
}

type tkey struct{ job, instance string }

type target struct {
	id, name string
	labels   map[string]string
	engine   model.Engine
	gone     bool
	goneAt   time.Time
	sent     bool // its Origin was sent
}

// Refresh is what one refresh found: the messages for the core (Origins
// first, then Scrapes), the error that stopped part or all of it, and
// what it cost.
type Refresh struct {
	Time     time.Time
	Msgs     []model.Input
	Err      string
	Warnings []string
	Queries  int
	Took     time.Duration
	// Targets counts the engine targets found, Gone those that left.
	Targets, Gone int
}

// New checks cfg and returns a Source; nothing is read yet.
func New(cfg Config) (*Source, error) {
	cfg, err := cfg.check()
	if err != nil {
		return nil, err
	}
	c, hc, err := newClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("--prometheus %s: %v", model.RedactURL(cfg.URL), err)
	}
	s := &Source{cfg: cfg, client: c, http: hc, targets: map[tkey]*target{}, upOf: map[tkey]float64{}, forms: map[string]string{}}
	s.fleet = newFleet(s.targets)
	s.window.Store(int64(cfg.Window))
	s.interval.Store(int64(cfg.Interval))
	return s, nil
}

// URL is the server's URL, fit to print.
func (s *Source) URL() string { return model.RedactURL(s.cfg.URL) }

// SetWindow changes the window of rate() and histogram_quantile() from the
// next refresh on.
func (s *Source) SetWindow(w time.Duration) {
	if w > 0 {
		s.window.Store(int64(w))
	}
}

// SetInterval changes the time between refreshes.
func (s *Source) SetInterval(d time.Duration) {
	if d > 0 {
		s.interval.Store(int64(d))
	}
}

// Run refreshes every interval until ctx ends, handing each refresh to
// deliver.
func (s *Source) Run(ctx context.Context, deliver func(Refresh)) {
	for {
		deliver(s.Refresh(ctx, time.Now()))
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(s.interval.Load())):
		}
	}
}

type answer struct {
	vec  []sampleRow
	warn []string
	err  error
}

// Refresh reads the fleet once at now.
func (s *Source) Refresh(ctx context.Context, now time.Time) Refresh {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	w := time.Duration(s.window.Load())
	r := Refresh{Time: now}
	built := s.queriesFor(w)
	// Round one: every family's state, and up{}.
	qs := append(make([]string, 0, len(families)+1), built.state...)
	// up{} for the jobs engine targets were seen in: none before the first
	// refresh found any (and then nothing is known to be down or gone).
	jobs := s.knownJobs()
	if len(jobs) > 0 {
		qs = append(qs, upQuery(s.cfg.Match, jobs))
	}
	lim := s.newLimits()
	first := s.queryAll(ctx, qs, 0, now, lim, len(families))
	if len(jobs) == 0 {
		first = append(first, answer{})
	}
	// Round two: the latencies of the families found.
	var lq []string
	var lfam []int
	for i, f := range families {
		if first[i].err == nil && len(first[i].vec) > 0 && len(f.hists) > 0 {
			lq = append(lq, built.latency[i])
			lfam = append(lfam, i)
		}
	}
	// The routers' own word, in the same round (routers.go).
	lq = append(lq, built.router)
	second := s.queryAll(ctx, lq, len(qs), now, lim, -1)
	r.Queries = len(qs) + len(lq)

	fl := s.fleet
	fl.begin(w)
	defer fl.end()
	var errs []string
	for i, a := range first[:len(families)] {
		r.Warnings = append(r.Warnings, a.warn...)
		if a.err != nil {
			errs = append(errs, s.explain(a.err))
			continue
		}
		fl.addState(&families[i], a.vec)
	}
	routers := second[len(second)-1]
	second = second[:len(second)-1]
	r.Warnings = append(r.Warnings, routers.warn...)
	if routers.err != nil {
		errs = append(errs, "routers: "+s.explain(routers.err))
	} else {
		fl.addRouters(routers.vec)
	}
	for j, a := range second {
		r.Warnings = append(r.Warnings, a.warn...)
		if a.err != nil {
			errs = append(errs, fmt.Sprintf("%s latencies: %s", families[lfam[j]].engine, s.explain(a.err)))
			continue
		}
		fl.addLatency(&families[lfam[j]], a.vec)
	}
	up := first[len(families)]
	if up.err != nil {
		errs = append(errs, s.explain(up.err))
	}
	r.Err = strings.Join(dedupe(errs), "; ")
	r.Warnings = append(dedupe(r.Warnings), lim.notes()...)
	if fl.overModels > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d series dropped: over %d models on a target or %d in the fleet", fl.overModels, maxModels, maxFleetModels))
	}
	s.messages(&r, fl, up, now)
	r.Took = time.Since(start)
	return r
}

// queries are the queries of a refresh over a window, written once for it
// (they change only with the window): each family's state and latency
// query, and the routers'.
type queries struct {
	window         string
	state, latency []string
	router         string
}

func (s *Source) queriesFor(w time.Duration) *queries {
	win := promDuration(w)
	if q := s.built; q != nil && q.window == win {
		return q
	}
	q := &queries{window: win, router: routerQuery(s.cfg.Match, win)}
	for _, f := range families {
		b := builder{f: f, match: s.cfg.Match, window: win}
		q.state = append(q.state, b.stateQuery())
		lat := ""
		if len(f.hists) > 0 {
			lat = b.latencyQuery()
		}
		q.latency = append(q.latency, lat)
	}
	s.built = q
	return q
}

// queryAll runs the queries at once and returns their answers in order;
// the one at index up is up{} (whose rows only tell of targets already
// admitted). Query i reads with decoder slot+i; the answers' rows are
// those decoders' until the next refresh.
func (s *Source) queryAll(ctx context.Context, qs []string, slot int, now time.Time, lim *refreshLimits, up int) []answer {
	for len(s.decoders) < slot+len(qs) {
		s.decoders = append(s.decoders, newDecoder())
	}
	// The queries as a form's field, escaped once while they stay the same.
	if len(s.forms) > 4*len(families)+16 {
		clear(s.forms)
	}
	forms := make([]string, len(qs))
	for i, q := range qs {
		f, ok := s.forms[q]
		if !ok {
			f = "query=" + url.QueryEscape(q)
			s.forms[q] = f
		}
		forms[i] = f
	}
	out := make([]answer, len(qs))
	var wg sync.WaitGroup
	for i := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows, warn, err := s.query(ctx, s.decoders[slot+i], forms[i], now, lim, i == up)
			out[i] = answer{vec: rows, warn: cleanWarnings(warn), err: err}
		}()
	}
	wg.Wait()
	return out
}

// knownJobs are the jobs of the targets found so far, sorted.
func (s *Source) knownJobs() []string {
	seen := map[string]bool{}
	var out []string
	for k := range s.targets {
		if !seen[k.job] {
			seen[k.job] = true
			out = append(out, k.job)
		}
	}
	sort.Strings(out)
	return out
}

func cleanWarnings(w []string) []string {
	out := make([]string, 0, len(w))
	for _, x := range w {
		out = append(out, "Prometheus warns: "+model.RedactText(x))
	}
	return out
}

func dedupe(errs []string) []string {
	seen := map[string]bool{}
	var keep []string
	for _, e := range errs {
		if !seen[e] {
			seen[e] = true
			keep = append(keep, e)
		}
	}
	return keep
}
