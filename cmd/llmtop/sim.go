package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/sim"
)

// `llmtop sim` serves the simulated vLLM engine for any client (curl, the
// benchmark, another monitor), with vLLM's own flag names.

var simFlags struct {
	host, logFile string
	port          int
	dcgmPort      int
	noBackground  bool
	cfg           sim.Config
}

func init() {
	cmd := &cobra.Command{
		Use:   "sim [flags]",
		Short: "Serve a simulated vLLM engine (SIMULATED: no GPU, no model) for demos, tests and trying flag changes",
		Long: `Serve a simulated vLLM engine with vLLM's HTTP API, /metrics and log lines.

It schedules like vLLM V1 (continuous batching, paged KV cache, preemption,
chunked prefill, prefix caching) on a model/GPU pair from a small table, and
plays scenarios on a timeline. Everything it serves is simulated; /version
says so ("simulated": true).

Scenarios (--scenario, comma-separated "name[+name][:duration]"):
` + scenarioHelp() + `
Models: ` + strings.Join(simKeys(sim.Models), ", ") + `
GPUs:   ` + strings.Join(simKeys(sim.GPUs), ", ") + `
See docs/sim.md for the model/GPU parameters.`,
		Example: `  llmtop sim
  llmtop sim --scenario kv-pressure
  llmtop sim --scenario kv-pressure --gpu-memory-utilization 0.5   # try the fix
  llmtop sim --scenario healthy:60s,crash-restart:60s --loop --port 8001`,
		Args: cobra.NoArgs,
		RunE: runSim,
	}
	fs := cmd.Flags()
	fs.StringVar(&simFlags.host, "host", "127.0.0.1", "address to listen on (vLLM listens on 0.0.0.0)")
	fs.IntVar(&simFlags.port, "port", 8000, "port to listen on")
	fs.StringVar(&simFlags.logFile, "log-file", "", "write the vLLM-format log here instead of stdout")
	fs.IntVar(&simFlags.dcgmPort, "dcgm-port", 0, "also serve the simulated GPU as a DCGM exporter on this port (/metrics), for llmtop --dcgm")
	fs.BoolVar(&simFlags.noBackground, "no-background", false, "no built-in traffic: only your own requests")
	addSimFlags(fs, &simFlags.cfg)
	root.AddCommand(cmd)
}

// addSimFlags registers the sim's engine and scenario flags (shared by
// `llmtop sim` and `llmtop demo`).
func addSimFlags(fs *pflag.FlagSet, c *sim.Config) {
	fs.StringVar(&c.Scenario, "scenario", c.Scenario, "scenario timeline, e.g. healthy:60s,queue-buildup:2m,crash-restart (see --help)")
	fs.BoolVar(&c.Loop, "loop", c.Loop, "repeat the scenario timeline")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed of the simulated traffic")
	fs.Float64Var(&c.Rate, "rate", 0, "background arrival rate in requests/s (default: the scenario's)")
	fs.Float64Var(&c.TrafficScale, "traffic-scale", 1, "multiply the background arrival rate")
	fs.StringVar(&c.Model, "model", "llama-3.1-8b", "simulated model (table key or served ID): "+strings.Join(simKeys(sim.Models), ", "))
	fs.StringVar(&c.ServedModelName, "served-model-name", "", "model name in the API and metrics (default the model's ID)")
	fs.StringVar(&c.GPU, "gpu", "h100-80gb", "simulated GPU: "+strings.Join(simKeys(sim.GPUs), ", "))
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", 0, "vLLM --max-num-seqs (default as vLLM: 1024 on ≥70 GiB non-A100 GPUs, else 256)")
	fs.IntVar(&c.MaxNumBatchedTokens, "max-num-batched-tokens", 0, "vLLM --max-num-batched-tokens (default as vLLM: 8192/16384 on big GPUs, else 2048)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", 0, "vLLM --max-model-len (default the model's)")
	fs.IntVar(&c.BlockSize, "block-size", 0, "vLLM --block-size (default 16)")
	fs.Float64Var(&c.GPUMemoryUtil, "gpu-memory-utilization", 0, "vLLM --gpu-memory-utilization (default 0.92)")
	fs.StringVar(&c.KVCacheDtype, "kv-cache-dtype", "auto", "vLLM --kv-cache-dtype: auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2 (fp8 halves KV bytes per token)")
	fs.Bool("enable-chunked-prefill", false, "vLLM --enable-chunked-prefill (on by default)")
	fs.Bool("no-enable-chunked-prefill", false, "vLLM --no-enable-chunked-prefill")
	fs.Bool("enable-prefix-caching", false, "vLLM --enable-prefix-caching (on by default)")
	fs.Bool("no-enable-prefix-caching", false, "vLLM --no-enable-prefix-caching")
	fs.IntVar(&c.MaxLoRAs, "max-loras", 0, "vLLM --max-loras: the LoRA adapters one batch may hold (default 1; lora-starved sets 2)")
	fs.IntVar(&c.NumGPUBlocksOverride, "num-gpu-blocks-override", 0, "vLLM --num-gpu-blocks-override: force the KV pool size in blocks")
	fs.BoolVar(&c.DisableLogStats, "disable-log-stats", false, "vLLM --disable-log-stats: no periodic stats line")
	fs.DurationVar(&c.StartupTime, "startup-time", 0, "how long a (re)start takes (default 12s)")
}

