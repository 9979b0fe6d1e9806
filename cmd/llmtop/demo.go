package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sim"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop demo` (and `make run`): the simulated vLLM in-process on a free
// loopback port, with background traffic cycling through the scenarios,
// watched by the monitor with its log attached. Everything is badged
// SIMULATED.

var demoFlags struct {
	headless bool
	routed   string
	cfg      sim.Config
}

func init() {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Watch a simulated vLLM (no GPU needed) cycle through healthy load, crashes, queueing, KV pressure…",
		Long: `Start a simulated vLLM engine in-process on a free 127.0.0.1 port and open the
monitor on it, with its log in the log pane and simulated GPUs following its
load. Background traffic moves by itself and the scenario timeline loops:

  ` + sim.DemoTimeline + `

50 s into the healthy segment a simulated routed fleet (a router in front of
prefill and decode pools) is watched beside the engine for 90 s, in the fleet
view: ` + sim.DemoRouted.Scenario + `.

Everything shown is SIMULATED. The engine flags (` + vllmCap("") + `, ` + engines.VLLM.Levers.MemFraction + `…)
and --scenario work as for 'llmtop sim'.`,
		Args: cobra.NoArgs,
		RunE: runDemo,
	}
	demoFlags.cfg.Scenario, demoFlags.cfg.Loop = sim.DemoTimeline, true
	fs := cmd.Flags()
	fs.BoolVar(&demoFlags.headless, "headless", false, "no monitor: print the sim's URL and its log, serve until Ctrl-C")
	fs.StringVar(&demoFlags.routed, "routed", "", "a routed fleet instead: a router in front of prefill and decode pools; `SCENARIO` one of "+
		strings.Join(sim.RoutedScenarioNames(), ", ")+", or cycle (all in turn)")
	addSimFlags(fs, &demoFlags.cfg)
	addRecordFlag(fs)
	root.AddCommand(cmd)
}

// demoStartup is the simulated engine's start time in the demo's cycle.
const demoStartup = 2 * time.Second

func runDemo(cmd *cobra.Command, _ []string) error {
	if demoFlags.headless && recordFlags.path != "" {
		return fmt.Errorf("demo --headless has no monitor to record: drop --record (or record a monitor on its URL: llmtop --record FILE URL)")
	}
	if demoFlags.routed != "" {
		ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runRoutedDemo(ctx, demoFlags.routed, demoFlags.headless, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), s) })
	}
	cfg := demoFlags.cfg
	if err := simToggles(cmd.Flags(), &cfg); err != nil {
		return err
	}
	cfg.Background = true
	cycle := cfg.Scenario == sim.DemoTimeline
	if !cmd.Flags().Changed("startup-time") && cycle {
		// Each scenario switch restarts the engine: a short start keeps
		// most of a segment for its scenario (a cold start has its own).
		cfg.StartupTime = demoStartup
	}
	pipe := sim.NewLogPipe(1 << 20)
	defer pipe.Close()
	cfg.Log = pipe
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: no free loopback port: %w", err)
	}
	cfg.Port = ln.Addr().(*net.TCPAddr).Port
	s, err := sim.New(cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.Start(ctx)
	var fleet *demoFleet // the cycle's routed stretch (demo_fleet.go)
	if cycle && !demoFlags.headless {
		fleet = &demoFleet{interval: monitorFlags.interval}
		defer fleet.stop()
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()

	if demoFlags.headless {
		fmt.Fprintf(cmd.ErrOrStderr(), "llmtop demo: SIMULATED vLLM on %s (scenario %s); Ctrl-C stops\n", url, cfg.Scenario)
		go func() { _, _ = io.Copy(cmd.OutOrStdout(), pipe) }()
		return <-served
	}
	err = runMonitor(ctx, monitorOptions{
		Hold:      s.HoldTimeline, // a benchmark from the monitor measures one scenario
		URLs:      []string{url},
		Simulated: true,
		SimLog:    pipe,
		Scenario: func() tui.ScenarioMsg {
			name, elapsed, length := s.Scenario()
			if !cycle {
				return tui.ScenarioMsg{Name: name, Elapsed: elapsed, Length: length}
			}
			return fleet.scenario(ctx, name, elapsed, length)
		},
		Started: func(send func(any)) {
			if fleet != nil {
				fleet.started(send)
			}
		},
		SimGPU: func() session.SimGPULoad {
			l := s.Load()
			return session.SimGPULoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
		},
	})
	cancel()
	<-served
	return err
}
