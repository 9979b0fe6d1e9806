package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
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
// demo's engine from the start (so it is warm when shown), and is watched
// only during that stretch: its pollers start as it begins and stop as it
// ends, when its endpoints leave the screen as gone (model.Origin), judged
// by no rule. The screen opens the fleet view for it (tui.ScenarioMsg's
// Fleet) and closes it after.

// demoFleet serves the fleet and watches it while the demo asks.
type demoFleet struct {
	f        *sim.Fleet
	urls     []string // the router first, then the engines
	interval time.Duration

	mu      sync.Mutex
	send    func(any)
	cancel  context.CancelFunc // the pollers' (nil while not watched)
	polling sync.WaitGroup
}

// startDemoFleet builds the fleet, serves it and starts its engines.
func startDemoFleet(ctx context.Context, interval time.Duration) (*demoFleet, error) {
	f, err := sim.NewFleet(sim.FleetConfig{Scenario: sim.DemoRouted.Scenario, Seed: 1, StartupTime: demoStartup})
	if err != nil {
		return nil, err
	}
	d := &demoFleet{f: f, interval: interval}
	serve := func(h http.Handler) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("demo: no free loopback port for the routed fleet: %w", err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		go func() { <-ctx.Done(); _ = srv.Close() }()
		return "http://" + ln.Addr().String(), nil
	}
	var engines []string
	for _, s := range f.Engines() {
		u, err := serve(f.EngineHandler(s))
		if err != nil {
			return nil, err
		}
		f.SetURL(s, u)
		engines = append(engines, u)
	}
	router, err := serve(f.RouterHandler())
	if err != nil {
		return nil, err
	}
	d.urls = append([]string{router}, engines...)
	f.Start(ctx)
	return d, nil
}

// started hears the session's send (monitorOptions.Started).
func (d *demoFleet) started(send func(any)) {
	d.mu.Lock()
	d.send = send
	d.mu.Unlock()
}

// watch starts (on true) or stops (on false) watching the fleet; a call
// that changes nothing does nothing.
func (d *demoFleet) watch(ctx context.Context, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.send == nil || on == (d.cancel != nil) {
		return
	}
	if on {
		pctx, cancel := context.WithCancel(ctx)
		d.cancel = cancel
		for _, u := range d.urls {
			p := engine.NewPoller(engine.Config{URL: u, Interval: d.interval, Timeout: engineTimeout()})
			id, send := model.RedactURL(u), d.send
			d.polling.Add(1)
			go func() {
				defer d.polling.Done()
				p.Run(pctx, func(sc model.Scrape) { send(withEndpoint(sc, id)) })
			}()
		}
		return
	}
	d.cancel()
	d.cancel = nil
	d.polling.Wait() // no scrape of theirs may follow their leaving
	for _, u := range d.urls {
		d.send(model.Origin{Endpoint: model.RedactURL(u), Source: "demo", Gone: true,
			GoneWhy: "the demo's routed fleet is no longer watched (its stretch of the cycle ended)"})
	}
}

// scenario is the header's badge for the demo's engine at (name, elapsed,
// length), and starts or stops watching the fleet with the routed stretch.
func (d *demoFleet) scenario(ctx context.Context, name string, elapsed, length time.Duration) tui.ScenarioMsg {
	name, elapsed, length, routed := sim.DemoSegment(name, elapsed, length)
	if d != nil {
		d.watch(ctx, routed)
	}
	return tui.ScenarioMsg{Name: name, Elapsed: elapsed, Length: length, Fleet: routed}
}
