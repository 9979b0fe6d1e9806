package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// runState is one run in progress.
type runState struct {
	cfg    *Config
	q      *requester
	model  string
	extras bool
	bodies [][]byte // pre-built when the run is count-bound

	sent, inflight atomic.Int64
	next           atomic.Int64 // the next request index (closed loop)

	mu                sync.Mutex
	warmup            bool
	start             time.Time
	recs              []report.Record
	completed, failed int
	outTokens         int
	ttftMS, tpotMS    []float64
	refusedInRow      int
	stopSending       context.CancelFunc
	stoppedBecause    string
}

// prebuildMax bounds how many bodies are built before a count-bound run.
const prebuildMax = 4096

// warmupBase offsets warmup prompts so they do not warm the prefix cache
// for the measured ones.
const warmupBase = 1 << 30

func (r *runState) body(i int) []byte {
	if i < len(r.bodies) {
		return r.bodies[i]
	}
	return r.cfg.body(r.model, i, r.extras)
}

// one sends request i and records it.
func (r *runState) one(ctx context.Context, i int, queued time.Duration) report.Record {
	body := r.body(i)
	rec := report.Record{Index: i, Queued: queued, PromptTokens: r.cfg.InputLen,
		ITL: make([]time.Duration, 0, r.cfg.OutputLen)}
	r.sent.Add(1)
	r.inflight.Add(1)
	r.q.do(ctx, body, &rec)
	r.inflight.Add(-1)
	r.record(rec)
	return rec
}

// record keeps a finished request and decides whether the endpoint is
// unreachable (refusedLimit dials failed in a row, none succeeded).
func (r *runState) record(rec report.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	if rec.OK {
		r.completed++
		r.outTokens += rec.OutputTokens
		r.ttftMS = append(r.ttftMS, float64(rec.TTFT)/1e6)
		if rec.OutputTokens > 1 {
			r.tpotMS = append(r.tpotMS, float64(rec.E2EL-rec.TTFT)/1e6/float64(rec.OutputTokens-1))
		}
		r.refusedInRow = 0
		return
	}
	if rec.Err != report.ErrCancelled {
		r.failed++
	}
	if rec.Err == report.ErrConnect {
		r.refusedInRow++
		if r.refusedInRow >= refusedLimit && r.completed == 0 && r.stopSending != nil {
			r.stoppedBecause = "stopped early: the endpoint refused every connection (" + rec.Detail + ")"
			r.stopSending()
		}
	} else {
		r.refusedInRow = 0
	}
}

const refusedLimit = 10

// pause is how long a closed-loop stream waits after a failure, so that a
// failing server is not hammered: Retry-After (at most 5 s) for a 429,
// 200 ms for a refused connection, 50 ms otherwise.
func pause(rec report.Record) time.Duration {
	switch {
	case rec.OK || rec.Err == report.ErrCancelled:
		return 0
	case rec.Err == report.ErrRateLimited && rec.RetryAfter > 0:
		return min(rec.RetryAfter, 5*time.Second)
	case rec.Err == report.ErrConnect:
		return 200 * time.Millisecond
	}
	return 50 * time.Millisecond
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// closedLoop runs n streams, each sending its next request when the last
// one finished, until count requests were sent (count > 0), the deadline
// passed (non-zero), or send is done. base offsets the request indexes.
func (r *runState) closedLoop(ctx, send context.Context, n, count, base int, deadline time.Time) {
	r.next.Store(0)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			// ctx too: send is its child, and a cancel of ctx reaches the
			// child a moment after ctx's own Done, so a stream whose request
			// just ended cancelled could otherwise start one more and count
			// 17 cancelled of 16 streams.
			for send.Err() == nil && ctx.Err() == nil {
				i := int(r.next.Add(1) - 1)
				if (count > 0 && i >= count) || (!deadline.IsZero() && !time.Now().Before(deadline)) {
					return
				}
				sleepCtx(send, pause(r.one(ctx, base+i, 0)))
			}
		})
	}
	wg.Wait()
}

// openLoop sends requests at arrival times drawn from arr (all at once when
// its rate is +Inf), at most capN in flight (0: no cap); a request waiting
// for a slot records that wait as Queued.
func (r *runState) openLoop(ctx, send context.Context, arr *arrivals, capN, count int, deadline time.Time) {
	var sem chan struct{}
	if capN > 0 {
		sem = make(chan struct{}, capN)
	}
	var wg sync.WaitGroup
	due := time.Now()
	for i := 0; count <= 0 || i < count; i++ {
		if i > 0 {
			due = due.Add(arr.next())
		}
		if !deadline.IsZero() && !due.Before(deadline) {
			break
		}
		sleepCtx(send, time.Until(due))
		if send.Err() != nil || ctx.Err() != nil {
			break
		}
		arrived := time.Now()
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-send.Done():
			}
			if send.Err() != nil {
				break
			}
		}
		wg.Go(func() {
			r.one(ctx, i, time.Since(arrived))
			if sem != nil {
				<-sem
			}
		})
	}
	wg.Wait()
}