// simToggles reads the paired --enable-X / --no-enable-X flags; unset
// leaves the choice to the scenario, then to vLLM's default.
func simToggles(fs *pflag.FlagSet, c *sim.Config) error {
	toggle := func(name string) (*bool, error) {
		on, off := fs.Changed("enable-"+name), fs.Changed("no-enable-"+name)
		vOn, _ := fs.GetBool("enable-" + name)
		vOff, _ := fs.GetBool("no-enable-" + name)
		switch {
		case on && off:
			return nil, usageErr("--enable-%s and --no-enable-%s contradict each other", name, name)
		case on:
			return &vOn, nil
		case off:
			v := !vOff
			return &v, nil
		}
		return nil, nil
	}
	var err error
	if c.ChunkedPrefill, err = toggle("chunked-prefill"); err != nil {
		return err
	}
	c.PrefixCaching, err = toggle("prefix-caching")
	if v := os.Getenv("VLLM_LOG_STATS_INTERVAL"); v != "" {
		sec, perr := strconv.ParseFloat(v, 64)
		if perr != nil || sec <= 0 {
			return fmt.Errorf("VLLM_LOG_STATS_INTERVAL=%q: want seconds, e.g. 10", v)
		}
		c.LogStatsInterval = time.Duration(sec * float64(time.Second))
	}
	return err
}

func runSim(cmd *cobra.Command, _ []string) error {
	cfg := simFlags.cfg
	if err := simToggles(cmd.Flags(), &cfg); err != nil {
		return err
	}
	cfg.Background = !simFlags.noBackground
	cfg.Port = simFlags.port
	var out io.Writer = os.Stdout
	if simFlags.logFile != "" {
		f, err := os.OpenFile(simFlags.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open --log-file: %w", err)
		}
		defer f.Close()
		out = f
	}
	pipe := sim.NewLogPipe(4 << 20)
	cfg.Log = pipe
	s, err := sim.New(cfg)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(simFlags.host, strconv.Itoa(simFlags.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is something already on that port? pick another with --port)", addr, err)
	}
	ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(out, pipe); close(copied) }()
	l := s.Load()
	fmt.Fprintf(cmd.ErrOrStderr(), "llmtop sim: SIMULATED vLLM on %s (%s), scenario %q; Ctrl-C stops\n",
		"http://"+ln.Addr().String(), l.GPUName, orDefault(cfg.Scenario, sim.Healthy))
	if simFlags.dcgmPort != 0 {
		dl, err := net.Listen("tcp", net.JoinHostPort(simFlags.host, strconv.Itoa(simFlags.dcgmPort)))
		if err != nil {
			ln.Close()
			return fmt.Errorf("--dcgm-port: %w", err)
		}
		srv := &http.Server{Handler: s.DCGMHandler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(dl) }()
		defer srv.Close()
		fmt.Fprintf(cmd.ErrOrStderr(), "llmtop sim: its GPU (SIMULATED) as a DCGM exporter on http://%s/metrics\n", dl.Addr())
	}
	s.Start(ctx)
	err = s.Serve(ctx, ln)
	_ = pipe.Close()
	<-copied
	return err
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func scenarioHelp() string {
	var b strings.Builder
	for _, n := range sim.ScenarioNames() {
		fmt.Fprintf(&b, "  %-15s %s\n", n, sim.ScenarioSummary(n))
	}
	return b.String()
}

func simKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
