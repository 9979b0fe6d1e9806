package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/prometheus"
	"github.com/llmtop/llmtop/tui"
)

// The Prometheus source: with --prometheus URL, llmtop reads every engine
// that Prometheus scrapes (sources/prometheus) instead of scraping them
// itself. The monitor, `snapshot` and `diagnose` take it, and so can any
// face that builds a core (the exporter): newPrometheus builds the source
// from the flags, prometheusOnce feeds one refresh into a core.

var promFlags struct {
	url, match         string
	user, passwordFile string
	bearerFile         string
	timeout            time.Duration
	maxTargets         int
}

func init() {
	registerSource(sourcePlugin{Name: "prometheus", Flags: promFlagSet, Start: startPrometheus,
		On: func(*session.Env) bool { return prometheusOn() }})
}

// prometheusMinInterval is the shortest refresh of a fleet read through
// Prometheus.
const prometheusMinInterval = 5 * time.Second

func promFlagSet(fs *pflag.FlagSet) {
	fs.StringVar(&promFlags.url, "prometheus", "", "read every engine this Prometheus scrapes (`URL`, e.g. http://prometheus:9090) instead of scraping endpoints")
	fs.StringVar(&promFlags.match, "match", "", "with --prometheus: label matchers ANDed into every query, e.g. 'namespace=\"prod\",job=~\"vllm-.*\"'")
	fs.StringVar(&promFlags.user, "prometheus-user", "", "with --prometheus: basic-auth user")
	fs.StringVar(&promFlags.passwordFile, "prometheus-password-file", "", "with --prometheus: `FILE` holding the basic-auth password (never printed)")
	fs.StringVar(&promFlags.bearerFile, "prometheus-bearer-token-file", "", "with --prometheus: `FILE` holding a bearer token (never printed)")
	fs.DurationVar(&promFlags.timeout, "prometheus-timeout", prometheus.DefaultTimeout, "with --prometheus: bound on each refresh's queries")
	fs.IntVar(&promFlags.maxTargets, "prometheus-max-targets", prometheus.DefaultMaxTargets, "with --prometheus: follow at most `N` engine targets (the rest are dropped with a note; narrow --match instead)")
}

// prometheusOn reports whether --prometheus was given.
func prometheusOn() bool { return promFlags.url != "" }

// storeConfig sizes the core's histories: with --prometheus, a point per
// refresh (5 s) instead of one a second, a fifth of the memory for each of
// up to --prometheus-max-targets targets (BenchmarkMemoryPerTarget).
func storeConfig() model.StoreConfig {
	if prometheusOn() {
		return prometheus.StoreConfig(prometheusMinInterval)
	}
	return model.StoreConfig{}
}

