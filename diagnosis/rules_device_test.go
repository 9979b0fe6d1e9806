package diagnosis

import (
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// logEvent is a catalogue event as the log source raises it, from a real
// line (sources/logs/testdata/real-lines.txt cites where each was printed).
func realEvent(kind, line string, fields map[string]string) model.Event {
	return model.Event{Time: t0.Add(-time.Minute), Endpoint: url, Source: "log", Kind: kind, Severity: model.SevInfo, Line: line, Fields: fields}
}

// Issue 27 item 5: the weights against GPU memory, from the engine's own
// load line. sgl-project/sglang#4895: 18.82 GB of Gemma 3 weights on a
// 24 GB RTX 4090 left 3.64 GB.
func TestWeightsAgainstGPUMemory(t *testing.T) {
	sglang := func(e *Endpoint) {
		e.Identity.Engine = model.SGLang
		e.State.Info = nil
	}
	gemma := realEvent("sglang_weights_loaded", "[2025-03-29 18:18:34 TP0] Load weight end. type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail mem=3.64 GB, mem usage=18.82 GB.",
		map[string]string{"gib": "18.82", "avail_gb": "3.64"})
	rtx4090 := &model.GPUSnapshot{Time: t0, GPUs: []model.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Util: model.Some(90), MemUsed: model.Some(23 * gb), MemTotal: model.Some(24 * gb)}}}
	in := input(ep(sglang))
	in.LogsOn, in.GPU, in.Events = true, rtx4090, []model.Event{gemma}

	// Ziems/arbor#103: 27.52 GiB on one GPU of 80 GiB is fine.
	vllm := realEvent("vllm_model_loading", "(EngineCore_DP0 pid=497) INFO 10-03 07:29:02 [gpu_model_runner.py:2392] Model loading took 27.5185 GiB and 305.873276 seconds",
		map[string]string{"gib": "27.5185"})
	fine := input(ep(nil))
	fine.LogsOn, fine.GPU, fine.Events = true, gpuSnap(70*gb, 80*gb), []model.Event{vllm}
	// The same line on a 32 GiB GPU: the weights leave little at 0.9.
	tight := input(ep(nil))
	tight.LogsOn, tight.GPU, tight.Events = true, gpuSnap(30*gb, 32*gb), []model.Event{vllm}
	// The KV cache's line beside it is evidence, in the GiB it said.
	kvLine := realEvent("vllm_kv_memory", "(EngineCore_DP0 pid=497) INFO 10-03 07:29:40 [gpu_worker.py:298] Available KV cache memory: 1.25 GiB", map[string]string{"gib": "1.25"})
	tightKV := input(ep(nil))
	tightKV.LogsOn, tightKV.GPU, tightKV.Events = true, gpuSnap(30*gb, 32*gb), []model.Event{vllm, kvLine}
	// llama-server states each device's weights in MiB.
	ggml := realEvent("llamacpp_model_buffer", "load_tensors:        CUDA0 model buffer size = 22000.00 MiB", map[string]string{"device": "CUDA0", "mib": "22000.00"})
	llama := input(ep(func(e *Endpoint) { e.Identity.Engine = model.LlamaCpp; e.State.Info = nil }))
	llama.LogsOn, llama.GPU, llama.Events = true, gpuSnap(23*gb, 24*gb), []model.Event{ggml}
	noGPU := input(ep(nil))
	noGPU.LogsOn, noGPU.Events = true, []model.Event{vllm}
	// No log: the checkpoint's index on disk (sources/host), 16.06e9 bytes
	// of Llama 3.1 8B, on a 16 GiB card, and over TP 2.
	files := func(tp string) func(*Endpoint) {
		return func(e *Endpoint) {
			e.Host = &model.HostReading{Endpoint: url, Weights: model.Some(16060522496), WeightsFrom: "/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f/model.safetensors.index.json",
				Procs: []model.ProcUsage{{PID: 7, Front: true, Cmdline: "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size " + tp}}}
		}
	}
	onDisk := input(ep(files("1")))
	onDisk.GPU = gpuSnap(15*gb, 16*gb)
	split := input(ep(files("2")))
	split.GPU = gpuSnap(15*gb, 16*gb)

	runCases(t, []ruleCase{
		{name: "Gemma 3 on a 4090", in: in, want: "weights_vram", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || f.Title != "the weights fill 78 % of each GPU's memory (18.8 GiB of 24.0 GiB)" ||
				!hasEvidence(f, "GPU 0's 24.0 GiB (NVIDIA GeForce RTX 4090)") || !hasAction(f, "--tp-size 2") || !hasAction(f, "quantised checkpoint") {
				t.Errorf("%s %v: %+v %+v", f.Severity, f.Title, f.Evidence, f.Actions)
			}
		}},
		{name: "27.5 GiB on 80 GiB", in: fine, none: "weights_vram"},
		{name: "27.5 GiB on 32 GiB", in: tight, want: "weights_vram", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || !hasEvidence(f, "--gpu-memory-utilization 0.90 leaves 1.3 GiB") || !hasAction(f, "--tensor-parallel-size 2") {
				t.Errorf("%s %+v %+v", f.Severity, f.Evidence, f.Actions)
			}
		}},
		{name: "the KV cache's line is evidence", in: tightKV, want: "weights_vram", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "the engine's KV cache got 1.25 GiB") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "llama-server's MiB", in: llama, want: "weights_vram", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "weights 21.5 GiB of GPU 0's 24.0 GiB") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "no GPU reading", in: noGPU, none: "weights_vram", lacks: "the weights against GPU memory (no GPU memory reading"},
		{name: "the checkpoint on disk, no log", in: onDisk, want: "weights_vram", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || !hasEvidence(f, "weights 15.0 GiB of GPU 0's 16.0 GiB") || f.Evidence[0].Source != "model files: /root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f/model.safetensors.index.json (15.0 GiB on disk over tensor parallelism 1; an engine that quantises on load holds less)" {
				t.Errorf("%s %+v", f.Severity, f.Evidence)
			}
		}},
		{name: "the checkpoint over TP 2", in: split, none: "weights_vram"},
	})
}

