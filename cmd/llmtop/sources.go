package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/pflag"
)

// The monitor's sources (engine scrapes, NVML, log tails…) plug in here, so
// the wiring of each lives beside its flags in a wire_<name>.go file and the
// monitor itself does not need to know which sources exist.
//
// A source delivers typed model messages (model.Scrape, model.GPUSnapshot,
// model.LogLine, model.Sample, model.Event) through env.Send; the TUI routes
// them by type and by their Endpoint field.

// monitorEnv is what a source gets to start with.
type monitorEnv struct {
	// URLs are the endpoints being watched (after discovery).
	URLs []string
	// Interval is the initial refresh interval; Window the initial window.
	Interval, Window time.Duration
	// Send delivers a message to the UI. Safe from any goroutine.
	Send func(msg any)
	// OnInterval collects callbacks the UI calls when the user changes the
	// refresh interval (+/-); a source appends its setter here in Start.
	OnInterval []func(time.Duration)
	// OnWindow collects the setters of sources that evaluate the window
	// themselves (Prometheus), called when the user changes it ([/]).
	OnWindow []func(time.Duration)
	// Stopped collects channels a source's Start returns that close once
	// its work has stopped after ctx ended (a log command's process group
	// gone); the monitor waits for them when it quits.
	Stopped []<-chan struct{}

	// Demo mode (llmtop demo): the simulator's log stream and a probe of its
	// load for the simulated GPUs. Nil outside the demo.
	SimLog io.Reader
	SimGPU func() SimGPULoad
}

// SimGPULoad is the simulator's load as the simulated GPUs follow it.
type SimGPULoad struct {
	Util       float64 // 0–1 share of time the GPU is busy
	MemUsed    float64 // bytes held by the engine
	MemTotal   float64 // bytes on the device
	BatchShare float64 // 0–1 how full the running batch is (drives power)
}

// sourcePlugin is one kind of source.
type sourcePlugin struct {
	Name string
	// Flags registers the source's flags on the root command.
	Flags func(fs *pflag.FlagSet)
	// Start starts the source's goroutines and returns quickly; they stop
	// when ctx is cancelled. An error is shown in the source's pane, it
	// does not stop the monitor.
	Start func(ctx context.Context, env *monitorEnv) error
}

var sourcePlugins []sourcePlugin

// registerSource adds a source; wire_<name>.go files call it from init. Its
// flags become persistent root flags, so `llmtop --log f URL` and the
// subcommands that watch endpoints (snapshot, diagnose) share them.
func registerSource(p sourcePlugin) {
	sourcePlugins = append(sourcePlugins, p)
	if p.Flags != nil {
		p.Flags(root.PersistentFlags())
	}
}
