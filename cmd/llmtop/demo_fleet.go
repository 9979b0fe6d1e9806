package main

import (
	"context"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/tui"
)

// The routed stretch of `llmtop demo`'s cycle (sim.DemoRouted): a routed
// fleet — a production-stack-shaped router in front of two prefill and
// five decode engines, each on its own loopback port — runs beside the
// demo's engine from demoFleetWarm before the stretch (so its engines are
// past their start when shown) to its end, and is watched only during the
// stretch: its pollers start as it begins and stop as it ends, when its
// endpoints leave the screen as gone (model.Origin), judged by no rule,
// and the fleet stops (seven engines simulated all cycle long tripled the
// demo's CPU). The screen opens the fleet view for it (tui.ScenarioMsg's
// Fleet) and closes it after. Each stretch runs a fresh fleet on fresh
// ports.

// demoFleetWarm is how long before its stretch the fleet starts.
const demoFleetWarm = 20 * time.Second

// demoFleet runs and watches the fleet while the demo asks.
type demoFleet struct {
	interval time.Duration

	mu      sync.Mutex
	send    func(any)
	run     *runningFleet // nil while no fleet runs
	cancel  context.CancelFunc
	polling sync.WaitGroup
}

// runningFleet is one stretch's fleet: its engines, its servers' URLs (the
// router first) and what stops them.
type runningFleet struct {
	f    *sim.Fleet
	urls []string
	stop context.CancelFunc
}

// startFleet builds a fleet, serves it on fresh loopback ports and starts
// its engines.
func startFleet(parent context.Context) (*runningFleet, error) {
	f, err := sim.NewFleet(sim.FleetConfig{Scenario: sim.DemoRouted.Scenario, Seed: 1, StartupTime: demoStartup})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(parent)
	urls, err := serveFleet(ctx, f)
	if err != nil {
		cancel()
		return nil, err
	}
	rf := &runningFleet{f: f, urls: urls, stop: cancel}
	f.Start(ctx)
	return rf, nil
}

// started hears the session's send (monitorOptions.Started).
func (d *demoFleet) started(send func(any)) {
	d.mu.Lock()
	d.send = send
	d.mu.Unlock()
}

// set brings the fleet to the stretch's state: running (run), and watched
// (watch, only while running). It never fails the demo: a fleet that
// cannot start is left out of that cycle.
func (d *demoFleet) set(ctx context.Context, run, watch bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.send == nil {
		return
	}
	if run && d.run == nil {
		rf, err := startFleet(ctx)
		if err != nil {
			return
		}
		d.run = rf
	}
	watching := d.cancel != nil
	switch {
	case watch && run && !watching:
		pctx, cancel := context.WithCancel(ctx)
		d.cancel = cancel
		for _, u := range d.run.urls {
			p := engine.NewPoller(engine.Config{URL: u, Interval: d.interval, Timeout: engineTimeout()})
			id, send := model.RedactURL(u), d.send
			d.polling.Add(1)
			go func() {
				defer d.polling.Done()
				p.Run(pctx, func(sc model.Scrape) { send(withEndpoint(sc, id)) })
			}()
		}
	case !watch && watching:
		d.cancel()
		d.cancel = nil
		d.polling.Wait() // no scrape of theirs may follow their leaving
		for _, u := range d.run.urls {
			d.send(model.Origin{Endpoint: model.RedactURL(u), Source: "demo", Gone: true,
				GoneWhy: "the demo's routed fleet is no longer watched (its stretch of the cycle ended)"})
		}
	}
	if !run && d.run != nil {
		d.run.stop()
		d.run = nil
	}
}

// stop ends the pollers and the fleet (the demo's end).
func (d *demoFleet) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
		d.polling.Wait()
	}
	if d.run != nil {
		d.run.stop()
		d.run = nil
	}
}

// scenario is the header's badge for the demo's engine at (name, elapsed,
// length), and runs and watches the fleet with the routed stretch.
func (d *demoFleet) scenario(ctx context.Context, name string, elapsed, length time.Duration) tui.ScenarioMsg {
	shown, el, l, routed := sim.DemoSegment(name, elapsed, length)
	if d != nil {
		r := sim.DemoRouted
		warm := name == r.Segment && length == r.SegmentLength && elapsed >= r.After-demoFleetWarm
		d.set(ctx, warm || routed, routed)
	}
	return tui.ScenarioMsg{Name: shown, Elapsed: el, Length: l, Fleet: routed}
}
