package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/engine"
	"github.com/llmtop/llmtop/sources/host"
	"github.com/llmtop/llmtop/sources/probe"
	"github.com/llmtop/llmtop/sources/procfs"
)

// `llmtop snapshot`: read each endpoint twice, an interval apart, and print
// the normalised state: a table for people, the JSON contract
// (docs/snapshot-json.md) for scripts.

var snapshotFlags struct {
	json     bool
	interval time.Duration
	from, at string
}

func init() {
	cmd := &cobra.Command{
		Use:   "snapshot [URL...]",
		Short: "Scrape endpoints twice and print their state (a table, or JSON with --json)",
		Long: `Scrape each endpoint twice, --interval apart, so counters become rates and
histograms become windowed percentiles, then print the state. Without a URL,
the config file's endpoints are read, or else the engines' default ports on
127.0.0.1 are probed. The config file (--config) is read as the monitor reads
it: its [thresholds] and the --slo-* flags are the rules' objectives.

A value the engine does not expose is "--" in the table and null in the JSON,
never 0. Exit status 3 when no endpoint answers.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if snapshotFlags.from != "" {
				if len(args) > 0 {
					return fmt.Errorf("snapshot --from reads its endpoints from the recording: drop %s", strings.Join(args, " "))
				}
				return snapshotFrom(safeOut(cmd.OutOrStdout()), cmd.ErrOrStderr(), snapshotFlags.from, snapshotFlags.at, snapshotFlags.json)
			}
			if prometheusOn() {
				return snapshotPrometheus(ctx, safeOut(cmd.OutOrStdout()), cmd.ErrOrStderr(), args, snapshotFlags.json)
			}
			return runSnapshot(ctx, safeOut(cmd.OutOrStdout()), args, snapshotFlags.json, snapshotFlags.interval)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&snapshotFlags.json, "json", false, "print JSON (the contract in docs/snapshot-json.md)")
	fs.DurationVar(&snapshotFlags.interval, "interval", 2*time.Second, "time between the two scrapes (rates and percentiles cover it)")
	fs.StringVar(&snapshotFlags.from, "from", "", "the state in a recording (`FILE` from --record) instead of the endpoints'")
	fs.StringVar(&snapshotFlags.at, "at", "", "with --from: the moment, 14:02:11, an RFC 3339 time or +10m from the start (default its end)")
	engineFlagSet(fs)
	root.AddCommand(cmd)
}

// endpointResult is what the two scrapes of one endpoint gave.
type endpointResult struct {
	url     string
	scrapes []model.Scrape
	// owner is the local process serving it (/proc), when it answered: its
	// command line is the run's configuration (llama.cpp's KV layout).
	owner *model.PortOwner
	// host is what sources/host read around it (its processes, memory,
	// cgroup, disks) and the kernel's OOM kills of its processes, at the
	// second scrape.
	host []model.Input
}

func runSnapshot(ctx context.Context, out io.Writer, urls []string, asJSON bool, interval time.Duration) error {
	if _, err := parseEngine(engineFlags.engine); err != nil {
		return err
	}
	if interval < engine.MinInterval {
		// the poller would wait 250 ms anyway: say so rather than pretend
		return usageErr("--interval %s: want at least %s between the two scrapes", durText(interval), durText(engine.MinInterval))
	}
	// The config file is read as the monitor and diagnose read it: a
	// broken one is an error naming its line, its [thresholds] (and the
	// --slo-* flags) are the rules' objectives, its endpoints the default.
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		urls = fileCfg.Endpoints
	}
	if len(urls) == 0 {
		found := discoverLocal(ctx)
		urls = foundURLs(found)
		if len(urls) == 0 {
			return &exitError{code: 3, err: errors.New(nothingAnswered(found))}
		}
	}
	logMsgs, untimed, err := snapshotLogs(urls, interval)
	if err != nil {
		return err
	}
	results := make([]endpointResult, len(urls))
	// The host is read as the scrapes start and again after them: CPU and
	// swap are rates over the interval between.
	var hostLook *hostLooks
	if !hostFlags.noHost {
		ids := make([]string, 0, len(urls))
		for _, u := range urls {
			if cfg, err := engineConfig(u, interval); err == nil {
				id, _ := engine.SplitURL(cfg.URL)
				ids = append(ids, id)
			}
		}
		cfg := host.Default()
		// The kernel log is followed from the first look on: a snapshot's
		// second is too soon for a kill, and would start journalctl for
		// nothing where /dev/kmsg is not readable.
		cfg.Kmsg = nil
		if hostLook = newHostLooks(ids, nil, cfg, procfs.FS()); hostLook != nil {
			hostLook.read(time.Now())
		}
	}
	var wg sync.WaitGroup
	var gpus *model.GPUSnapshot
	wg.Add(1)
	go func() { // NVML is read while the endpoints are scraped
		defer wg.Done()
		gpus = readGPUsOnce()
	}()
	for i, u := range urls {
		cfg, err := engineConfig(u, interval)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = scrapeTwice(ctx, cfg)
		}()
	}
	wg.Wait()
	if hostLook != nil {
		for _, m := range hostLook.read(time.Now()) {
			in, ok := m.(model.Input)
			if !ok {
				continue
			}
			for i := range results {
				if hostEndpoint(in) == results[i].url {
					results[i].host = append(results[i].host, in)
				}
			}
		}
	}
	var readings []model.GPUSnapshot
	if gpus != nil {
		if gpus.Time.IsZero() {
			gpus.Time = time.Now()
		}
		readings = append(readings, *gpus)
	}
	// The GPUs go into the core with the scrapes: the GPU rules run here
	// as in the monitor.
	snap := buildSnapshot(time.Now(), results, config.DiagnosisConfig(fileCfg.Thresholds), readings, logMsgs...)
	markUntimed(&snap.SnapshotJSON, untimed)
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(snap); err != nil {
			return err
		}
	} else {
		printSnapshot(out, snap.SnapshotJSON)
	}
	if reason := noneAnswered(snap, results); reason != "" {
		return &exitError{code: 3, err: errors.New(reason)}
	}
	return nil
}

func nothingAnswered(found []probe.Found) string {
	if len(found) > 0 {
		return fmt.Sprintf("no LLM inference server on 127.0.0.1: %s answers HTTP but is not a known engine (pass its URL and --engine)", found[0].URL)
	}
	return "no LLM inference server answered on 127.0.0.1 (ports 8000, 30000, 8080, 9931, 3000, 80, 11434, 8002, and those engine processes listen on); pass a URL"
}

// scrapeTwice polls an endpoint for two scrapes, --interval apart; one when
// nothing listens there (a second would only wait).
func scrapeTwice(ctx context.Context, cfg engine.Config) endpointResult {
	var res endpointResult
	res.url, _ = engine.SplitURL(cfg.URL)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	look := newPortLook(cfg.URL)
	engine.NewPoller(cfg).Run(ctx, func(sc model.Scrape) {
		res.scrapes = append(res.scrapes, sc)
		if o, ok := look.after(sc); ok && o.PID > 0 && sc.OK() {
			res.owner = &o
		}
		if len(res.scrapes) == 2 || sc.ErrKind == model.ErrRefused {
			cancel()
		}
	})
	return res
}

// noneAnswered is the one-line reason when no endpoint answered at all (the
// core's word, as diagnose's exit status 3 reads it).
func noneAnswered(doc core.Document, results []endpointResult) string {
	for _, e := range doc.Endpoints {
		if e.Answered {
			return ""
		}
	}
	if len(results) == 1 && len(results[0].scrapes) > 0 {
		sc := results[0].scrapes[len(results[0].scrapes)-1]
		return "nothing answered: " + sc.Err
	}
	return fmt.Sprintf("none of the %d endpoints answered", len(results))
}

// buildSnapshot feeds every endpoint's scrapes, in time order, into the
// monitor core (the one the TUI and diagnose drive) and reads its document
// over everything it saw: one entry per endpoint and model, or one entry
// with null metrics when the endpoint gave none, with the findings the
// rules reach on those scrapes and the GPU readings (in time order with
// them: the GPU rules run as in the monitor).
func buildSnapshot(now time.Time, results []endpointResult, cfg diagnosis.Config, gpus []model.GPUSnapshot, logMsgs ...any) core.Document {
	urls := make([]string, len(results))
	var all []model.Scrape
	for i, r := range results {
		urls[i] = r.url
		for _, sc := range r.scrapes {
			sc.Endpoint = r.url
			for j := range sc.Samples {
				sc.Samples[j].Endpoint = r.url
			}
			all = append(all, sc)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	mon := core.New(core.Options{Endpoints: urls, Window: model.DefaultStoreConfig.MaxWindow, Diagnosis: cfg})
	if len(logMsgs) > 0 { // --log: read before the scrapes (snapshot_log.go)
		mon.SetLogsOn()
		for _, m := range logMsgs {
			if in, ok := m.(model.Input); ok {
				mon.Apply(in)
			}
		}
	}
	owners := map[string]*model.PortOwner{}
	for _, r := range results {
		if r.owner != nil {
			o := *r.owner
			o.Endpoint = r.url
			owners[r.url] = &o
		}
	}
	// In time order, as the monitor takes them: each input, then the rules'
	// chance to run at its time (session.Feed, as a replay feeds them).
	feed := func(t time.Time, in model.Input) { session.Feed(mon, recording.Record{Time: t, Msg: in}) }
	gi := 0
	for _, sc := range all {
		for ; gi < len(gpus) && !gpus[gi].Time.After(sc.Time); gi++ {
			feed(gpus[gi].Time, gpus[gi])
		}
		feed(sc.Time, sc)
		if o := owners[sc.Endpoint]; o != nil {
			feed(sc.Time, *o) // after its first scrape, as the monitor does
			delete(owners, sc.Endpoint)
		}
	}
	for ; gi < len(gpus); gi++ {
		feed(gpus[gi].Time, gpus[gi])
	}
	for _, r := range results {
		for _, in := range r.host {
			mon.Apply(in)
		}
	}
	mon.Evaluate(now)
	return mon.Snapshot()
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// hostEndpoint is the endpoint a host source message is about.
func hostEndpoint(in model.Input) string {
	switch x := in.(type) {
	case model.HostReading:
		return x.Endpoint
	case model.Event:
		return x.Endpoint
	}
	return ""
}