// Issue 27 item 3: the number formats against the compute capability.
func TestDtypeAgainstComputeCapability(t *testing.T) {
	gpu := func(name, cc string) *model.GPUSnapshot {
		return &model.GPUSnapshot{Time: t0, GPUs: []model.GPU{{Index: 0, Name: name, ComputeCap: cc, Util: model.Some(60), MemTotal: model.Some(24 * gb), MemUsed: model.Some(20 * gb)}}}
	}
	args := func(kv ...string) func(*Endpoint) {
		return func(e *Endpoint) {
			cfg := map[string]string{}
			for i := 0; i+1 < len(kv); i += 2 {
				cfg["args."+kv[i]] = kv[i+1]
			}
			e.Runs = []model.Run{{Started: t0.Add(-time.Hour), Config: cfg}}
		}
	}
	with := func(g *model.GPUSnapshot, mut func(*Endpoint), evs ...model.Event) Input {
		in := input(ep(mut))
		in.GPU, in.Events, in.LogsOn = g, evs, len(evs) > 0
		return in
	}
	// sgl-project/sglang#12887 quotes vLLM's line from an A100.
	marlin := realEvent("vllm_fp8_marlin", "[marlin_utils_fp8.py:80] Your GPU does not have native support for FP8 computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. This may degrade performance for compute-heavy workloads.", nil)
	marlin.Title = "fp8 on a GPU without fp8 compute: weight-only fp8 (Marlin)"
	// The host reading's command line when no args line was logged.
	cmdline := func(e *Endpoint) {
		e.Host = &model.HostReading{Endpoint: url, Procs: []model.ProcUsage{{PID: 7, Front: true, Cmdline: "vllm serve m --dtype bfloat16 --port 8000"}}}
	}
	runCases(t, []ruleCase{
		{name: "bf16 on a T4", in: with(gpu("Tesla T4", "7.5"), args("dtype", "bfloat16")), want: "dtype_capability", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || f.Title != "bfloat16 needs compute capability 8.0; GPU 0 (Tesla T4) has 7.5" || !hasAction(f, "float16") {
				t.Errorf("%s %q %+v", f.Severity, f.Title, f.Actions)
			}
		}},
		{name: "bf16 on a V100 from the command line", in: with(gpu("Tesla V100-SXM2-32GB", "7.0"), cmdline), want: "dtype_capability", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevCrit || !hasEvidence(f, "--dtype=bfloat16 on compute capability 7.0") {
				t.Errorf("%s %+v", f.Severity, f.Evidence)
			}
		}},
		{name: "fp8 on an A100", in: with(gpu("NVIDIA A100-SXM4-80GB", "8.0"), args("quantization", "fp8"), marlin), want: "dtype_capability", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || f.Title != "fp8 without hardware support on GPU 0 (NVIDIA A100-SXM4-80GB, compute capability 8.0)" ||
				!hasEvidence(f, "weight-only fp8 (Marlin)") || !hasAction(f, "INT8/INT4 checkpoint") {
				t.Errorf("%s %q %+v %+v", f.Severity, f.Title, f.Evidence, f.Actions)
			}
		}},
		{name: "the Marlin line alone", in: with(nil, nil, marlin), want: "dtype_capability"},
		// from a backlog stamped in a zone llmtop does not know: the
		// engine's clock, said to be one
		{name: "the Marlin line, engine-local time", in: with(nil, nil, func() model.Event { x := marlin; x.Backlog, x.ZoneUnknown = true, true; return x }()),
			want: "dtype_capability", check: func(t *testing.T, f *Finding) {
				if !hasEvidence(f, "engine-local time, zone unknown") {
					t.Errorf("evidence %+v", f.Evidence)
				}
			}},
		{name: "fp8 on an H100", in: with(gpu("NVIDIA H100 80GB HBM3", "9.0"), args("quantization", "fp8", "kv_cache_dtype", "fp8")), none: "dtype_capability"},
		{name: "fp8 KV cache on an A100", in: with(gpu("NVIDIA A100-SXM4-80GB", "8.0"), args("kv_cache_dtype", "fp8_e5m2")), want: "dtype_capability", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || !hasAction(f, "keep the fp8 KV cache") {
				t.Errorf("%s %+v", f.Severity, f.Actions)
			}
		}},
		{name: "dtype unknown", in: with(gpu("Tesla T4", "7.5"), nil), none: "dtype_capability", lacks: "the engine's dtype is not known"},
		{name: "no compute capability", in: with(gpuSnap(1, 2), args("dtype", "bfloat16")), none: "dtype_capability", lacks: "no compute capability"},
	})
}

