package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
	"github.com/llmtop/llmtop/sources/gpu"
)

// The GPU source: NVML by default, a DCGM exporter with --dcgm, the
// simulated devices in the demo. It delivers model.GPUSnapshot (and
// model.Event when a GPU is lost or reports an Xid).

var gpuFlags struct {
	gpus  string
	dcgm  string
	noGPU bool
}

func init() {
	registerSource(sourcePlugin{
		Name: "gpu",
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&gpuFlags.gpus, "gpus", "", "show only these GPU indices, e.g. 0,2 or 0-3 (CUDA_VISIBLE_DEVICES is honoured too)")
			fs.StringVar(&gpuFlags.dcgm, "dcgm", "", "read the GPUs from a DCGM exporter instead of NVML, e.g. http://NODE:9400/metrics")
			fs.BoolVar(&gpuFlags.noGPU, "no-gpu", false, "do not read the GPUs")
		},
		Start: startGPU,
	})
}

// newGPUSource picks the source the flags and mode ask for; nil with
// --no-gpu.
func newGPUSource(env *session.Env) (*gpu.Source, error) {
	if gpuFlags.noGPU {
		return nil, nil
	}
	idx, err := gpu.ParseIndexList(gpuFlags.gpus)
	if err != nil {
		return nil, err
	}
	cfg := gpu.Config{Interval: env.Interval}
	if env.SimGPU != nil {
		// The host's CUDA_VISIBLE_DEVICES says nothing about simulated GPUs.
		cfg.Filter = gpu.NewFilter(idx, "", false)
		load := env.SimGPU
		return gpu.NewSimulated(cfg, 1, func() gpu.SimLoad {
			l := load()
			return gpu.SimLoad{Util: l.Util, MemUsed: l.MemUsed, MemTotal: l.MemTotal, BatchShare: l.BatchShare}
		}), nil
	}
	visible, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	cfg.Filter = gpu.NewFilter(idx, visible, set)
	if gpuFlags.dcgm != "" {
		return gpu.NewDCGM(cfg, gpuFlags.dcgm), nil
	}
	return gpu.NewNVML(cfg), nil
}

// gpuOff is what the GPU pane says with --no-gpu.
const gpuOff = "GPU reading off (--no-gpu)"

func startGPU(ctx context.Context, env *session.Env) error {
	s, err := newGPUSource(env)
	if err != nil {
		return err
	}
	if s == nil { // --no-gpu: say so at once rather than "the GPU source sent nothing"
		go env.Send(model.GPUSnapshot{Time: time.Now(), Err: gpuOff})
		return nil
	}
	env.OnInterval = append(env.OnInterval, s.SetInterval)
	go s.Run(ctx, env.Send)
	return nil
}

// readGPUsOnce reads the GPUs once with the same flags, for one-shot
// commands (`llmtop snapshot`); nil with --no-gpu.
func readGPUsOnce() *model.GPUSnapshot {
	s, err := newGPUSource(&session.Env{})
	if err != nil {
		return &model.GPUSnapshot{Err: err.Error()}
	}
	if s == nil {
		return nil
	}
	defer s.Close()
	snap, _ := s.Refresh()
	return &snap
}
