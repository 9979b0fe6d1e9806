package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop diagnose`: watch the endpoints for a while, run the diagnosis
// rules every refresh (with their hysteresis), and print the findings. The
// exit status makes it usable from scripts and CI: 0 healthy, 1 warnings,
// 2 critical, 3 nothing answered.

var diagnoseFlags struct {
	duration time.Duration
	json     bool
	from     string
}

func init() {
	cmd := &cobra.Command{
		Use:   "diagnose [URL...]",
		Short: "Watch endpoints, then print findings with evidence and the flags to change (exit 0/1/2/3)",
		Long: `Watch each endpoint for --duration (polling every --interval), run the
diagnosis rules on every refresh, and print what is wrong: the evidence with
its source and window, the likely cause, and the exact flags or environment
variables to change for the engine in front of it.

A rule's hold time (KV > 95 % for 5 m, waiting > 50 for 3 m…) is capped at
half the watch, so a condition that held for most of a 30 s watch is
reported. The rules and thresholds are in docs/diagnosis.md.

Exit status: 0 no warnings, 1 warnings, 2 critical findings, 3 no endpoint
answered.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runDiagnose(ctx, cmd, args)
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&diagnoseFlags.duration, "duration", 30*time.Second, "how long to watch before reporting")
	fs.BoolVar(&diagnoseFlags.json, "json", false, "print JSON instead of text")
	fs.StringVar(&diagnoseFlags.from, "from", "", "judge a recording (`FILE` from --record) instead of watching endpoints")
	addRecordFlag(fs)
	engineFlagSet(fs)
	root.AddCommand(cmd)
}

// diagnoseConfig is the rules' configuration: the config file's
// [thresholds] with the --slo-* flags applied (loadConfig), and holds
// capped to fit the watch.
func diagnoseConfig(th config.Thresholds, watch time.Duration) diagnosis.Config {
	c := config.DiagnosisConfig(th)
	c.MaxHold = watch / 2
	c.Clear = min(c.Clear, watch/2)
	return c
}

func runDiagnose(ctx context.Context, cmd *cobra.Command, urls []string) error {
	out := safeOut(cmd.OutOrStdout())
	if diagnoseFlags.from != "" {
		return diagnoseFrom(cmd, diagnoseFlags.from, urls)
	}
	if _, err := parseEngine(engineFlags.engine); err != nil {
		return err
	}
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	if err := checkIntervalFlag(); err != nil {
		return err
	}
	if diagnoseFlags.duration <= 0 {
		return usageErr("--duration %v: want a positive duration, e.g. 30s", diagnoseFlags.duration)
	}
	if err := checkLogFlags(); err != nil {
		return err // as the monitor refuses it: never "engine log free of OOM" from no log
	}
	if len(urls) == 0 {
		urls = append(urls, fileCfg.Endpoints...)
	}
	if len(urls) == 0 && !prometheusOn() {
		urls = foundURLs(discoverLocal(ctx))
	}
	if len(urls) == 0 && !prometheusOn() {
		fmt.Fprint(out, nothingFound)
		return &exitError{code: 3, err: errors.New("")}
	}
	for i, u := range urls {
		urls[i] = normalizeURL(u)
	}
	interval := monitorFlags.interval
	w := newWatch(urls, diagnoseConfig(fileCfg.Thresholds, diagnoseFlags.duration))
	w.start = time.Now()
	h := recordHeader("diagnose", urls, interval, 0, w.cfg, false)
	h.Started = w.start // the watch's window starts here: a replay needs it
	if w.rec, err = openRecording(h, false, nil); err != nil {
		return err
	}
	rep, err := w.run(ctx, diagnoseFlags.duration, interval)
	return w.finish(out, cmd.ErrOrStderr(), rep, err)
}

// finish ends the watch: the recording is closed, then the report printed.
// A recording that failed (a full disk) loses no report: the report is
// printed, the failure said on errOut, and the exit status is exitFailure,
// since the recording asked for is not whole.
func (w *watch) finish(out, errOut io.Writer, rep diagnosis.Report, err error) error {
	rerr := w.rec.close(errOut)
	if err != nil {
		return err
	}
	if w.promStatus != "" {
		fmt.Fprintln(errOut, "llmtop: "+model.RedactText(w.promStatus))
	}
	perr := reportDiagnosis(out, w.result(rep))
	if rerr == nil {
		return perr
	}
	var verdict *exitError
	if perr != nil && !errors.As(perr, &verdict) {
		return perr // the report itself could not be written
	}
	return &exitError{code: exitFailure, err: fmt.Errorf("the report above stands, but --record %s is not whole: %w", w.rec.file(), rerr)}
}

// reportDiagnosis prints the result (text or --json) and returns the exit
// status as an error.
func reportDiagnosis(out io.Writer, res diagnoseResult) error {
	if diagnoseFlags.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printDiagnosis(out, res)
	}
	if res.ExitCode != 0 {
		return &exitError{code: res.ExitCode, err: errors.New("")}
	}
	return nil
}

