package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/exporter"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
)

// `llmtop export --listen ADDR [URL...]`: the core, driven as the monitor
// drives it, served to Prometheus on /metrics (docs/fleet.md).

var exportFlags struct {
	listen string
}

func init() {
	cmd := &cobra.Command{
		Use:   "export [URL...]",
		Short: "Serve llmtop's view of the endpoints and its diagnosis on /metrics for Prometheus",
		Long: `Watch the endpoints as the monitor does (engine metrics, GPUs, logs with
--log…) and serve what llmtop sees on http://ADDR/metrics in the Prometheus
text format: running, waiting, KV usage, windowed TTFT/TPOT/ITL percentiles
and token rates per endpoint and model, each endpoint's state, and every open
diagnosis finding as llmtop_finding{endpoint,id,category,severity} 1 (absent
once it closes), with its title and suggested action in llmtop_finding_info.

A value the engine does not expose is absent, not 0. Endpoint labels are the
URLs with any credential redacted. Alert on the findings with the rules that
` + "`llmtop rules`" + ` prints. The series are listed in docs/fleet.md.`,
		Example: `  llmtop export --listen :9469 http://gpu1:8000 http://gpu2:8000
  curl -s localhost:9469/metrics | grep llmtop_finding`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmdContext(cmd), cmd, args)
		},
	}
	cmd.Flags().StringVar(&exportFlags.listen, "listen", "127.0.0.1:9469", "address to serve /metrics on (\":9469\" for every interface)")
	root.AddCommand(cmd)
}

func runExport(ctx context.Context, cmd *cobra.Command, args []string) error {
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	if err := checkIntervalFlag(); err != nil {
		return err
	}
	if _, err := parseEngine(engineFlags.engine); err != nil {
		return err
	}
	window := pick(monitorFlags.window, fileCfg.Window, flagSet("window"))
	if err := config.CheckWindow(window); err != nil {
		return usageErr("--window %s: %v", durText(window), err)
	}
	urls := args
	if len(urls) == 0 {
		urls = append(urls, fileCfg.Endpoints...)
	}
	if len(urls) == 0 && !otherSourceGiven(cmd) {
		urls = foundURLs(discoverLocal(ctx))
	}
	if len(urls) == 0 && !otherSourceGiven(cmd) {
		fmt.Fprint(cmd.OutOrStdout(), nothingFound)
		return &exitError{code: 3, err: errors.New("")}
	}
	for i, u := range urls {
		urls[i] = normalizeURL(u)
	}
	ln, err := net.Listen("tcp", exportFlags.listen)
	if err != nil {
		hint := "want HOST:PORT, e.g. :9469 or 127.0.0.1:9469"
		if errors.Is(err, syscall.EADDRINUSE) {
			hint = "something already listens there: pick another port"
		}
		return fmt.Errorf("--listen %s: %w (%s)", exportFlags.listen, err, hint)
	}
	interval := pick(monitorFlags.interval, fileCfg.Interval, flagSet("interval"))
	col := exporter.New(version)
	what := fmt.Sprintf("%d endpoint(s)", len(urls))
	if otherSourceGiven(cmd) {
		what = "the endpoints --prometheus finds"
		if len(urls) > 0 {
			what += fmt.Sprintf(" and %d more", len(urls))
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "llmtop export: serving http://%s/metrics for %s; Ctrl-C stops\n", ln.Addr(), what)
	return serveExport(ctx, ln, col, exportSetup{
		URLs: urls, Interval: interval,
		Core:    core.Options{Window: window, Diagnosis: config.DiagnosisConfig(fileCfg.Thresholds), Store: storeConfig()},
		Sources: sourcePlugins, LogsOn: logsAttached(nil),
	})
}

// otherSourceGiven reports whether a source that brings its own endpoints
// was asked for (--prometheus URL reads a fleet from a Prometheus server):
// then no URL is needed.
func otherSourceGiven(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("prometheus")
	return f != nil && f.Changed
}

// exportSetup is what the exporter watches: the endpoints' URLs and the
// sources to start on them (every registered source by default, so a
// source wired in a wire_*.go file, --prometheus included, feeds the
// exporter as it feeds the screen).
type exportSetup struct {
	URLs     []string
	Interval time.Duration
	Core     core.Options
	Sources  []sourcePlugin
	// LogsOn: a log is attached (--log…), so the log rules judge from the
	// start instead of saying "no log" until its first line.
	LogsOn bool
	// MaxConns and IdleTimeout replace exportMaxConns and
	// exportIdleTimeout when set (tests).
	MaxConns    int
	IdleTimeout time.Duration
}

// serveExport drives one core from the sources (a session), publishes a
// View after every refresh, and serves the collector on ln until ctx ends.
func serveExport(ctx context.Context, ln net.Listener, col *exporter.Collector, s exportSetup) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ids := make([]string, 0, len(s.URLs))
	for _, u := range s.URLs {
		ids = append(ids, model.RedactURL(u)) // the label: no URL credential
	}
	s.Core.Endpoints = ids
	sess := session.New(session.Options{
		Core: s.Core, LogsOn: s.LogsOn,
		Env:     session.Env{URLs: s.URLs, Interval: s.Interval},
		Sources: sessionSources(s.Sources),
		// the readers (the HTTP scrapes) get a copy, never the core
		Publish: func(mon *core.Monitor) { col.Publish(exporter.Capture(mon)) },
		StartErr: func(name string, err error) {
			fmt.Fprintf(safeOut(os.Stderr), "llmtop export: %s: %v\n", name, err)
		},
	})
	_ = sess.Start(ctx) // StartErr says what failed
	defer sess.Close(quitWait)

	// llmtop's own process (CPU, memory, file descriptors) and Go
	// runtime series beside its view: the exporter's own health.
	reg := prometheus.NewRegistry()
	reg.MustRegister(col, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Timeout: 10 * time.Second}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "llmtop export: the series are on /metrics")
	})
	conns := newConnLimit(cmp.Or(s.MaxConns, exportMaxConns))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 15 * time.Second,
		IdleTimeout: cmp.Or(s.IdleTimeout, exportIdleTimeout), ConnState: conns.state}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	cancel()
	shut, stop := context.WithTimeout(context.Background(), 2*time.Second)
	_ = srv.Shutdown(shut)
	stop()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
