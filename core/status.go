package core

import (
	"time"

	"github.com/llmtop/llmtop/model"
)

// Status is an endpoint's state in one word, computed here once for every
// face: the screen's badge, diagnose's "answered" and exit status 3,
// snapshot's, and the exporter's llmtop_endpoint_up read it.
type Status string

// The statuses, worst first after the two that precede any answer.
const (
	StatusWaiting   Status = "WAITING"   // not scraped yet
	StatusStarting  Status = "STARTING"  // the log or the health route shows a start
	StatusCrashed   Status = "CRASHED"   // nothing answers, after a crash
	StatusStopped   Status = "STOPPED"   // nothing answers, after a clean shutdown
	StatusDown      Status = "DOWN"      // nothing answers
	StatusDegraded  Status = "DEGRADED"  // metrics unreadable, or the health route not up
	StatusRouter    Status = "ROUTER"    // a serving layer in front of engines that answers (its metrics are not an engine's)
	StatusStale     Status = "STALE"     // no scrape for longer than the face allows
	StatusRestarted Status = "RESTARTED" // a new run, recently
	StatusUp        Status = "UP"
	StatusGone      Status = "GONE" // left the source that read it (model.Origin): judged by no rule
)

// Status judges e at now. staleAfter is how long without a scrape reads
// STALE (0: never, as in a paused screen or a one-shot snapshot); recent
// is how long a new run reads RESTARTED (the window). A restart is news
// only while nothing worse holds: it never masks DOWN, DEGRADED or STALE.
func (e *Endpoint) Status(now time.Time, staleAfter, recent time.Duration) Status {
	if e == nil || e.Scrapes == 0 {
		if e != nil && e.Life == model.LifeStarting {
			return StatusStarting
		}
		return StatusWaiting
	}
	switch {
	case e.Life == model.LifeGone:
		return StatusGone
	case e.Life == model.LifeStarting:
		return StatusStarting
	case e.Down() && e.Life == model.LifeCrashed:
		return StatusCrashed
	case e.Down() && (e.Life == model.LifeStopped || e.Life == model.LifeStopping):
		return StatusStopped
	case e.Down():
		return StatusDown
	case e.Err != "" || (e.Identity.Health != model.HealthUp && e.Identity.Health != model.HealthUnknown && e.Identity.Health != ""):
		if e.Identity.Layer != "" {
			// a router's "not an engine" scrape error is what it is, as
			// the fleet calls it, not a fault
			return StatusRouter
		}
		return StatusDegraded
	case e.Stale(now, staleAfter):
		return StatusStale
	}
	if r := e.Current(); r != nil && r.N > 1 && now.Sub(r.Started) < recent {
		return StatusRestarted
	}
	return StatusUp
}

// StatusOf is url's status at the core's clock for a face that reads
// once (diagnose, snapshot): never STALE, RESTARTED for a run younger
// than the window; the screen asks Endpoint.Status with its own staleness.
func (m *Monitor) StatusOf(url string) Status {
	return m.eps[url].Status(m.now, 0, m.opts.Window)
}

// StatusTurns is the first moment after now at which Status, asked with
// the same staleAfter and recent, may answer differently with nothing but
// the clock moved (zero: not by the clock): where a scrape turns STALE and
// where a new run stops reading RESTARTED. A face that keeps what it drew
// from Status draws it again then.
func (e *Endpoint) StatusTurns(now time.Time, staleAfter, recent time.Duration) time.Time {
	var at time.Time
	if e == nil || e.Scrapes == 0 {
		return at
	}
	if stale := e.Last.Add(staleAfter + 1); staleAfter > 0 && !e.Last.IsZero() && now.Before(stale) {
		at = stale
	}
	if r := e.Current(); r != nil && r.N > 1 && now.Before(r.Started.Add(recent)) {
		if end := r.Started.Add(recent); at.IsZero() || end.Before(at) {
			at = end
		}
	}
	return at
}

// Stale reports whether e has had no scrape for longer than staleAfter (0:
// never stale).
func (e *Endpoint) Stale(now time.Time, staleAfter time.Duration) bool {
	return e != nil && staleAfter > 0 && !e.Last.IsZero() && now.Sub(e.Last) > staleAfter
}

// Answered reports whether anything answered at the endpoint: a scrape with
// metrics, a failure that is not "down" (401, 404, 5xx, a bad or stalled
// body, a redirect), or a health route that is neither down nor unknown.
func (e *Endpoint) Answered() bool {
	if e == nil {
		return false
	}
	h := e.Identity.Health
	return !e.LastOK.IsZero() || (e.ErrKind != model.ErrNone && !downKind(e.ErrKind)) ||
		(h != "" && h != model.HealthDown && h != model.HealthUnknown)
}

// Up reports whether the newest scrape gave metrics.
func (e *Endpoint) Up() bool {
	return e != nil && e.ErrKind == model.ErrNone && !e.LastOK.IsZero() && !e.LastOK.Before(e.Last)
}