// watch is diagnose's face over a session: the sources deliver into the
// monitor core (the same core the TUI drives), and the session's clock
// runs the rules every interval. Its methods (onScrape, apply, evaluate)
// run on whichever goroutine owns the core: the session's during run,
// the caller's after it and for a recording (diagnose --from).
type watch struct {
	urls  []string
	cfg   diagnosis.Config
	mon   *core.Monitor
	start time.Time
	rec   *recorder // --record; nil records nothing
	// promStatus is the newest --prometheus refresh's error ("" none).
	promStatus string
	promSeen   bool // a --prometheus refresh was read
	// logs are engine logs the face attaches besides --log (tune's
	// engine's).
	logs []string
	// simGPU, when set, stands in for NVML (tests on the simulator).
	simGPU func() session.SimGPULoad
	// sess drives the core while run watches (nil otherwise).
	sess *session.Session
}

// newWatch watches urls; the core names them as every face does, with any
// credential redacted (the sources tag their messages so).
func newWatch(urls []string, cfg diagnosis.Config) *watch {
	ids := make([]string, len(urls))
	for i, u := range urls {
		ids[i] = model.RedactURL(u)
	}
	return &watch{urls: urls, cfg: cfg, mon: core.New(core.Options{Endpoints: ids, Diagnosis: cfg, Store: storeConfig()})}
}

func (w *watch) onScrape(sc model.Scrape) {
	for i := range sc.Samples {
		sc.Samples[i].Endpoint = sc.Endpoint
	}
	w.rec.record(sc)
	w.mon.Apply(sc)
}

// apply takes a source's message into the core: log lines (events,
// stats samples, lifecycle lines) and /proc's word on a silent port.
func (w *watch) apply(msg any) {
	w.rec.record(msg)
	if in, ok := msg.(model.Input); ok {
		w.mon.Apply(in)
	}
}

// open builds the session that will drive the core while the watch runs:
// every registered source (the engines, the GPUs, the logs, the host,
// --prometheus), the clock evaluating the rules every interval. A face
// that hands the watch inputs from other goroutines (tune's benchmark)
// opens it before it runs.
func (w *watch) open(interval time.Duration) {
	if w.sess != nil {
		return
	}
	if w.start.IsZero() {
		w.start = time.Now()
	}
	w.sess = session.New(session.Options{
		Monitor: w.mon, LogsOn: logsAttached(w.logs),
		Env:     session.Env{URLs: w.urls, Interval: interval, Window: monitorFlags.window, SimGPU: w.simGPU, Logs: w.logs},
		Sources: sessionSources(sourcePlugins),
		Record:  w.rec.record,
		Clock:   func(_ *core.Monitor, now time.Time) { w.evaluate(now) },
		Other: func(msg any) {
			if st, ok := msg.(tui.SourceStatusMsg); ok && st.Name == "prometheus" {
				w.promStatus, w.promSeen = st.Err, true
			}
		},
	})
}

// run watches for d and returns the final report.
func (w *watch) run(ctx context.Context, d, interval time.Duration) (diagnosis.Report, error) {
	w.open(interval)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := w.sess.Start(ctx)
	if err == nil {
		<-ctx.Done()
	}
	// The sources stop; the log commands got SIGTERM as the watch ended:
	// wait for them to be gone, or they outlive llmtop. The core is this
	// goroutine's from here.
	w.sess.Close(quitWait)
	if err != nil {
		return diagnosis.Report{}, err
	}
	if prometheusOn() && !w.promSeen {
		// never "every endpoint answers" of no endpoint at all
		w.promStatus = model.RedactURL(promFlags.url) + ": Prometheus did not answer before the watch ended (a hung or overloaded server?)"
	}
	return w.evaluate(time.Now()), nil
}

// do runs f with the core on the goroutine that drives it while the watch
// runs (opened first); false once it has ended.
func (w *watch) do(f func()) bool {
	return w.sess.Do(func(*core.Monitor) { f() })
}

// evaluate runs the rules over everything seen since the watch began (as
// a replay of its recording does: session.Watch).
func (w *watch) evaluate(now time.Time) diagnosis.Report {
	w.rec.recordAt(now, recording.Tick{})
	return session.Watch{Mon: w.mon, Start: w.start}.Evaluate(now)
}

