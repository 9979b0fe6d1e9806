package model

import (
	"reflect"
	"strings"
	"testing"
)

// vllmSnapshot is one GPU whose process was started with a secret on its
// command line, as NVML and /proc give them (unclean).
func vllmSnapshot(cmdline, err string) GPUSnapshot {
	return GPUSnapshot{Driver: "580.65.06", CUDA: "13.0", Note: "1 GPU process(es) belong to another PID namespace",
		GPUs: []GPU{{Index: 0, UUID: "GPU-fa4e0000-0000-4000-8000-000000000000", Name: "NVIDIA H100\x1b[2J 80GB HBM3", Err: err,
			Throttle: []string{"power cap"}, Util: Some(93),
			Processes: []GPUProcess{{PID: 4242, Name: "python3", UsedMem: Some(70 << 30), Engine: "vllm", Cmdline: cmdline}}}}}
}

const vllmCmdline = "/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct " +
	"--tensor-parallel-size 1 --gpu-memory-utilization 0.9 --max-model-len 32768 --port 8000 --api-key sk-abcdef123 " +
	"--enable-prefix-caching --served-model-name llama"

func TestCleanGPUsCleansOutsideText(t *testing.T) {
	g := CleanGPUs(vllmSnapshot(vllmCmdline, "could not read ECC (https://user:hunter2@example.com)"))
	d := g.GPUs[0]
	if strings.Contains(d.Name, "\x1b") || strings.Contains(d.Processes[0].Cmdline, "sk-abcdef123") || strings.Contains(d.Err, "hunter2") {
		t.Errorf("not cleaned: name %q, cmdline %q, err %q", d.Name, d.Processes[0].Cmdline, d.Err)
	}
	if !strings.Contains(d.Processes[0].Cmdline, "--api-key "+Redacted) {
		t.Errorf("cmdline %q: the key's value should read %s", d.Processes[0].Cmdline, Redacted)
	}
}

// The cleaner answers what CleanGPUs answers, snapshot after snapshot, as
// the command line, the errors and the processes change.
func TestGPUCleanerIsCleanGPUs(t *testing.T) {
	var c GPUCleaner
	renamed := strings.Replace(vllmCmdline, "sk-abcdef123", "sk-other456", 1)
	steps := []GPUSnapshot{
		vllmSnapshot(vllmCmdline, ""),
		vllmSnapshot(vllmCmdline, ""),
		vllmSnapshot(renamed, ""),
		vllmSnapshot(renamed, "could not read ECC (https://user:hunter2@example.com)"),
		vllmSnapshot(renamed, "could not read power (https://user:swordfish@example.com)"),
		{Err: "no NVIDIA driver: libnvidia-ml.so.1 not found"},
		vllmSnapshot(vllmCmdline, ""),
	}
	two := vllmSnapshot(vllmCmdline, "")
	two.GPUs = append(two.GPUs, two.GPUs[0])
	two.GPUs[1].Index, two.GPUs[1].Processes = 1, []GPUProcess{{PID: 4343, Name: "python3", Cmdline: renamed}}
	steps = append(steps, two, two)
	for i, s := range steps {
		want := CleanGPUs(s)
		if got := c.Clean(s); !reflect.DeepEqual(got, want) {
			t.Errorf("snapshot %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// It keeps what the last snapshot held, no more: its note and its two
	// command lines.
	if n := len(c.last); n != 3 {
		t.Errorf("kept %d strings, want 3: %v", n, c.last)
	}
}

// A snapshot like the last one is not redacted again: it allocates only
// its copies (the GPUs, the processes, the throttle reasons), where
// redacting the command line's flags and URLs allocated each time.
func TestGPUCleanerRedactsOnlyWhatIsNew(t *testing.T) {
	var c GPUCleaner
	s := vllmSnapshot(vllmCmdline, "could not read ECC (https://user:hunter2@example.com)")
	s.GPUs[0].Name = "NVIDIA H100 80GB HBM3" // clean already, as names are (an escape in one is cleaned each time)
	c.Clean(s)
	if n := testing.AllocsPerRun(50, func() { c.Clean(s) }); n > 3 {
		t.Errorf("the same snapshot cleaned again allocated %v times, want 3 copies (CleanGPUs: %v)", n,
			testing.AllocsPerRun(50, func() { CleanGPUs(s) }))
	}
}

func BenchmarkCleanGPUs(b *testing.B) {
	s := vllmSnapshot(vllmCmdline, "")
	s.GPUs[0].Name = "NVIDIA H100 80GB HBM3"
	b.ReportAllocs()
	for b.Loop() {
		CleanGPUs(s)
	}
}

// BenchmarkGPUCleaner is the GPU source's cleaning of a steady snapshot:
// one GPU and its vLLM process, the same as the last refresh's.
func BenchmarkGPUCleaner(b *testing.B) {
	var c GPUCleaner
	s := vllmSnapshot(vllmCmdline, "")
	s.GPUs[0].Name = "NVIDIA H100 80GB HBM3"
	b.ReportAllocs()
	for b.Loop() {
		c.Clean(s)
	}
}
