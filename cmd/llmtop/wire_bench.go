package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
	"github.com/llmtop/llmtop/tui"
)

// The TUI's `b`: the overlay lives in package tui; this runner gives it the
// load generator and the results folder, which the tui may not touch.

func init() {
	tui.RegisterOverlay(tui.OverlaySpec{ID: "bench", Key: tui.DefaultKeyMap().Bench,
		New: func() tui.Overlay { return tui.NewBenchOverlay(benchRunner{newMonitorRuntime()}) }})
}

// benchRunner runs the screen's benchmarks in a monitor session.
type benchRunner struct{ rt *monitorRuntime }

// monitorRuntime is one monitor session's run-time state, built by
// runMonitor and handed to the overlays it binds (tui.Options.Overlays):
// nothing of it lives in package variables.
type monitorRuntime struct {
	// target maps the screen's endpoint ID (its URL with credentials
	// redacted) back to the URL to load or probe.
	target func(id string) (url string, named bool)
	// benches are the session's benchmark runs. The overlay saves a run's
	// result once it has it, but the overlay ends with the screen: when
	// the monitor quits (q, a signal, its terminal gone) while a run is in
	// progress, or before the overlay's save ran, finish stops the run and
	// saves what it measured here.
	benches benchRuns
	// hold pauses the demo's scenario timeline while a benchmark runs
	// (nil: nothing to hold).
	hold func(hold bool)
	// procs narrows the processors for the monitor and widens them for a
	// benchmark.
	procs procs
	// launcher is the engine llmtop run started (inactive otherwise).
	launcher *runLauncher
}

func newMonitorRuntime() *monitorRuntime {
	rt := &monitorRuntime{target: func(id string) (string, bool) { return id, false }, launcher: &runLauncher{}}
	rt.benches.procs = &rt.procs
	return rt
}

// overlays are the screen's overlays bound to this session.
func (rt *monitorRuntime) overlays() []tui.OverlaySpec {
	return []tui.OverlaySpec{
		{ID: "bench", New: func() tui.Overlay { return tui.NewBenchOverlay(benchRunner{rt}) }},
		{ID: "probe", New: func() tui.Overlay { return tui.NewProbeOverlay(rt.probe) }},
		{ID: "apply", New: func() tui.Overlay { return tui.NewApplyOverlay(rt.launcher, benchRunner{rt}) }},
	}
}

type benchRuns struct {
	procs     *procs // the session's processors (benchStart, benchEnd)
	mu        sync.Mutex
	quitting  bool
	simulated bool                        // results are marked SIMULATED (the demo)
	stops     map[*int]context.CancelFunc // runs in progress
	running   sync.WaitGroup              // …and their Run calls
	unsaved   map[any]tui.BenchOutcome    // finished, not saved yet, by result
	saved     map[any]string              // saved, by result: the file
	// demoDir is where a simulated session's results go (made on its first
	// save): the demo's runs, on a port never the same twice, were listed
	// under "Other targets" beside a real engine's when kept with the
	// user's own.
	demoDir string
}

// folder is where results are saved and listed: the user's bench folder,
// or for a simulated session a folder of its own under $TMPDIR (made when
// create is true; "" before that).
func (b *benchRuns) folder(create bool) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.folderLocked(create)
}

func (b *benchRuns) folderLocked(create bool) (string, error) {
	if !b.simulated {
		return benchDir()
	}
	if b.demoDir == "" && create {
		d, err := os.MkdirTemp("", "llmtop-demo-")
		if err != nil {
			return "", fmt.Errorf("no temporary folder for the demo's benchmark results: %w", err)
		}
		b.demoDir = filepath.Join(d, "bench")
	}
	return b.demoDir, nil
}

// begin starts a monitor's session of runs; simulated marks their results.
func (b *benchRuns) begin(simulated bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.quitting, b.simulated = false, simulated
	b.stops, b.unsaved, b.saved = nil, nil, nil
	b.ready()
}

// ready makes the maps; b.mu is held.
func (b *benchRuns) ready() {
	if b.stops == nil {
		b.stops, b.unsaved, b.saved = map[*int]context.CancelFunc{}, map[any]tui.BenchOutcome{}, map[any]string{}
	}
}

// run runs one benchmark (f) as part of the session, where finish can stop
// it.
func (b *benchRuns) run(ctx context.Context, spec tui.BenchSpec, f func(context.Context) tui.BenchOutcome) tui.BenchOutcome {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	id := new(int)
	b.mu.Lock()
	b.ready()
	if b.quitting {
		b.mu.Unlock()
		return tui.BenchOutcome{Spec: spec, Err: errors.New("llmtop is quitting")}
	}
	b.stops[id] = stop
	b.running.Add(1)
	b.mu.Unlock()
	defer b.running.Done()
	b.procs.benchStart() // the load gets every processor
	defer b.procs.benchEnd()

	out := f(ctx)
	out.Spec = spec
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.stops, id)
	if k := outcomeKey(out); k != nil {
		b.unsaved[k] = out
	}
	return out
}

// Save saves an outcome once: asked again (the overlay's save after
// finish saved it), it returns the same file.
func (b *benchRuns) Save(o tui.BenchOutcome) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ready()
	return b.saveLocked(o)
}

func (b *benchRuns) saveLocked(o tui.BenchOutcome) (string, error) {
	k := outcomeKey(o)
	if p, ok := b.saved[k]; ok {
		return p, nil
	}
	dir, err := b.folderLocked(true)
	if err != nil {
		return "", err
	}
	p, err := writeBenchOutcome(dir, o)
	if err == nil && k != nil {
		b.saved[k] = p
		delete(b.unsaved, k)
	}
	return p, err
}