// newPrometheus builds the source from the flags. The secrets are read from
// their files here; an error never quotes them.
func newPrometheus(window, interval time.Duration) (*prometheus.Source, error) {
	cfg := prometheus.Config{URL: promFlags.url, Match: promFlags.match, User: promFlags.user,
		Window: window, Interval: interval, Timeout: promFlags.timeout, MaxTargets: promFlags.maxTargets}
	read := func(flag, path string) (string, error) {
		if path == "" {
			return "", nil
		}
		b, err := readLimited(path, 64<<10)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("--%s %s: %v", flag, model.Clean(path), err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	var err error
	if cfg.Password, err = read("prometheus-password-file", promFlags.passwordFile); err != nil {
		return nil, err
	}
	if cfg.Bearer, err = read("prometheus-bearer-token-file", promFlags.bearerFile); err != nil {
		return nil, err
	}
	if cfg.Password != "" && cfg.User == "" {
		return nil, usageErr("--prometheus-password-file needs --prometheus-user")
	}
	return prometheus.New(cfg)
}

// startPrometheus is the monitor's source: a refresh every interval, its
// messages to the core, its error to the source status line.
func startPrometheus(ctx context.Context, env *session.Env) error {
	if !prometheusOn() {
		return nil
	}
	// The window the screen starts with (the flag, else the config file's).
	src, err := newPrometheus(env.Window, max(env.Interval, prometheusMinInterval))
	if err != nil {
		return err
	}
	env.OnInterval = append(env.OnInterval, func(d time.Duration) { src.SetInterval(max(d, prometheusMinInterval)) })
	env.OnWindow = append(env.OnWindow, src.SetWindow)
	done := make(chan struct{}) // a session's Close waits for the last refresh
	env.Stopped = append(env.Stopped, done)
	go func() {
		defer close(done)
		src.Run(ctx, func(r prometheus.Refresh) {
			if ctx.Err() != nil {
				return // the refresh the end cut short: not the fleet's state
			}
			// One message for the whole refresh: the rules run once on it
			// (and a recording keeps it whole: recording's "batch").
			env.Send(tui.BatchMsg(r.Msgs))
			env.Send(tui.SourceStatusMsg{Name: "prometheus", Err: refreshStatus(src, r)})
		})
	}()
	return nil
}

// refreshStatus is the line the screen shows for a refresh that failed in
// part or whole ("" when it did not).
func refreshStatus(src *prometheus.Source, r prometheus.Refresh) string {
	var parts []string
	if r.Err != "" {
		parts = append(parts, src.URL()+": "+r.Err)
	}
	if len(r.Warnings) > 0 {
		parts = append(parts, "partial data: "+strings.Join(r.Warnings, "; "))
	}
	if r.Err == "" && r.Targets == 0 && r.Gone == 0 {
		parts = append(parts, src.URL()+": no engine target found ("+engines.PrefixList()+" metrics); check --match and Prometheus's /targets")
	}
	return strings.Join(parts, "; ")
}

// historySteps is how many past refreshes a snapshot replays.
const historySteps = 6

// promDocument is the snapshot document of a fleet read through
// Prometheus: the core's document and what the refresh found or why not.
type promDocument struct {
	core.Document
	Prometheus promStatus `json:"prometheus"`
}

// promStatus is the "prometheus" object of that document.
type promStatus struct {
	URL     string  `json:"url"`
	Match   string  `json:"match,omitempty"`
	WindowS float64 `json:"window_s"`
	Targets int     `json:"targets"`
	Queries int     `json:"queries"`
	Error   string  `json:"error,omitempty"`
}

// prometheusDocument is one refresh of the fleet fed into a fresh core and
// judged. A refresh that found no engine target is exit status 3.
func prometheusDocument(ctx context.Context, window time.Duration, cfg diagnosis.Config) (promDocument, error) {
	src, err := newPrometheus(window, time.Second)
	if err != nil {
		return promDocument{}, err
	}
	// The rules' hold times are judged over Prometheus's own history: the
	// window is replayed as historySteps refreshes (instant queries at
	// past times), so a condition that held all through the window opens
	// its finding, as in a monitor that had watched it (holds capped at
	// half the window, as diagnose caps them at half its watch).
	cfg.MaxHold = window / 2
	cfg.Clear = min(cfg.Clear, window/2)
	mon := core.New(core.Options{Window: window, Diagnosis: cfg, Store: storeConfig()})
	end := time.Now()
	var r prometheus.Refresh
	for i := historySteps; i >= 0; i-- {
		t := end.Add(-window * time.Duration(i) / historySteps)
		r = src.Refresh(ctx, t)
		// one refresh, as the monitor takes it: the batch, then the clock
		session.Feed(mon, recording.Record{Time: t, Msg: model.Batch(r.Msgs)})
		if r.Err != "" && r.Targets == 0 {
			break // Prometheus is down or refuses: the next steps would wait as long
		}
	}
	mon.Evaluate(r.Time)
	doc := promDocument{Document: mon.Snapshot(), Prometheus: promStatus{
		URL: src.URL(), Match: model.Clean(promFlags.match), WindowS: window.Seconds(),
		Targets: r.Targets, Queries: r.Queries, Error: refreshStatus(src, r),
	}}
	if r.Targets == 0 {
		return doc, &exitError{code: 3, err: errors.New(doc.Prometheus.Error)}
	}
	return doc, nil
}

// snapshotPrometheus is `llmtop snapshot --prometheus URL`.
func snapshotPrometheus(ctx context.Context, out io.Writer, errOut io.Writer, args []string, asJSON bool) error {
	if len(args) > 0 {
		return fmt.Errorf("snapshot --prometheus reads its endpoints from Prometheus: drop %s", model.Clean(strings.Join(args, " ")))
	}
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	if err := config.CheckWindow(monitorFlags.window); err != nil {
		return usageErr("--window %s: %v", durText(monitorFlags.window), err)
	}
	doc, derr := prometheusDocument(ctx, monitorFlags.window, config.DiagnosisConfig(fileCfg.Thresholds))
	if doc.Prometheus.URL == "" {
		return derr
	}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		printSnapshot(out, doc.SnapshotJSON)
		if doc.Prometheus.Error != "" && derr == nil {
			fmt.Fprintln(errOut, "llmtop: "+doc.Prometheus.Error)
		}
	}
	return derr
}