// Issue 27 item 3: the PCIe link and NVLink, as the NVML source reads
// them from go-nvml's DGX A100 mock (sources/gpu TestLinksAndComputeCapability).
func TestPCIeAndNVLink(t *testing.T) {
	a100 := func(i int, util float64, gen, width, replaysPS, links float64) model.GPU {
		return model.GPU{Index: i, Name: "A100", Util: model.Some(util), MemTotal: model.Some(40 * gb), MemUsed: model.Some(30 * gb),
			PCIeGen: model.Some(gen), PCIeGenMax: model.Some(4), PCIeWidth: model.Some(width), PCIeWidthMax: model.Some(16),
			PCIeReplays: model.Some(replaysPS * 100), PCIeReplaysPS: model.Some(replaysPS), NVLinks: model.Some(links), NVLinksMax: model.Some(12)}
	}
	snap := func(gs ...model.GPU) Input {
		in := input(ep(nil))
		in.GPU = &model.GPUSnapshot{Time: t0, GPUs: gs}
		return in
	}
	runCases(t, []ruleCase{
		{name: "busy at Gen1 x8", in: snap(a100(0, 90, 4, 16, 0, 12), a100(2, 90, 1, 8, 0, 12)), want: "pcie_link", check: func(t *testing.T, f *Finding) {
			if f.Title != "PCIe link of GPU 2 below its speed or retransmitting" || !hasEvidence(f, "GPU 2 at 90 % runs its link at Gen1 x8 of Gen4 x16") {
				t.Errorf("%q %+v", f.Title, f.Evidence)
			}
		}},
		{name: "idle links train down", in: snap(a100(0, 0, 1, 16, 0, 12)), none: "pcie_link"},
		{name: "replays", in: snap(a100(0, 10, 4, 16, 40, 12)), want: "pcie_link", check: func(t *testing.T, f *Finding) {
			if !hasEvidence(f, "GPU 0: 40 PCIe replays/s") {
				t.Errorf("%+v", f.Evidence)
			}
		}},
		{name: "a link down", in: snap(a100(0, 90, 4, 16, 0, 12), a100(6, 90, 4, 16, 0, 11)), want: "nvlink_down", check: func(t *testing.T, f *Finding) {
			if f.Title != "NVLink down on GPU 6" || !hasEvidence(f, "GPU 6: 11 of 12 NVLink links up") {
				t.Errorf("%q %+v", f.Title, f.Evidence)
			}
		}},
		{name: "all links up", in: snap(a100(0, 90, 4, 16, 0, 12)), none: "nvlink_down"},
	})
}

