package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/tui"
)

// monitorOptions is what the monitor needs besides the flags: the root
// command passes the URLs (given or discovered), `llmtop demo` also the
// simulator's log and load.
type monitorOptions struct {
	URLs      []string
	Simulated bool                      // badge SIMULATED everywhere
	SimLog    io.Reader                 // demo: the simulator's log
	SimGPU    func() session.SimGPULoad // demo: drives the simulated GPUs
	// Scenario names the demo's running scenario, read once a second for
	// the header's badge.
	Scenario func() tui.ScenarioMsg
	// Extra are Bubble Tea commands started with the program (a demo's
	// scenario driver, for example). The messages they return reach every
	// tui component that implements tui.Receiver.
	Extra []tea.Cmd
	// Lost is set when the terminal went away (llmtop run then leaves its
	// engine running); Started hears the sources' send once the screen
	// runs (llmtop run's launcher reports restarts through it).
	Lost    *atomic.Bool
	Started func(send func(any))
	// Hold pauses the demo's scenario timeline while a benchmark from the
	// screen runs (the simulator's HoldTimeline).
	Hold func(hold bool)
	// Logs are engine logs followed besides --log (llmtop run's engine's).
	Logs []string
	// Launcher is the engine llmtop run started (nil: none; the apply
	// screen then says how to launch one).
	Launcher *runLauncher
}

// monitorFlags are the monitor's own flags, persistent so that `llmtop demo`
// takes them too. Sources must not define flags with these names.
var monitorFlags struct {
	interval time.Duration
	window   time.Duration
	noColor  bool
	config   string
	sloTTFT  time.Duration
	sloTPOT  time.Duration
}

func init() {
	root.Args = cobra.ArbitraryArgs
	root.RunE = runRoot
	fs := root.PersistentFlags()
	fs.DurationVar(&monitorFlags.interval, "interval", time.Second, "refresh interval, 250ms–1m (+/- change it live)")
	fs.DurationVar(&monitorFlags.window, "window", time.Minute, "window for rates and percentiles: 1m, 5m or 15m ([/] change it live)")
	fs.BoolVar(&monitorFlags.noColor, "no-color", false, "draw without colour (NO_COLOR is honoured too)")
	fs.StringVar(&monitorFlags.config, "config", "", "config file (default $XDG_CONFIG_HOME/llmtop/config.toml)")
	def := config.DefaultThresholds
	fs.DurationVar(&monitorFlags.sloTTFT, "slo-ttft", def.TTFTp99, "TTFT p99 objective the screen and the diagnosis judge by; overrides the config file's [thresholds] ttft_p99_ms")
	fs.DurationVar(&monitorFlags.sloTPOT, "slo-tpot", def.ITLp99, "inter-token latency (TPOT/ITL) p99 objective; overrides [thresholds] itl_p99_ms")
}

// runRoot is `llmtop [URL...]`: monitor the given endpoints, or the ones
// found on this machine, or say how to go on when there are none.
func runRoot(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	urls := args
	if prometheusOn() {
		// The fleet comes from Prometheus (wire_prometheus.go); URLs given
		// too are scraped directly beside it.
		return runMonitor(ctx, monitorOptions{URLs: urls})
	}
	if len(urls) == 0 {
		cfg, err := loadConfig(monitorFlags.config)
		if err != nil {
			return err
		}
		urls = cfg.Endpoints
	}
	if len(urls) == 0 {
		urls = foundURLs(discoverLocal(ctx))
	}
	if len(urls) == 0 {
		fmt.Fprint(cmd.OutOrStdout(), nothingFound)
		return &exitError{code: 3, err: errors.New("")}
	}
	return runMonitor(ctx, monitorOptions{URLs: urls})
}

const nothingFound = `No LLM inference server found on this machine.

llmtop looked on 127.0.0.1 at the usual ports: 8000 (vLLM), 30000 (SGLang),
8080 (TGI, llama.cpp), 9931, 3000, 80, 11434 (Ollama), 8002 (Triton), and
at the ports this machine's engine processes listen on (those it can read).

  Watch a server:            llmtop http://HOST:PORT
  Several at once:           llmtop http://a:8000 http://b:8000
  See it work without GPUs:  llmtop demo

`

