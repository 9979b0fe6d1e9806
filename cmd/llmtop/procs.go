package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// The monitor runs Go on one processor (GOMAXPROCS=1). Its work is a
// scrape, a frame and now and then a log read each second, a few
// milliseconds in all; with more processors the runtime spreads each burst
// over threads that wake one another, and those wake-ups cost more than
// the work (make monitor-cost: 0.50–0.53 % of a core on two against
// 0.42–0.47 % on one, same build, same run). A blocking call (a cgo NVML
// read, a file read) still hands the processor to another thread, so the
// screen never waits on it.
//
// A benchmark from the monitor's `b` gets every processor back while it
// runs: its streams' own overhead must not show in the latencies it
// reports. A GOMAXPROCS the user set is left alone.
//
// The garbage collector runs at GOGC=150: the monitor's live heap is small
// (about 4.7 MB a minute in, most of it the store's rings, allocated whole)
// and, at the default 100, a collection every 5 s was once a tenth of its
// cost. At 200 it ran every 37 s here (GODEBUG=gctrace=1, about 250 kB
// allocated a second) for a heap goal of 14 MB, and the resident
// memory of make monitor-cost reached 38-39 MB against the 38 asked; at 150
// the goal is 2.3 MB lower (RSS 35.0 MB against 38.2 side by side in one
// run) and it runs every 28 s, about 1 % more of the monitor's CPU
// (1.5 ms a collection). A GOGC the user set is left alone.

type procs struct {
	mu      sync.Mutex
	full    int // the processors before the monitor took them; 0: not changed
	gc      int // the GC percent before; 0: not changed
	benches int // benchmarks running
}

// monitorGOGC is the monitor's GC percent (see procs).
const monitorGOGC = 150

// narrow sets one processor and the GC percent for the monitor; restore
// undoes both.
func (p *procs) narrow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full == 0 && os.Getenv("GOMAXPROCS") == "" {
		p.full = runtime.GOMAXPROCS(1)
	}
	if p.gc == 0 && os.Getenv("GOGC") == "" {
		p.gc = debug.SetGCPercent(monitorGOGC)
	}
}

func (p *procs) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full != 0 {
		runtime.GOMAXPROCS(p.full)
		p.full, p.benches = 0, 0
	}
	if p.gc != 0 {
		debug.SetGCPercent(p.gc)
		p.gc = 0
	}
}

// benchStart gives a benchmark every processor; benchEnd takes them back
// when the last one ends.
func (p *procs) benchStart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full == 0 {
		return
	}
	if p.benches++; p.benches == 1 {
		runtime.GOMAXPROCS(p.full)
	}
}

func (p *procs) benchEnd() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.full == 0 || p.benches == 0 {
		return
	}
	if p.benches--; p.benches == 0 {
		runtime.GOMAXPROCS(1)
	}
}
