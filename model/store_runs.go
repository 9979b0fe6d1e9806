package model

import (
	"fmt"
	"sort"
	"time"
)

// A Store's windows never span two runs of an engine: a run boundary (a
// cumulative value went back, the process start time changed, or StartRun
// from the log's banner) restarts the tracks, and the sparklines keep a
// restart mark.

// newRun starts a new run at t: the cumulative tracks start again (so no
// window spans the two runs) and every sparkline gets a restart mark.
func (es *endpointSeries) newRun(t time.Time) {
	es.restarts.Push(t)
	clear(es.counters)
	clear(es.finish)
	clear(es.hists)
	es.obs.reset()
	for _, r := range es.spark {
		r.Push(Point{T: t.Add(-time.Nanosecond), Restart: true})
	}
	es.pending = time.Time{}
}

// resetEvidence says why sm belongs to a new run of the engine: a
// cumulative value went backwards, or the process start time changed; ""
// when it does not.
func (es *endpointSeries) resetEvidence(sm Sample) string {
	if a, b := es.last.Started, sm.Started; !a.IsZero() && !b.IsZero() && absDur(b.Sub(a)) > time.Second {
		return "process start time " + a.UTC().Format("15:04:05") + " → " + b.UTC().Format("15:04:05")
	}
	for c, v := range sm.Counters {
		if t := es.counters[c]; t != nil && v < t.raw {
			return fmt.Sprintf("counters went back: %s %g → %g", c, t.raw, v)
		}
	}
	for l, h := range sm.Latencies {
		if prev, ok := es.last.Latencies[l]; ok && len(h.Parts) == 0 && h.Count < prev.Count {
			return fmt.Sprintf("counters went back: %s count %g → %g", l, prev.Count, h.Count)
		}
	}
	for r, v := range sm.FinishReasons {
		if t := es.finish[r]; t != nil && v < t.raw {
			return fmt.Sprintf("counters went back: finished{%s} %g → %g", r, t.raw, v)
		}
	}
	return ""
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// StartRun announces a new run of endpoint's engine at t (its log printed a
// start banner): every series of the endpoint whose newest sample is older
// starts a new run with its next sample, and until then has no state (its
// numbers belong to the run that ended).
func (s *Store) StartRun(endpoint string, t time.Time) {
	if _, ok := s.byEndpoint[endpoint]; ok { // nothing held of it: nothing changes
		s.changed(endpoint)
	}
	for k, es := range s.series {
		if k.Endpoint == endpoint && es.n > 0 && !es.last.Time.After(t) {
			es.pending = t
		}
	}
}

// RunSeries returns a sparkline's points in the current run only (the
// evidence the diagnosis reads never spans two runs).
func (s *Store) RunSeries(k Key, name string) []Point {
	return s.AppendRunSeries(nil, k, name)
}

// AppendRunSeries appends the current run's points of a sparkline to dst
// (a caller that keeps dst between reads allocates nothing).
func (s *Store) AppendRunSeries(dst []Point, k Key, name string) []Point {
	es := s.pick(k)
	if es == nil {
		return dst
	}
	return s.AppendSeries(dst, k, name, es.runStart.Add(-time.Nanosecond))
}

// RunSeriesEnds returns the first and the last known point of a
// sparkline within [from, to] in the current run: what scanning
// AppendRunSeries for them gives, found by binary search instead of a copy
// of the run (a run summary asks every refresh over the store's whole
// window).
func (s *Store) RunSeriesEnds(k Key, name string, from, to time.Time) (first, last Opt) {
	es := s.pick(k)
	if es == nil {
		return None, None
	}
	r := es.spark[name]
	if r == nil {
		return None, None
	}
	if !es.runStart.IsZero() && es.runStart.After(from) {
		from = es.runStart
	}
	n := r.Len()
	lo := sort.Search(n, func(i int) bool { return !r.At(i).T.Before(from) })
	hi := sort.Search(n, func(i int) bool { return r.At(i).T.After(to) })
	for i := lo; i < hi; i++ {
		if p := r.At(i); p.OK {
			first = Some(p.V)
			break
		}
	}
	for i := hi - 1; i >= lo; i-- {
		if p := r.At(i); p.OK {
			last = Some(p.V)
			break
		}
	}
	return first, last
}

// RunCursor follows one sparkline's points in the current run from read
// to read (Store.FollowRunSeries): a read copies only what changed since
// the one before, so a fleet's refresh reads each replica's new point,
// not its whole history again.
type RunCursor struct {
	// Points are the run's points, oldest first: what AppendRunSeries
	// returns. Valid until the next read.
	Points []Point
	ring   *Ring[Point]
	run    time.Time
	// es and name are what ring was found under (a series' rings are
	// never replaced); pushes and held the ring's Push count and length
	// at the read before.
	es     *endpointSeries
	name   string
	pushes uint64
	held   int
}

// FollowRunSeries brings c up to date with k's sparkline name in the
// current run. Points before changed are as they were at the read before
// (none dropped from the middle, none changed); from changed on they may
// differ. changed is the zero time when c was rebuilt whole (a new run,
// another series, the first read).
//
// A ring only ever overwrites its newest point (a refresh within the
// spacing) and pushes newer ones, dropping the oldest: every point but
// the newest read last time stands, unless the ring has let it go.
func (s *Store) FollowRunSeries(c *RunCursor, k Key, name string) (changed time.Time) {
	es := s.pick(k)
	var r *Ring[Point]
	switch {
	case es == nil:
	case es == c.es && c.ring != nil && name == c.name:
		r = c.ring // the ring found before: not looked up again
	default:
		r = es.spark[name]
	}
	if r == nil {
		c.Points, c.ring, c.run, c.es = c.Points[:0], nil, time.Time{}, nil
		return time.Time{}
	}
	since := es.runStart.Add(-time.Nanosecond)
	n := len(c.Points)
	if r != c.ring || !es.runStart.Equal(c.run) || n == 0 {
		c.ring, c.run, c.es, c.name = r, es.runStart, es, name
		c.Points = appendSince(c.Points[:0], r, since)
		c.pushes, c.held = r.pushes, r.Len()
		return time.Time{}
	}
	// The newest point read last time may have been overwritten since:
	// read again from it on.
	changed = c.Points[n-1].T
	kept := c.Points[:n-1]
	if len(kept) > 0 {
		since = kept[len(kept)-1].T
	}
	// Points the ring let go, sliced off (not moved: the slice's next
	// growth copies only the points kept): counted from its pushes since,
	// first those before the run (c.Points are the ring's newest).
	if gone := int(r.pushes-c.pushes) + c.held - r.Cap(); gone > 0 {
		if gone -= c.held - n; gone > 0 {
			kept = kept[min(gone, len(kept)):]
		}
	}
	// The points after since are the newest few: found from the end.
	i := r.Len()
	for i > 0 && r.At(i-1).T.After(since) {
		i--
	}
	for ; i < r.Len(); i++ {
		kept = append(kept, r.At(i))
	}
	c.Points = kept
	c.pushes, c.held = r.pushes, r.Len()
	return changed
}