// Issue 27 item 4: guided-decoding rejections, from the line of
// z-lab/paroquant#31 (vLLM 0.19.x).
func TestGuidedDecodingRejections(t *testing.T) {
	x := realEvent("guided_decoding_error", "ValueError: Grammar error: Unknown format: uri", map[string]string{"reason": "Grammar error: Unknown format: uri"})
	x.Severity, x.Title = model.SevWarn, "guided decoding rejected a request's schema or grammar"
	in := input(ep(nil))
	in.LogsOn, in.Events = true, []model.Event{x}
	runCases(t, []ruleCase{
		{name: "xgrammar refuses a format", in: in, want: "guided_decoding", check: func(t *testing.T, f *Finding) {
			if f.Category != API || !hasEvidence(f, "Grammar error: Unknown format: uri") || !hasAction(f, "simplify the schema") {
				t.Errorf("%s %+v %+v", f.Category, f.Evidence, f.Actions)
			}
		}},
	})
}

// Issue 27 item 3: the topology between the GPUs an engine spans, as NVML
// reads it (sources/gpu TestLinksAndComputeCapability, go-nvml's DGX mock).
func TestTPWithoutPeerToPeer(t *testing.T) {
	gpu := func(i int, links float64, peers ...model.GPUPeer) model.GPU {
		return model.GPU{Index: i, Name: "RTX 4090", Util: model.Some(80), MemTotal: model.Some(24 * gb), MemUsed: model.Some(22 * gb),
			NVLinks: model.Some(links), Peers: peers, Processes: []model.GPUProcess{{PID: 10 + i, Engine: "vllm"}}}
	}
	in := func(gs ...model.GPU) Input {
		x := input(ep(nil))
		x.GPU = &model.GPUSnapshot{Time: t0, GPUs: gs}
		return x
	}
	noP2P := in(gpu(0, 0, model.GPUPeer{Index: 1, Path: "host bridge", P2P: "not supported by the GPU"}),
		gpu(1, 0, model.GPUPeer{Index: 0, Path: "host bridge", P2P: "not supported by the GPU"}))
	nvlinked := in(gpu(0, 12, model.GPUPeer{Index: 1, Path: "across CPU sockets", P2P: "ok"}), gpu(1, 12, model.GPUPeer{Index: 0, Path: "across CPU sockets", P2P: "ok"}))
	sockets := in(gpu(0, 0, model.GPUPeer{Index: 1, Path: "across CPU sockets", P2P: "ok"}), gpu(1, 0, model.GPUPeer{Index: 0, Path: "across CPU sockets", P2P: "ok"}))
	otherGPU := in(gpu(0, 0, model.GPUPeer{Index: 1, P2P: "not supported"}), model.GPU{Index: 1, Peers: []model.GPUPeer{{Index: 0, P2P: "not supported"}}})
	runCases(t, []ruleCase{
		{name: "two 4090s without P2P", in: noP2P, want: "tp_no_p2p", check: func(t *testing.T, f *Finding) {
			if f.Severity != model.SevWarn || len(f.Evidence) != 1 || !hasEvidence(f, "GPU 0 ↔ GPU 1: no NVLink, peer-to-peer not supported by the GPU (host bridge)") {
				t.Errorf("%s %+v", f.Severity, f.Evidence)
			}
		}},
		{name: "NVLink", in: nvlinked, none: "tp_no_p2p"},
		{name: "across sockets", in: sockets, want: "tp_no_p2p"},
		{name: "the engine spans one GPU", in: otherGPU, none: "tp_no_p2p"},
		// a peer outside the engine's GPUs is not judged (nor read)
		{name: "a peer the engine does not use", in: in(
			gpu(0, 0, model.GPUPeer{Index: 1, Path: "host bridge", P2P: "not supported by the GPU"}, model.GPUPeer{Index: 2, Path: "across CPU sockets", P2P: "not supported"}),
			gpu(1, 0, model.GPUPeer{Index: 0, Path: "host bridge", P2P: "not supported by the GPU"}),
			model.GPU{Index: 2, Peers: []model.GPUPeer{{Index: 0, Path: "across CPU sockets", P2P: "not supported"}}}),
			want: "tp_no_p2p", check: func(t *testing.T, f *Finding) {
				if len(f.Evidence) != 1 || !hasEvidence(f, "GPU 0 ↔ GPU 1") {
					t.Errorf("%+v", f.Evidence)
				}
			}},
	})
}