// runMonitor builds the sources' environment, starts every registered
// source and runs the screen until the user quits or ctx ends.
func runMonitor(ctx context.Context, opts monitorOptions) error {
	cfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	if err := checkIntervalFlag(); err != nil {
		return err
	}
	if err := config.CheckWindow(monitorFlags.window); err != nil {
		return usageErr("--window %s: %v", durText(monitorFlags.window), err)
	}
	if !term.IsTerminal(os.Stdout.Fd()) {
		return errors.New("the monitor needs a terminal on stdout: for scripts and pipes use `llmtop snapshot --json` or `llmtop diagnose`")
	}
	urls := make([]string, 0, len(opts.URLs))
	ids := make([]string, 0, len(opts.URLs)) // what the screen shows: no URL credential
	for _, u := range opts.URLs {
		urls = append(urls, normalizeURL(u))
		ids = append(ids, model.RedactURL(normalizeURL(u)))
	}
	rt := newMonitorRuntime()
	rt.hold = opts.Hold
	if opts.Launcher != nil {
		rt.launcher = opts.Launcher
	}
	rt.target = func(id string) (string, bool) {
		for i := range ids {
			if ids[i] == id {
				return urls[i], true
			}
		}
		return id, false // a Prometheus target: nobody named it
	}
	interval := pick(monitorFlags.interval, cfg.Interval, flagSet("interval"))
	window := pick(monitorFlags.window, cfg.Window, flagSet("window"))
	if prometheusOn() && interval < prometheusMinInterval {
		// Prometheus scrapes every 15–30 s: faster refreshes read the same
		// samples, and the screen would call 5 s without news stale.
		interval = prometheusMinInterval
	}

	// A signal ends the program like q does, and the same cleanup follows:
	// SIGTERM (kill, systemd), SIGHUP (the terminal, tmux pane or ssh
	// session went away), SIGINT (when ctrl+c is not a key). Bubble Tea's
	// own handler is off: it would race this one (see popts).
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stopSignals()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A terminal that goes away without a signal (see terminal.go) ends
	// the monitor the same way.
	termOpts, termIO, closeTerm := terminalOptions(func(error) {
		if opts.Lost != nil {
			opts.Lost.Store(true)
		}
		cancel()
	})
	defer closeTerm()
	statuses := sourceStatuses(sourcePlugins, &session.Env{URLs: urls, SimLog: opts.SimLog, Logs: opts.Logs})
	noColor := monitorFlags.noColor || cfg.NoColor || os.Getenv("NO_COLOR") != ""
	rec, err := openRecording(recordHeader("monitor", urls, interval, window, config.DiagnosisConfig(cfg.Thresholds), opts.Simulated), true, &cfg.Record)
	if err != nil {
		return err
	}
	defer rec.close(os.Stderr)
	rec.status(statuses)
	// The session: the one core every face reads (the screen, and its `s`
	// snapshot), driven by the screen's loop (Host), which gets every
	// source's message after the recording has it. The sources start once
	// the program runs (its Send blocks until then).
	var p *tea.Program
	sess := session.New(session.Options{
		Core:    core.Options{Endpoints: ids, Window: window, Diagnosis: config.DiagnosisConfig(cfg.Thresholds), Store: storeConfig()},
		LogsOn:  logsAttached(opts.Logs),
		Env:     session.Env{URLs: urls, Interval: interval, Window: window, SimLog: opts.SimLog, SimGPU: opts.SimGPU, Logs: opts.Logs},
		Sources: sessionSources(sourcePlugins),
		Record:  rec.record,
		Host:    func(msg any) { p.Send(msg) },
		StartErr: func(name string, err error) {
			p.Send(tui.SourceStatusMsg{Name: name, Err: err.Error()})
		},
	})
	rt.benches.begin(opts.Simulated)
	if !opts.Simulated { // the demo runs its engine in this process
		rt.procs.narrow()
		defer rt.procs.restore()
	}
	m := tui.New(tui.Options{
		Core:      sess.Core(),
		Endpoints: ids, Interval: interval, Window: window, Simulated: opts.Simulated,
		Sources: statuses, SetInterval: sess.SetInterval, Save: saveSnapshot, Overlays: rt.overlays(),
		Theme: cfg.Theme, NoColor: noColor, Keys: &cfg.Keys, Thresholds: &cfg.Thresholds,
		Init: opts.Extra, OnInput: rec.input, Fleet: prometheusOn(), SetWindow: sess.SetWindow,
		Panes: cfg.Panes, NoMouse: cfg.NoMouse, NoGPU: gpuFlags.noGPU,
		Recording: rec.file(), Prometheus: model.RedactURL(promFlags.url),
	})
	// The screen is drawn by tui.Screen (screenProgram). The program ends when ctx does (tea.WithContext): on a signal, or when
	// the caller's context ends. Bubble Tea's signal handler would send its
	// QuitMsg on an unbuffered channel that nobody reads once ctx ended the
	// event loop, and its shutdown would then wait for it forever.
	popts := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}, termOpts...)
	p, runProgram := screenProgram(m, popts, termIO, noColor, cfg.NoMouse)
	go rec.watch(ctx, func(msg any) { p.Send(msg) })
	if opts.Started != nil {
		opts.Started(sess.Send)
	}

	if opts.Scenario != nil {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				sess.Send(opts.Scenario())
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	go func() { _ = sess.Start(ctx) }() // StartErr shows what failed in its pane

	if path := os.Getenv("LLMTOP_CPUPROFILE"); path != "" {
		// for measuring the monitor's own cost: go tool pprof bin/llmtop FILE
		if f, perr := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); perr == nil {
			defer f.Close() // after StopCPUProfile has written the profile
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	if path := os.Getenv("LLMTOP_TRACE"); path != "" {
		// the monitor's wake-ups, goroutine by goroutine: go tool trace FILE
		if f, terr := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); terr == nil {
			defer f.Close()
			if trace.Start(f) == nil {
				defer trace.Stop()
			}
		}
	}
	err = runProgram()
	endedByCtx := ctx.Err() != nil // before cancel: a signal, or the caller
	cancel()
	// The sources stop with ctx. Log commands get SIGTERM, then SIGKILL
	// after 2 s: wait for them (bounded) so that none outlives llmtop. The
	// terminal is already restored, so a slow one delays only the prompt.
	deadline := time.Now().Add(quitWait)
	// A benchmark in progress is stopped and what it measured saved, as a
	// finished one the overlay had no time to save.
	saved, serr := rt.benches.finish(deadline)
	for _, p := range saved {
		fmt.Fprintf(os.Stderr, "llmtop: the benchmark's result is saved in %s\n", p)
	}
	if serr != nil {
		fmt.Fprintf(os.Stderr, "llmtop: the benchmark's result is not saved: %v\n", serr)
	}
	sess.Close(time.Until(deadline))
	// Ended by ctx is a normal end; a kill for another reason (a panic) is
	// not.
	if err != nil && !(errors.Is(err, tea.ErrProgramKilled) && endedByCtx) {
		return err
	}
	return nil
}

