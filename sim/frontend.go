package sim

import (
	"context"
	"runtime"
	"time"
)

// The api-server-cpu scenario: the engine's front-end (vLLM's API server:
// one Python thread that tokenises, detokenises and writes JSON for every
// request) is saturated. The sim burns a real core on one OS thread named
// frontThreadName, so /proc shows what top -H would show on a real box,
// and every generate request waits its turn on that thread (frontCost of
// CPU each) before the engine sees it: clients wait, the engine and the
// GPU stay nearly idle.

// FrontThreadName is the name (/proc/PID/task/TID/comm) of the thread the
// api-server-cpu scenario keeps busy.
const FrontThreadName = "APIServer"

// frontCost is the CPU one request costs the saturated front-end.
const frontCost = 15 * time.Millisecond

// frontJob is a request waiting for the front-end's thread.
type frontJob chan struct{}

// runFront runs the front-end's thread while the current segment says so
// (Sim.frontHot), until ctx ends. It only runs on the real clock.
func (s *Sim) runFront(ctx context.Context) {
	runtime.LockOSThread() // the thread stays this goroutine's: it has a name now
	defer runtime.UnlockOSThread()
	nameThread(FrontThreadName)
	// The burning thread takes a processor of its own while it burns: the
	// monitor runs on one (GOMAXPROCS=1) in the demo and must keep it.
	extra := false
	defer func() {
		if extra {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) - 1)
		}
	}()
	for {
		if ctx.Err() != nil {
			return
		}
		if !s.frontHot.Load() {
			if extra {
				runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) - 1)
				extra = false
			}
			select {
			case <-ctx.Done():
				return
			case <-s.frontWake:
			case <-time.After(time.Second):
			}
			continue
		}
		if !extra {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
			extra = true
		}
		select {
		case j := <-s.frontJobs:
			spin(frontCost)
			close(j)
		default:
			spin(time.Millisecond) // the background traffic's tokenising
		}
	}
}

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := 1.0
	for time.Now().Before(end) {
		for range 1000 {
			x = x*1.0000001 + 1e-9
		}
	}
	sink = x
}

var sink float64

// throughFront makes a request wait its turn on the saturated front-end's
// thread; it returns at once when the scenario is not running.
func (s *Sim) throughFront(ctx context.Context) {
	if !s.frontHot.Load() {
		return
	}
	j := make(frontJob)
	select {
	case s.frontJobs <- j:
	case <-ctx.Done():
		return
	}
	select {
	case <-j:
	case <-ctx.Done():
	}
}
