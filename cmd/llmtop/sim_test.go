package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/sim"
)

func TestSimToggles(t *testing.T) {
	cases := []struct {
		args            []string
		env             string
		chunked, prefix *bool
		interval        time.Duration
		wantErr         bool
	}{
		{args: nil},
		{args: []string{"--no-enable-chunked-prefill"}, chunked: new(bool)},
		{args: []string{"--enable-chunked-prefill", "--no-enable-prefix-caching"}, chunked: ptrTo(true), prefix: new(bool)},
		{args: []string{"--enable-prefix-caching=false"}, prefix: new(bool)},
		{args: []string{"--enable-chunked-prefill", "--no-enable-chunked-prefill"}, wantErr: true},
		{env: "2.5", interval: 2500 * time.Millisecond},
		{env: "soon", wantErr: true},
	}
	for _, c := range cases {
		fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
		var cfg sim.Config
		addSimFlags(fs, &cfg)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		t.Setenv("VLLM_LOG_STATS_INTERVAL", c.env)
		err := simToggles(fs, &cfg)
		if (err != nil) != c.wantErr {
			t.Errorf("%v env %q: err %v", c.args, c.env, err)
			continue
		}
		if c.wantErr {
			continue
		}
		if !sameBool(cfg.ChunkedPrefill, c.chunked) || !sameBool(cfg.PrefixCaching, c.prefix) || cfg.LogStatsInterval != c.interval {
			t.Errorf("%v env %q: chunked %v prefix %v interval %v", c.args, c.env, show(cfg.ChunkedPrefill), show(cfg.PrefixCaching), cfg.LogStatsInterval)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

func sameBool(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *bool) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// The lora-starved scenario's fix is vLLM's --max-loras (the lora_starved
// finding names it, and tune applies it): the sim must take the flag, or a
// tuned restart exits 64 "unknown flag: --max-loras" before it serves.
func TestSimTakesMaxLoRAs(t *testing.T) {
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	var cfg sim.Config
	addSimFlags(fs, &cfg)
	if err := fs.Parse([]string{"--scenario", "lora-starved", "--max-loras", "8"}); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxLoRAs != 8 {
		t.Errorf("--max-loras 8 set MaxLoRAs %d", cfg.MaxLoRAs)
	}
	if _, err := sim.New(sim.Config{Scenario: sim.LoRAStarved, MaxLoRAs: -1}); err == nil || !strings.Contains(err.Error(), "--max-loras") {
		t.Errorf("a negative --max-loras: %v", err)
	}
}
