package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/model"
)

// Poller reads one endpoint on an interval. It identifies the engine on the
// first poll, again after the endpoint was down (it may come back as
// something else), and every few minutes (models change).
type Poller struct {
	s        *session
	interval atomic.Int64 // nanoseconds
	changed  chan struct{}
}

// NewPoller returns a poller for cfg; Run starts it.
func NewPoller(cfg Config) *Poller {
	p := &Poller{s: newSession(cfg), changed: make(chan struct{}, 1)}
	p.interval.Store(int64(p.s.cfg.Interval))
	return p
}

// URL is the endpoint's ID, as its scrapes carry it.
func (p *Poller) URL() string { return p.s.cfg.URL }

// SetInterval changes the poll interval (clamped to at least 250 ms); safe
// from any goroutine. A shorter interval takes effect at once.
func (p *Poller) SetInterval(d time.Duration) {
	if d < MinInterval {
		d = MinInterval
	}
	p.interval.Store(int64(d))
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// Run polls at once and then every interval until ctx is done, calling
// deliver with each model.Scrape. A request never blocks longer than the
// configured timeout; polls start on a steady cadence (a slow scrape does
// not push the next one back by its own duration, nor do scrapes overlap),
// on the beat grid (package beat): the instants the monitor's other
// periodic work (the log's poll, the host, the screen's clock) is due at
// too, so that a refresh wakes the process once.
func (p *Poller) Run(ctx context.Context, deliver func(model.Scrape)) {
	for {
		start := time.Now()
		sc := p.s.scrape(ctx)
		if ctx.Err() != nil {
			return
		}
		deliver(sc)
		if !p.wait(ctx, start) {
			return
		}
	}
}

// next is when the poll after one that started at start is due: the beat
// an interval after it, the first at least half an interval after it (a
// first poll at an odd moment is not followed by another a few
// milliseconds later).
func (p *Poller) next(start time.Time) time.Time {
	every := time.Duration(p.interval.Load())
	return beat.After(start, every/2, every)
}

// wait sleeps until the next poll is due (next), re-reading the interval when it changes;
// false when ctx is done.
func (p *Poller) wait(ctx context.Context, start time.Time) bool {
	for {
		d := time.Until(p.next(start))
		if d <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-p.changed:
			t.Stop()
		case <-t.C:
			return true
		}
	}
}
