//go:build cgo && linux

package gpu

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/llmtop/llmtop/model"
)

// The tests in this file read a real GPU through the real libnvidia-ml and
// compare what llmtop reads with what nvidia-smi says at the same moment.
// They run only where LLMTOP_REAL_NVML=1 (scripts/gpu-check.sh sets it on a
// machine with an NVIDIA GPU); everywhere else they skip, saying why.

func needRealGPU(tb testing.TB) {
	tb.Helper()
	if os.Getenv("LLMTOP_REAL_NVML") != "1" {
		tb.Skip("not checked: needs a real NVIDIA GPU (LLMTOP_REAL_NVML=1, scripts/gpu-check.sh)")
	}
	if _, err := exec.LookPath("nvidia-smi"); err != nil {
		tb.Fatal("LLMTOP_REAL_NVML=1 but nvidia-smi is not on PATH: nothing to compare with")
	}
}

// smiQuery runs nvidia-smi --query-X=fields and returns one map per row.
func smiQuery(tb testing.TB, what string, fields []string) []map[string]string {
	tb.Helper()
	out, err := exec.Command("nvidia-smi", "--query-"+what+"="+strings.Join(fields, ","), "--format=csv,noheader,nounits").Output()
	if err != nil {
		tb.Fatalf("nvidia-smi --query-%s: %v", what, err)
	}
	var rows []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) != len(fields) {
			tb.Fatalf("nvidia-smi row %q: %d cells for %d fields", line, len(cells), len(fields))
		}
		row := map[string]string{}
		for i, f := range fields {
			row[f] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, row)
	}
	return rows
}

// smiKnows keeps the fields this nvidia-smi can be asked for (its
// --help-query-gpu quotes each one): older drivers lack compute_cap and
// clocks_event_reasons, and one unknown field fails the whole query.
func smiKnows(tb testing.TB, fields []string) []string {
	tb.Helper()
	help, err := exec.Command("nvidia-smi", "--help-query-gpu").Output()
	if err != nil {
		tb.Fatalf("nvidia-smi --help-query-gpu: %v", err)
	}
	var known []string
	for _, f := range fields {
		if strings.Contains(string(help), `"`+f+`"`) {
			known = append(known, f)
		} else {
			tb.Logf("nvidia-smi cannot be asked for %s: not compared", f)
		}
	}
	return known
}

// smiNum parses an nvidia-smi number; "[N/A]", "[Not Supported]" and the
// like are absent.
func smiNum(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}

// near checks ours against nvidia-smi's within an absolute tolerance; a
// value nvidia-smi does not give must be absent or unsupported in ours too.
func near(t *testing.T, g model.GPU, field string, ours model.Opt, smi string, scale, tol float64) {
	t.Helper()
	want, ok := smiNum(smi)
	if !ok {
		t.Logf("GPU %d %s: nvidia-smi says %q; llmtop %v (unsupported=%v)", g.Index, field, smi, ours, g.IsUnsupported(field))
		return
	}
	if !ours.OK {
		t.Errorf("GPU %d %s: nvidia-smi reads %v, llmtop has none (unsupported=%v)", g.Index, field, want, g.IsUnsupported(field))
		return
	}
	got := ours.V / scale
	if math.Abs(got-want) > tol {
		t.Errorf("GPU %d %s: llmtop %.2f, nvidia-smi %.2f (tolerance %.2f)", g.Index, field, got, want, tol)
		return
	}
	t.Logf("GPU %d %-18s llmtop %10.2f  nvidia-smi %10.2f", g.Index, field, got, want)
}

var smiGPUFields = []string{
	"index", "uuid", "name", "driver_version", "compute_cap",
	"memory.total", "memory.used", "utilization.gpu",
	"power.limit", "power.draw", "temperature.gpu",
	"clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem",
	"pcie.link.gen.max", "pcie.link.width.max", "pcie.link.gen.current", "pcie.link.width.current",
	"clocks_event_reasons.active", "ecc.errors.uncorrected.volatile.total",
}