// diagnoseResult is the JSON document (and what the text is printed from).
type diagnoseResult struct {
	Time      time.Time           `json:"time"`
	WatchedS  float64             `json:"watched_s"`
	Status    string              `json:"status"` // ok, warn, crit, unreachable
	ExitCode  int                 `json:"exit_code"`
	SLOTTFTms float64             `json:"slo_ttft_ms"`
	SLOITLms  float64             `json:"slo_itl_ms"`
	Endpoints []diagnoseEndpoint  `json:"endpoints"`
	Findings  []diagnosis.Finding `json:"findings"`
	Closed    []diagnosis.Finding `json:"closed"` // opened and closed again during the watch
	Checked   []string            `json:"checked"`
	Missing   []string            `json:"missing"`
	Simulated bool                `json:"simulated,omitempty"`
	// Recording and Notes: judged from a recording (--from), and what its
	// reader skipped.
	Recording string   `json:"recording,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

type diagnoseEndpoint struct {
	URL     string       `json:"url"`
	Engine  model.Engine `json:"engine"`
	Version string       `json:"version"`
	Health  model.Health `json:"health"`
	// Status is the core's word for it, the screen's badge (UP, DEGRADED, DOWN, …).
	Status    string `json:"status"`
	Answered  bool   `json:"answered"`
	Error     string `json:"error,omitempty"`
	Hint      string `json:"hint,omitempty"`
	Simulated bool   `json:"simulated,omitempty"`
	// State is the engine's lifecycle, Runs its run ledger (oldest first):
	// see docs/snapshot-json.md.
	State       model.Lifecycle `json:"state"`
	StateDetail string          `json:"state_detail,omitempty"`
	Runs        []model.Run     `json:"runs"`
}

func (w *watch) result(rep diagnosis.Report) diagnoseResult {
	res := diagnoseResult{
		Time: rep.Time.UTC(), WatchedS: rep.Time.Sub(w.start).Round(100 * time.Millisecond).Seconds(),
		SLOTTFTms: float64(w.cfg.SLOTTFT) / 1e6, SLOITLms: float64(w.cfg.SLOITL) / 1e6,
		Findings: rep.Findings, Checked: rep.Checked, Missing: rep.Missing,
	}
	res.Checked, res.Missing = unreadLogs(res.Checked, res.Missing, w.logs)
	if w.promStatus != "" {
		res.Missing = append(res.Missing, "endpoints from --prometheus: "+model.RedactText(w.promStatus))
	}
	if res.Findings == nil {
		res.Findings = []diagnosis.Finding{}
	}
	res.Closed = []diagnosis.Finding{}
	for _, f := range w.mon.History() {
		if !f.Active() {
			res.Closed = append(res.Closed, f)
		}
	}
	answered := false
	for _, u := range w.mon.URLs() { // the given ones, and those --prometheus found
		var id model.Identity
		e := diagnoseEndpoint{URL: u, State: model.LifeUnknown, Runs: w.mon.RunsOf(u), Status: string(w.mon.StatusOf(u))}
		ep := w.mon.Endpoint(u)
		if ep != nil {
			id = ep.Identity
			e.Error, e.Hint, e.State, e.StateDetail = ep.Err, ep.Hint, ep.Life, ep.LifeDetail
		}
		if e.Runs == nil {
			e.Runs = []model.Run{}
		}
		e.Engine, e.Version, e.Health, e.Simulated = id.Engine, id.Version, id.Health, id.Simulated
		// the core's word: a failed scrape that is not "down" (401, 404,
		// 5xx, a bad or stalled body, a redirect) is an answer too
		e.Answered = ep.Answered()
		if e.Health == "" {
			e.Health = model.HealthUnknown
		}
		answered = answered || e.Answered
		res.Simulated = res.Simulated || id.Simulated
		res.Endpoints = append(res.Endpoints, e)
	}
	sort.SliceStable(res.Endpoints, func(i, j int) bool { return res.Endpoints[i].URL < res.Endpoints[j].URL })
	res.Status, res.ExitCode = "ok", 0
	switch {
	case !answered:
		res.Status, res.ExitCode = "unreachable", 3
	case worst(rep.Findings) == model.SevCrit:
		res.Status, res.ExitCode = "crit", 2
	case worst(rep.Findings) == model.SevWarn:
		res.Status, res.ExitCode = "warn", 1
	}
	return res
}

// worst is the highest severity among findings (info when none).
func worst(fs []diagnosis.Finding) model.Severity {
	s := model.SevInfo
	for _, f := range fs {
		s = max(s, f.Severity)
	}
	return s
}

// unreadLogs moves the log rules from checked to missing when a --log
// file never existed during the watch: nothing was read, so nothing is
// "free of OOM" (the monitor waits for such a file; a 30 s verdict cannot).
func unreadLogs(checked, missing, extra []string) ([]string, []string) {
	var gone []string
	for _, f := range append(slices.Clip(logFlags.files), extra...) {
		if _, err := os.Stat(f); err != nil {
			gone = append(gone, model.Clean(f))
		}
	}
	if len(gone) == 0 {
		return checked, missing
	}
	keep := checked[:0:0]
	for _, c := range checked {
		if strings.HasPrefix(c, "engine log") {
			missing = append(missing, c+": not checked, --log "+strings.Join(gone, ", ")+" does not exist")
			continue
		}
		keep = append(keep, c)
	}
	return keep, missing
}