// finish, once the screen is gone, stops the runs in progress, waits for
// them until deadline and saves every result the overlay did not. It
// returns the files written and the errors met.
func (b *benchRuns) finish(deadline time.Time) ([]string, error) {
	b.mu.Lock()
	b.ready()
	b.quitting = true
	for _, stop := range b.stops {
		stop()
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() { b.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var files []string
	var errs []error
	for _, o := range b.unsaved {
		if b.simulated && o.Result != nil {
			o.Result.MarkSimulated() // the overlay would have
		}
		p, err := b.saveLocked(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, p)
	}
	return files, errors.Join(errs...)
}

// outcomeKey names an outcome by its result, shared by every copy of the
// outcome; nil when there is nothing to save.
func outcomeKey(o tui.BenchOutcome) any {
	switch {
	case o.Result != nil:
		return o.Result
	case o.Sweep != nil:
		return o.Sweep
	}
	return nil
}

// Run runs the preset: quick and custom are one closed-loop run, sweep steps
// the streams to the knee.
func (b benchRunner) Run(ctx context.Context, spec tui.BenchSpec, progress func(tui.BenchProgress)) tui.BenchOutcome {
	return b.rt.benches.run(ctx, spec, func(ctx context.Context) tui.BenchOutcome { return b.rt.runBenchSpec(ctx, spec, progress) })
}

// runBenchSpec runs one benchmark of the session. The demo's hold (the
// simulator's HoldTimeline) is called with true while it runs and false
// when it ends, so the demo's scenario does not change (and restart the
// engine) under it.
func (rt *monitorRuntime) runBenchSpec(ctx context.Context, spec tui.BenchSpec, progress func(tui.BenchProgress)) tui.BenchOutcome {
	if rt.hold != nil {
		rt.hold(true)
		defer rt.hold(false)
	}
	url, named := rt.target(spec.URL)
	key, err := apiKeyFor(url, named)
	if err != nil {
		return tui.BenchOutcome{Err: err}
	}
	cfg := bench.Config{URL: url, APIKey: key, Concurrency: spec.Streams, Duration: spec.Duration,
		InputLen: spec.InputLen, OutputLen: spec.OutputLen, Warmup: 2}
	relay := func(step string, p bench.Progress) {
		progress(tui.BenchProgress{Step: step, Warmup: p.Warmup, Fraction: p.Fraction(), Elapsed: p.Elapsed,
			Sent: p.Sent, Completed: p.Completed, Failed: p.Failed, InFlight: p.InFlight,
			MedianTTFT: p.MedianTTFT, P99TTFT: p.P99TTFT, MedianTPOT: p.MedianTPOT, P99TPOT: p.P99TPOT})
	}
	if spec.Preset == "sweep" {
		sc := bench.SweepConfig{Base: cfg}
		sc.Defaults()
		n := len(sc.Loads())
		sc.OnProgress = func(i int, load float64, p bench.Progress) {
			relay(fmt.Sprintf("%d/%d · %g streams", i+1, n, load), p)
		}
		sw, err := bench.Sweep(ctx, sc)
		if err != nil && len(sw.Steps) == 0 {
			return tui.BenchOutcome{Err: safeErr(err)}
		}
		return tui.BenchOutcome{Sweep: &sw, Err: safeErr(err)}
	}
	res, err := bench.Run(ctx, cfg, func(p bench.Progress) { relay("", p) })
	if err != nil {
		return tui.BenchOutcome{Err: safeErr(err)}
	}
	return tui.BenchOutcome{Result: &res}
}

// Save writes the outcome under $XDG_STATE_HOME/llmtop/bench/ with a
// timestamped name, once.
func (b benchRunner) Save(o tui.BenchOutcome) (string, error) { return b.rt.benches.Save(o) }

func writeBenchOutcome(dir string, o tui.BenchOutcome) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := time.Now().Format("20060102-150405") + "-" + o.Spec.Preset + ".json"
	path := filepath.Join(dir, name)
	var doc any
	switch {
	case o.Result != nil:
		doc = o.Result
	case o.Sweep != nil:
		doc = o.Sweep
	default:
		return "", errors.New("nothing to save")
	}
	return path, writeJSONFile(path, doc)
}

// Saved reads the newest n results under the bench folder, newest first;
// files that do not parse are skipped.
func (b benchRunner) Saved(n int) []tui.BenchOutcome {
	dir, err := b.rt.benches.folder(false)
	if err != nil || dir == "" {
		return nil
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // timestamped names sort by time
	var out []tui.BenchOutcome
	for _, p := range names {
		if len(out) == n {
			break
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var probe struct {
			Steps json.RawMessage `json:"steps"`
		}
		if json.Unmarshal(b, &probe) != nil {
			continue
		}
		o := tui.BenchOutcome{Saved: p}
		if probe.Steps != nil {
			var sw report.Sweep
			if json.Unmarshal(b, &sw) != nil {
				continue
			}
			o.Sweep, o.Spec.Preset = &sw, "sweep"
		} else {
			var r report.Result
			if json.Unmarshal(b, &r) != nil {
				continue
			}
			o.Result = &r
			if i := strings.LastIndexByte(p, '-'); i > 0 {
				o.Spec.Preset = strings.TrimSuffix(filepath.Base(p[i+1:]), ".json")
			}
		}
		out = append(out, o)
	}
	return out
}

// benchDir is $XDG_STATE_HOME/llmtop/bench (~/.local/state when unset).
func benchDir() (string, error) {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no $XDG_STATE_HOME nor home directory to save benchmark results in")
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "llmtop", "bench"), nil
}

// safeErr is err as the screen may show it: an error can quote the URL
// (with its credentials) or the server's answer.
func safeErr(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(model.RedactText(err.Error()))
}