// TestRealNVML reads every GPU through llmtop's NVML source twice a second
// apart and compares each field with nvidia-smi's reading taken right
// after: identities and static values exactly, memory to the MiB, moving
// values (power, temperature, clocks) within what changes in a second.
// Processes nvidia-smi lists must be in llmtop's list with the same memory.
func TestRealNVML(t *testing.T) {
	needRealGPU(t)
	src := NewNVML(Config{})
	defer src.Close()
	snap, events := src.Refresh()
	time.Sleep(time.Second)
	snap, more := src.Refresh()
	events = append(events, more...)
	rows := smiQuery(t, "gpu", smiKnows(t, smiGPUFields))
	js, _ := json.MarshalIndent(snap, "", "  ")
	t.Logf("llmtop's snapshot:\n%s", js)
	for _, e := range events {
		t.Logf("event: %s %s", e.Kind, e.Title)
	}
	if snap.Err != "" {
		t.Fatalf("snapshot error: %s", snap.Err)
	}
	if len(snap.GPUs) != len(rows) {
		t.Fatalf("llmtop reads %d GPUs, nvidia-smi lists %d", len(snap.GPUs), len(rows))
	}
	if snap.Driver != rows[0]["driver_version"] {
		t.Errorf("driver: llmtop %q, nvidia-smi %q", snap.Driver, rows[0]["driver_version"])
	}
	const mib = 1 << 20
	for i, g := range snap.GPUs {
		r := rows[i]
		if strconv.Itoa(g.Index) != r["index"] || g.UUID != r["uuid"] || g.Name != r["name"] {
			t.Errorf("GPU %d: llmtop %d %s %q, nvidia-smi %s %s %q", i, g.Index, g.UUID, g.Name, r["index"], r["uuid"], r["name"])
		}
		if g.Err != "" || g.Lost {
			t.Errorf("GPU %d: err %q lost %v", g.Index, g.Err, g.Lost)
		}
		if cc := r["compute_cap"]; cc != "" && !strings.HasPrefix(cc, "[") && g.ComputeCap != cc {
			t.Errorf("GPU %d compute capability: llmtop %q, nvidia-smi %q", g.Index, g.ComputeCap, cc)
		}
		near(t, g, model.GPUFieldMemTotal, g.MemTotal, r["memory.total"], mib, 1)
		near(t, g, model.GPUFieldMemUsed, g.MemUsed, r["memory.used"], mib, 256)
		near(t, g, model.GPUFieldPowerLimit, g.PowerLimit, r["power.limit"], 1, 1)
		near(t, g, model.GPUFieldPower, g.Power, r["power.draw"], 1, 60)
		near(t, g, model.GPUFieldTemp, g.Temp, r["temperature.gpu"], 1, 3)
		near(t, g, model.GPUFieldSMClockMax, g.SMClockMax, r["clocks.max.sm"], 1, 0)
		near(t, g, model.GPUFieldMemClockMax, g.MemClockMax, r["clocks.max.mem"], 1, 0)
		near(t, g, model.GPUFieldMemClock, g.MemClock, r["clocks.mem"], 1, 0)
		near(t, g, model.GPUFieldPCIeGen+"_max", g.PCIeGenMax, r["pcie.link.gen.max"], 1, 0)
		near(t, g, "pcie_width_max", g.PCIeWidthMax, r["pcie.link.width.max"], 1, 0)
		near(t, g, model.GPUFieldECC, g.ECCVolatile, r["ecc.errors.uncorrected.volatile.total"], 1, 0)
		// SM clock and utilisation move from one millisecond to the next:
		// within the device's range, and logged beside nvidia-smi's.
		if !g.SMClock.OK || g.SMClock.V <= 0 || (g.SMClockMax.OK && g.SMClock.V > g.SMClockMax.V) {
			t.Errorf("GPU %d SM clock %v outside (0, %v]", g.Index, g.SMClock, g.SMClockMax)
		}
		t.Logf("GPU %d SM clock llmtop %v MHz, nvidia-smi %s MHz; util llmtop %v %%, nvidia-smi %s %%", g.Index, g.SMClock, r["clocks.sm"], g.Util, r["utilization.gpu"])
		if !g.Util.OK || g.Util.V < 0 || g.Util.V > 100 {
			t.Errorf("GPU %d utilisation %v outside [0, 100]", g.Index, g.Util)
		}
		if mask, err := strconv.ParseUint(strings.TrimPrefix(r["clocks_event_reasons.active"], "0x"), 16, 64); err == nil {
			t.Logf("GPU %d clock-event reasons: llmtop %q, nvidia-smi %#x = %q", g.Index, g.Throttle, mask, DecodeThrottle(mask))
		}
		t.Logf("GPU %d unsupported: %v", g.Index, g.Unsupported)
	}

	// Processes: every one nvidia-smi lists holds the same memory in
	// llmtop's list (a process can start or stop between the two reads, so
	// only those seen in both are compared, and each difference is said).
	apps := smiQuery(t, "compute-apps", []string{"gpu_uuid", "pid", "used_memory", "process_name"})
	seen := 0
	for _, a := range apps {
		pid, _ := strconv.Atoi(a["pid"])
		for _, g := range snap.GPUs {
			if g.UUID != a["gpu_uuid"] {
				continue
			}
			i := slices.IndexFunc(g.Processes, func(p model.GPUProcess) bool { return p.PID == pid })
			if i < 0 {
				t.Errorf("GPU %d: nvidia-smi lists PID %d (%s, %s MiB); llmtop does not", g.Index, pid, a["process_name"], a["used_memory"])
				continue
			}
			seen++
			p := g.Processes[i]
			t.Logf("GPU %d process %d: llmtop %+v; nvidia-smi %s MiB %q", g.Index, pid, p, a["used_memory"], a["process_name"])
			if want, ok := smiNum(a["used_memory"]); ok && (!p.UsedMem.OK || math.Abs(p.UsedMem.V/mib-want) > 2) {
				t.Errorf("GPU %d PID %d memory: llmtop %v bytes, nvidia-smi %v MiB", g.Index, pid, p.UsedMem, want)
			}
		}
	}
	t.Logf("%d compute processes in nvidia-smi, %d matched in llmtop", len(apps), seen)
}

