package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop demo --routed` (and `make run-routed`): a simulated routed fleet
// — a production-stack-shaped router in front of two prefill and five
// decode vLLM engines handing KV over — each on its own loopback port,
// watched as a fleet (router → pools → workers). With no scenario named it
// cycles through sim.RoutedDemoTimeline; every number is SIMULATED.

// serveFleet serves a fleet's engines and its router, each on its own
// loopback port until ctx ends, and returns their URLs, the router first.
func serveFleet(ctx context.Context, f *sim.Fleet) ([]string, error) {
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
	return append([]string{router}, engines...), nil
}

// runRoutedDemo serves the fleet and runs the monitor on it.
func runRoutedDemo(ctx context.Context, scenario string, headless bool, out func(string)) error {
	cycle := scenario == "" || scenario == "cycle"
	first := scenario
	if cycle {
		first = sim.RoutedDemoTimeline[0].Name
	}
	f, err := sim.NewFleet(sim.FleetConfig{Scenario: first, Seed: 1, StartupTime: demoStartup})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	urls, err := serveFleet(ctx, f)
	if err != nil {
		return err
	}
	router := urls[0]
	f.Start(ctx)
	started := time.Now()
	if cycle {
		go func() {
			for i := 0; ; i = (i + 1) % len(sim.RoutedDemoTimeline) {
				seg := sim.RoutedDemoTimeline[i]
				_ = f.SetScenario(seg.Name)
				select {
				case <-ctx.Done():
					return
				case <-time.After(seg.For):
				}
			}
		}()
	}
	if headless {
		out(fmt.Sprintf("llmtop demo --routed: SIMULATED router %s in front of %d prefill and %d decode engines (%v); Ctrl-C stops",
			router, len(f.Prefills), len(f.Decodes), urls[1:]))
		<-ctx.Done()
		return nil
	}
	return runMonitor(ctx, monitorOptions{
		URLs:      urls,
		Simulated: true,
		Scenario:  func() tui.ScenarioMsg { return routedScenarioMsg(f.Scenario(), cycle, time.Since(started)) },
	})
}

// routedScenarioMsg is the header's scenario: a cycle's segment and where
// it is in it, or one scenario and how long it has run (it read 0:00 for
// as long as the demo ran).
func routedScenarioMsg(name string, cycle bool, since time.Duration) tui.ScenarioMsg {
	if !cycle {
		return tui.ScenarioMsg{Name: name, Elapsed: since}
	}
	elapsed, length := segmentOf(since)
	return tui.ScenarioMsg{Name: name, Elapsed: elapsed, Length: length}
}

// segmentOf is where a cycling routed demo is in its segment.
func segmentOf(since time.Duration) (elapsed, length time.Duration) {
	var total time.Duration
	for _, s := range sim.RoutedDemoTimeline {
		total += s.For
	}
	since %= total
	for _, s := range sim.RoutedDemoTimeline {
		if since < s.For {
			return since, s.For
		}
		since -= s.For
	}
	return 0, 0
}