// flagSet reports whether the user gave a monitor flag on the command line
// (so it wins over the config file).
func flagSet(name string) bool {
	f := root.PersistentFlags().Lookup(name)
	return f != nil && f.Changed
}

func pick(flag, fromConfig time.Duration, given bool) time.Duration {
	if given || fromConfig <= 0 {
		return flag
	}
	return fromConfig
}

// checkIntervalFlag refuses an --interval the monitor cannot keep (the
// config file's interval is checked as it is read): a refresh faster than
// 250 ms is not quietly made slower.
func checkIntervalFlag() error {
	if err := config.CheckInterval(monitorFlags.interval); err != nil {
		return usageErr("--interval %s: %v", durText(monitorFlags.interval), err)
	}
	return nil
}

// durText writes d as a person types it: 7m, 1h30m, 100ms (not 7m0s).
func durText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// normalizeURL accepts "host:port" and trims a trailing slash, so the same
// endpoint always has the same ID.
func normalizeURL(u string) string {
	u = strings.TrimSpace(u)
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return strings.TrimRight(u, "/")
}

// saveSnapshot writes the `s` key's snapshot into the current directory.
func saveSnapshot(data []byte) (string, error) {
	stem := "llmtop-snapshot-" + time.Now().UTC().Format("20060102T150405Z")
	// Private (0600), and no URL credential in it.
	data = []byte(model.SafeOutput(string(data)))
	// A new file: a second snapshot in the same second is -2, -3, …, not
	// written over the first.
	var name string
	for i := 1; ; i++ {
		name = stem + ".json"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.json", stem, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 1000 {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
		break
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs, nil
	}
	return name, nil
}
