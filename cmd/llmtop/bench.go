package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// `llmtop bench URL`: the quick benchmark, headless. Same engine and JSON as
// the TUI's `b`; docs/bench.md describes both.

var benchFlags struct {
	api, model, rate, save               string
	concurrency, numRequests, warmup     int
	inputLen, outputLen, prefixLen       int
	duration, timeout, grace             time.Duration
	sloTTFT, sloTPOT, sloE2EL, sweepStep time.Duration
	burstiness, sweepMax                 float64
	seed                                 uint64
	sweep, asJSON, noExtras, noServer    bool
}

func init() {
	cmd := &cobra.Command{
		Use:   "bench URL",
		Short: "Stream load at an endpoint and report TTFT/TPOT/ITL/throughput (vllm bench serve's metrics)",
		Long: `Send streaming requests to an OpenAI-compatible (/v1/chat/completions,
/v1/completions) or Ollama (/api/generate, /api/chat) endpoint and report the
metrics of ` + "`vllm bench serve`" + `, under its JSON names. TPOT excludes the first
token; ITL is every gap between content chunks; TTFT is the first chunk with
content, not the role-only chunk.

By default 16 streams for 30 s (closed loop). --rate R makes it an open loop
(Poisson arrivals, --burstiness for gamma), with --concurrency as the cap.
--rate inf sends all --num-requests at once, as vllm bench serve does (with
--concurrency N: at most N in flight, i.e. a closed loop of N streams).
--sweep steps the streams 1, 2, 4, … up to --sweep-max (or, with --rate, the
rate up to R) and reports the knee. Ctrl-C stops it and prints what was
measured. While it runs, the server's own metrics are scraped so the result
shows the server's TTFT/ITL/queue next to the client's (--no-server-view
turns this off).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			return runBench(ctx, cmd, args[0])
		},
	}
	fs := cmd.Flags()
	f := &benchFlags
	fs.StringVar(&f.api, "api", "chat", "protocol: chat, completions (OpenAI, SSE), ollama-generate, ollama-chat (NDJSON)")
	fs.StringVar(&f.model, "model", "", "model name (default: the first of /v1/models, or /api/tags for Ollama)")
	fs.StringVar(&engineFlags.apiKey, "api-key", "", "API key sent as \"Authorization: Bearer …\" to URL's host and port only (default $OPENAI_API_KEY); never printed or saved; visible in ps: prefer --api-key-file")
	fs.StringVar(&apiKeyFile, "api-key-file", "", "`FILE` holding the API key (never printed)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "streams of the closed loop (default 16), or the cap on requests in flight with --rate")
	fs.StringVar(&f.rate, "rate", "", "request rate in req/s for an open loop; inf = all --num-requests at once (at most --concurrency in flight); default: the closed loop")
	fs.Float64Var(&f.burstiness, "burstiness", 1, "arrival burstiness with --rate: 1 Poisson, <1 burstier, inf constant spacing")
	fs.DurationVar(&f.duration, "duration", 0, "how long to send load (default 30s unless --num-requests)")
	fs.DurationVar(&f.grace, "grace", 0, "with --duration: how long the requests in flight at its end may finish before they are stopped and counted as cancelled (default a tenth of --duration, 2s–30s)")
	fs.IntVar(&f.numRequests, "num-requests", 0, "how many requests to send (instead of --duration)")
	fs.IntVar(&f.inputLen, "input-len", 256, "prompt length in words (≈ tokens; the counts reported come from the server's usage)")
	fs.IntVar(&f.outputLen, "output-len", 128, "max_tokens (ignore_eos and min_tokens are sent too where the server accepts them)")
	fs.IntVar(&f.prefixLen, "prefix-len", 0, "words shared by the start of every prompt, to exercise prefix caching")
	fs.IntVar(&f.warmup, "warmup", 2, "warmup requests before measuring (the first probes whether the server takes ignore_eos/min_tokens); they may take --timeout together, and no longer than --duration")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the synthetic prompts and arrival times")
	fs.BoolVar(&f.sweep, "sweep", false, "step the load up to the knee (under 2 min by default)")
	fs.Float64Var(&f.sweepMax, "sweep-max", 128, "the sweep's highest concurrency")
	fs.DurationVar(&f.sweepStep, "sweep-step", 10*time.Second, "each sweep step's length")
	fs.DurationVar(&f.sloTTFT, "slo-ttft", 0, "TTFT objective for goodput, e.g. 500ms")
	fs.DurationVar(&f.sloTPOT, "slo-tpot", 0, "TPOT objective for goodput, e.g. 50ms")
	fs.DurationVar(&f.sloE2EL, "slo-e2el", 0, "end-to-end latency objective for goodput")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "limit on one request")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON (vllm bench serve's field names)")
	fs.StringVar(&f.save, "save", "", "also write the JSON result to this file")
	fs.BoolVar(&f.noExtras, "no-extras", false, "do not send ignore_eos/min_tokens")
	fs.BoolVar(&f.noServer, "no-server-view", false, "do not scrape the server's own metrics during the run")
	root.AddCommand(cmd)
}

// benchConfig turns the flags into a run's configuration.
func benchConfig(url string) (bench.Config, error) {
	f := &benchFlags
	api, err := bench.ParseAPI(f.api)
	if err != nil {
		return bench.Config{}, err
	}
	var rate report.Rate // 0: not given, the closed loop
	if f.rate != "" {
		if rate, err = report.ParseRate(f.rate); err != nil {
			return bench.Config{}, usageErr("--rate %q: give requests per second, or inf", f.rate)
		}
	}
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	nameEndpoints(url)
	key, err := apiKeyFor(url, true) // the URL given to llmtop bench
	if err != nil {
		return bench.Config{}, err
	}
	return bench.Config{
		URL: url, API: api, Model: f.model, APIKey: key,
		Concurrency: f.concurrency, Rate: rate, Burstiness: f.burstiness,
		NumRequests: f.numRequests, Duration: f.duration, Grace: f.grace, Warmup: f.warmup,
		InputLen: f.inputLen, OutputLen: f.outputLen, PrefixLen: f.prefixLen,
		NoExtras: f.noExtras, Seed: f.seed, Timeout: f.timeout, FollowRedirects: engineFlags.followRedirects,
		SLO: report.SLO{TTFT: f.sloTTFT, TPOT: f.sloTPOT, E2EL: f.sloE2EL},
	}, nil
}

func runBench(ctx context.Context, cmd *cobra.Command, url string) error {
	cfg, err := benchConfig(url)
	if err != nil {
		return err
	}
	if !benchFlags.sweep { // a sweep sets the load per step
		check := cfg
		check.Defaults()
		if err := check.Validate(); err != nil {
			return &exitError{code: exitUsage, err: err} // before scraping the server or probing it
		}
	}
	out, errOut := safeOut(cmd.OutOrStdout()), cmd.ErrOrStderr()
	bar := newProgressLine(errOut)
	var view *serverView
	if !benchFlags.noServer {
		view = watchServer(ctx, cfg)
		defer view.stop()
	}
	var doc any
	var text string
	completed := 0
	if benchFlags.sweep {
		sc := bench.SweepConfig{Base: cfg, Max: benchFlags.sweepMax, Step: benchFlags.sweepStep,
			OnProgress: func(i int, load float64, p bench.Progress) { bar.show(fmt.Sprintf("step %d (%g)", i+1, load), p) }}
		if !cfg.Rate.IsInf() {
			sc.ByRate, sc.Max, sc.Base.Rate = true, float64(cfg.Rate), 0
		}
		if view != nil {
			sc.Waiting, sc.AfterStep = view.waiting, view.attach
		}
		sw, err := bench.Sweep(ctx, sc)
		bar.done()
		if err != nil && len(sw.Steps) == 0 {
			return err
		}
		for _, st := range sw.Steps {
			completed += st.Result.Completed
		}
		doc, text = sw, report.SweepText(sw)
	} else {
		res, err := bench.Run(ctx, cfg, func(p bench.Progress) { bar.show("", p) })
		bar.done()
		if err != nil {
			return err
		}
		view.attach(&res)
		completed = res.Completed
		doc, text = res, report.Text(res)
	}
	if benchFlags.save != "" {
		if err := writeJSONFile(benchFlags.save, doc); err != nil {
			return err
		}
	}
	if benchFlags.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		io.WriteString(out, text)
	}
	if completed == 0 {
		return &exitError{code: 1, err: errors.New("no request succeeded (the counts by kind are above)")}
	}
	return nil
}

// writeJSONFile writes v indented to path, through a temporary file so a
// crash never leaves half a result.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	// Results are private (0600) and print no URL credential.
	b = []byte(model.SafeOutput(string(b)))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the result: %w", err)
	}
	return os.Rename(tmp, path)
}
