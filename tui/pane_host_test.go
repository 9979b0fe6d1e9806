package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// hostReading is a vLLM host as sources/host reads it: the API server's
// busiest thread wants a whole core; a thread name carries an escape
// sequence (a process may name its threads anything).
func hostReading(at time.Time) model.HostReading {
	return model.HostReading{Endpoint: testURL, Time: at, IntervalS: 3, CPUs: 16, CPUBusy: model.Some(0.34),
		MemTotal: model.Some(64 << 30), MemAvailable: model.Some(12 << 30), SwapTotal: model.Some(0), SwapFree: model.Some(0),
		Cgroup: "/system.slice/docker-abc.scope", CgroupMemLimit: model.Some(32 << 30), CgroupMemUsage: model.Some(10 << 30), CgroupOOMKills: model.Some(0),
		ShmTotal: model.Some(64 << 20), ShmFree: model.Some(63 << 20), Weights: model.Some(16060522496),
		Disks: []model.DiskFree{{Path: "/root/.cache/huggingface", What: "model cache", Free: model.Some(120 << 30), Total: model.Some(500 << 30)}},
		Procs: []model.ProcUsage{
			{PID: 4711, Name: "vllm", Front: true, CPU: model.Some(1.02), RSS: model.Some(2.1 * (1 << 30)), Threads: 84,
				Busiest: model.ThreadUsage{TID: 4712, Name: "APIServer", CPU: model.Some(0.71), Want: model.Some(0.98)}},
			{PID: 4790, PPID: 4711, Name: "VLLM::EngineCor", CPU: model.Some(0.51), RSS: model.Some(5 << 30), Threads: 40,
				Busiest: model.ThreadUsage{TID: 4791, Name: "evil\x1b[2J", CPU: model.Some(0.51)}},
		},
		NotChecked: []string{"kernel OOM kills: not checked, because the kernel log is not readable: /dev/kmsg: permission denied"}}
}

// Issue 27: the host around the engine has a pane, in the grid and at
// 80×24, while there is a reading; none without one.
func TestHostPane(t *testing.T) {
	m := scenario(healthy, 1, false)
	for _, sz := range []struct{ w, h int }{{200, 60}, {80, 24}} {
		out := screen(t, m, sz.w, sz.h)
		if strings.Contains(out, "Host") {
			t.Errorf("%d×%d: a Host pane without a reading:\n%s", sz.w, sz.h, out)
		}
	}
	m.Update(hostReading(t0.Add(120 * time.Second)))
	out := screen(t, m, 200, 60)
	for _, want := range []string{"8 Host", "CPU 34% of 16 · mem avail 12.0Gi of 64.0Gi · no swap",
		"cgroup /system.slice/docker-abc.scope", "mem 10.0Gi of 32.0Gi · OOM kills 0",
		"/dev/shm 64.0Mi (free 63.0Mi)", "model cache disk 120Gi free of 500Gi", "model weights 15.0Gi on disk",
		"▶4711", "APIServer 98%", "(VLLM::EngineCor)", "kernel OOM kills: not checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("200×60 lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[2J") {
		t.Error("a thread's name reached the terminal unsanitised")
	}
	// 80×24: a tab, and zoomed the pane fits the width.
	out = screen(t, m, 80, 24)
	if !strings.Contains(out, "8 Host") {
		t.Errorf("80×24 has no Host tab:\n%s", out)
	}
	// Eight tabs overflow 80 columns by three cells: the longest titles
	// give them up, the others keep their names (every one was cut to
	// "Lat…" before).
	if want := "[1 Latency] 2 Through… 3 Schedul… 4 GPU 5 Events 6 Diagnosis! 7 Endpoints 8 Host"; !strings.Contains(out, want) {
		t.Errorf("80×24 tab bar, want %q:\n%s", want, out)
	}
	m.zoom = "host"
	out = screen(t, m, 80, 24)
	if !strings.Contains(out, "APIServer 98%") || !strings.Contains(out, "▶4711") {
		t.Errorf("zoomed at 80×24:\n%s", out)
	}
}

// The snapshot command prints the same lines: every one fits its width.
func TestHostLinesFit(t *testing.T) {
	r := hostReading(t0)
	for _, w := range []int{40, 80, 200} {
		for _, l := range HostLines(&r, w) {
			if n := len([]rune(l)); n > w {
				t.Errorf("width %d: %d cells: %q", w, n, l)
			}
		}
	}
}

// The GPU pane's detail line names a link short of what it can do.
func TestGPUDetailNamesShortLinks(t *testing.T) {
	g := model.GPU{Index: 2, Name: "A100", Util: model.Some(90), PCIeGen: model.Some(1), PCIeGenMax: model.Some(4),
		PCIeWidth: model.Some(8), PCIeWidthMax: model.Some(16), NVLinks: model.Some(11), NVLinksMax: model.Some(12),
		NVLinkTx: model.Some(2 << 30), NVLinkRx: model.Some(1 << 30)}
	m := newTestModel()
	out := gpuDetail(m.d.Styles, g)
	if !strings.Contains(out, "PCIe Gen1 x8 of Gen4 x16") || !strings.Contains(out, "NVLink 11/12 up") || !strings.Contains(out, "NVLink tx/rx 2.0Gi/1.0Gi/s") {
		t.Errorf("%q", out)
	}
	g.PCIeGen, g.PCIeWidth, g.NVLinks, g.NVLinkTx, g.NVLinkRx = model.Some(4), model.Some(16), model.Some(12), model.None, model.None
	if out := gpuDetail(m.d.Styles, g); strings.Contains(out, "PCIe") || strings.Contains(out, "NVLink") {
		t.Errorf("a full link is named: %q", out)
	}
}

// A process's CPU is in cores (1.02 = a core and a bit), the host's and a
// thread's in percent: the column says so ("CPU 0.02" read as 0.02%).
func TestHostProcessCPUSaysCores(t *testing.T) {
	r := hostReading(t0)
	ls := HostLines(&r, 120)
	var labels, row string
	for _, l := range ls {
		if strings.HasPrefix(l, "PID") {
			labels = l
		}
		if strings.HasPrefix(l, "▶4711") {
			row = l
		}
	}
	if !strings.Contains(labels, "cores") || strings.Contains(labels, "CPU") {
		t.Errorf("labels %q: the process CPU column does not say cores", labels)
	}
	if !strings.Contains(row, " 1.02 ") {
		t.Errorf("row %q lacks 1.02 cores", row)
	}
	// an idle process reads 0.00 like its neighbours, not 0
	r.Procs[1].CPU = model.Some(0)
	for _, l := range HostLines(&r, 120) {
		if strings.HasPrefix(l, " 4790") && !strings.Contains(l, " 0.00 ") {
			t.Errorf("idle process row %q, want 0.00 cores", l)
		}
	}
}