// BenchmarkRealNVMLRefresh is what one refresh of every GPU costs on a real
// machine: ns/op is wall time (NVML's PCIe counters sample for 20 ms
// each), cpu-ms/op the CPU it takes.
func BenchmarkRealNVMLRefresh(b *testing.B) {
	needRealGPU(b)
	src := NewNVML(Config{})
	defer src.Close()
	src.Refresh()
	before := rusage(b)
	b.ResetTimer()
	for b.Loop() {
		if snap, _ := src.Refresh(); snap.Err != "" {
			b.Fatal(snap.Err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rusage(b)-before)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkRealNVMLCall times single NVML calls on the first GPU, to say
// which of a refresh's calls its time goes to.
func BenchmarkRealNVMLCall(b *testing.B) {
	needRealGPU(b)
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		b.Fatal(ret.Error())
	}
	defer lib.Shutdown()
	h, ret := lib.DeviceGetHandleByIndex(0)
	if ret != nvml.SUCCESS {
		b.Fatal(ret.Error())
	}
	for _, c := range []struct {
		name string
		call func() nvml.Return
	}{
		{"utilization", func() nvml.Return { _, r := h.GetUtilizationRates(); return r }},
		{"memory_v2", func() nvml.Return { _, r := h.GetMemoryInfo_v2(); return r }},
		{"power", func() nvml.Return { _, r := h.GetPowerUsage(); return r }},
		{"temperature", func() nvml.Return { _, r := h.GetTemperature(nvml.TEMPERATURE_GPU); return r }},
		{"clock_sm", func() nvml.Return { _, r := h.GetClockInfo(nvml.CLOCK_SM); return r }},
		{"pcie_rx", func() nvml.Return { _, r := h.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); return r }},
		{"event_reasons", func() nvml.Return { _, r := h.GetCurrentClocksEventReasons(); return r }},
		{"ecc", func() nvml.Return {
			_, r := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
			return r
		}},
		{"remapped_rows", func() nvml.Return { _, _, _, _, r := h.GetRemappedRows(); return r }},
		{"processes", func() nvml.Return { _, r := h.GetComputeRunningProcesses(); return r }},
		{"pcie_replays", func() nvml.Return { _, r := h.GetPcieReplayCounter(); return r }},
		{"nvlink_state0", func() nvml.Return { _, r := h.GetNvLinkState(0); return r }},
	} {
		b.Run(c.name, func(b *testing.B) {
			before := rusage(b)
			for b.Loop() {
				if r := c.call(); r != nvml.SUCCESS && r != nvml.ERROR_NOT_SUPPORTED {
					b.Fatal(r.Error())
				}
			}
			b.ReportMetric(float64(rusage(b)-before)/1e3/float64(b.N), "cpu-us/op")
		})
	}
}

// rusage is the process's user+system CPU time in nanoseconds.
func rusage(tb testing.TB) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
