package gpu

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	promodel "github.com/prometheus/common/model"

	"github.com/llmtop/llmtop/model"
)

// DCGMGPU is one device as a DCGM exporter scrape describes it.
type DCGMGPU struct {
	model.GPU
	Host string
	Xid  model.Opt // DCGM_FI_DEV_XID_ERRORS: the last Xid seen, 0 = none

	fbFree, fbReserved model.Opt // MiB → bytes; total = used + free + reserved
}

// DCGMScrape is the devices of one scrape and what is global to it.
type DCGMScrape struct {
	GPUs   []DCGMGPU
	Driver string
}

const mib = 1 << 20

// dcgmField maps one DCGM_FI_* metric onto a GPU field. Where two metrics
// fill the same field, the one listed first wins (newer names first).
var dcgmFields = []struct {
	name  string
	scale float64
	field func(g *DCGMGPU) *model.Opt
}{
	{"DCGM_FI_DEV_GPU_UTIL", 1, func(g *DCGMGPU) *model.Opt { return &g.Util }},
	{"DCGM_FI_DEV_MEM_COPY_UTIL", 1, func(g *DCGMGPU) *model.Opt { return &g.MemUtil }},
	{"DCGM_FI_DEV_FB_USED", mib, func(g *DCGMGPU) *model.Opt { return &g.MemUsed }},
	{"DCGM_FI_DEV_FB_TOTAL", mib, func(g *DCGMGPU) *model.Opt { return &g.MemTotal }},
	{"DCGM_FI_DEV_FB_FREE", mib, func(g *DCGMGPU) *model.Opt { return &g.fbFree }},
	{"DCGM_FI_DEV_FB_RESERVED", mib, func(g *DCGMGPU) *model.Opt { return &g.fbReserved }},
	{"DCGM_FI_DEV_POWER_USAGE", 1, func(g *DCGMGPU) *model.Opt { return &g.Power }},
	{"DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 1, func(g *DCGMGPU) *model.Opt { return &g.PowerLimit }},
	{"DCGM_FI_DEV_POWER_MGMT_LIMIT", 1, func(g *DCGMGPU) *model.Opt { return &g.PowerLimit }},
	{"DCGM_FI_DEV_GPU_TEMP", 1, func(g *DCGMGPU) *model.Opt { return &g.Temp }},
	{"DCGM_FI_DEV_SLOWDOWN_TEMP", 1, func(g *DCGMGPU) *model.Opt { return &g.TempSlowdown }},
	{"DCGM_FI_DEV_SM_CLOCK", 1, func(g *DCGMGPU) *model.Opt { return &g.SMClock }},
	{"DCGM_FI_DEV_MAX_SM_CLOCK", 1, func(g *DCGMGPU) *model.Opt { return &g.SMClockMax }},
	{"DCGM_FI_DEV_MEM_CLOCK", 1, func(g *DCGMGPU) *model.Opt { return &g.MemClock }},
	{"DCGM_FI_DEV_MAX_MEM_CLOCK", 1, func(g *DCGMGPU) *model.Opt { return &g.MemClockMax }},
	{"DCGM_FI_DEV_FAN_SPEED", 1, func(g *DCGMGPU) *model.Opt { return &g.Fan }},
	// Profiling metrics are bytes per second; the older fields are NVML's
	// PCIe throughput in KB/s, even though the exporter types them counters.
	{"DCGM_FI_PROF_PCIE_RX_BYTES", 1, func(g *DCGMGPU) *model.Opt { return &g.PCIeRx }},
	{"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", 1024, func(g *DCGMGPU) *model.Opt { return &g.PCIeRx }},
	{"DCGM_FI_PROF_PCIE_TX_BYTES", 1, func(g *DCGMGPU) *model.Opt { return &g.PCIeTx }},
	{"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", 1024, func(g *DCGMGPU) *model.Opt { return &g.PCIeTx }},
	// Double-bit errors are the uncorrected ones, as the NVML source reports.
	{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1, func(g *DCGMGPU) *model.Opt { return &g.ECCVolatile }},
	{"DCGM_FI_DEV_XID_ERRORS", 1, func(g *DCGMGPU) *model.Opt { return &g.Xid }},
}

// dcgmValue returns a sample's value, absent for DCGM's "blank" sentinels
// (not supported, not found, no permission), which the exporter prints as
// huge numbers such as 9223372036854775794.
func dcgmValue(v float64) model.Opt {
	const fp64Blank = 140737488355328.0 // DCGM_FP64_BLANK; int64 blanks are larger
	if v >= fp64Blank || (v >= 0x7ffffff0 && v <= 0x7fffffff) || v < 0 {
		return model.None
	}
	return model.Some(v)
}

// ParseDCGM reads a DCGM exporter scrape (Prometheus text format) into
// devices keyed by host, GPU index and MIG instance. A scrape that breaks off
// part-way returns the devices read before the bad line and the error.
func ParseDCGM(body []byte) (DCGMScrape, error) {
	p := expfmt.NewTextParser(promodel.UTF8Validation)
	fams, perr := p.TextToMetricFamilies(bytes.NewReader(body))
	if perr != nil {
		perr = fmt.Errorf("DCGM exporter scrape is not valid Prometheus text: %w", perr)
	}
	var out DCGMScrape
	byKey := map[string]*DCGMGPU{}
	get := func(m *dto.Metric) *DCGMGPU {
		l := labels(m)
		idx, err := strconv.Atoi(l["gpu"])
		if err != nil {
			return nil
		}
		key := l["Hostname"] + "\x00" + l["gpu"] + "\x00" + l["GPU_I_ID"]
		if g, ok := byKey[key]; ok {
			g.Owner = mergeOwner(g.Owner, owner(l))
			return g
		}
		g := &DCGMGPU{Host: l["Hostname"]}
		g.Index, g.UUID, g.Name = idx, l["UUID"], l["modelName"]
		if prof := l["GPU_I_PROFILE"]; prof != "" {
			g.Name = strings.TrimSpace(g.Name + " MIG " + prof)
		}
		g.Owner = owner(l)
		if out.Driver == "" {
			out.Driver = l["DCGM_FI_DRIVER_VERSION"]
		}
		byKey[key] = g
		return g
	}
	for _, f := range dcgmFields {
		for _, m := range fams[f.name].GetMetric() {
			g, v := get(m), sampleValue(m)
			if g == nil || !v.OK {
				continue
			}
			if dst := f.field(g); !dst.OK {
				*dst = v.Scale(f.scale)
			}
		}
	}
	for _, g := range byKey {
		if !g.MemTotal.OK && g.MemUsed.OK && g.fbFree.OK {
			g.MemTotal = model.Some(g.MemUsed.V + g.fbFree.V + g.fbReserved.Or(0))
		}
	}
	for _, name := range []string{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"} {
		for _, m := range fams[name].GetMetric() {
			if g, v := get(m), sampleValue(m); g != nil && v.OK && g.Throttle == nil {
				g.Throttle = DecodeThrottle(uint64(v.V))
			}
		}
	}
	for _, g := range byKey {
		out.GPUs = append(out.GPUs, *g)
	}
	sort.Slice(out.GPUs, func(i, j int) bool {
		a, b := out.GPUs[i], out.GPUs[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Index != b.Index {
			return a.Index < b.Index
		}
		return a.Name < b.Name
	})
	return out, perr
}

// owner reads a series' host and Kubernetes workload labels. Scraped
// through Prometheus, the exporter's own pod is pod and the workload's is
// exported_pod, so exported_* wins; nil when no label names an owner.
func owner(l map[string]string) *model.GPUOwner {
	pick := func(name string) string {
		if v := l["exported_"+name]; v != "" {
			return v
		}
		return l[name]
	}
	o := model.GPUOwner{Host: pick("Hostname"), Namespace: pick("namespace"), Pod: pick("pod"), Container: pick("container")}
	if o == (model.GPUOwner{}) {
		return nil
	}
	return &o
}

// mergeOwner adds b's pods (a GPU shared by several) to a.
func mergeOwner(a, b *model.GPUOwner) *model.GPUOwner {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	add := func(dst *string, v string) {
		if v == "" {
			return
		}
		for _, x := range strings.Split(*dst, ",") {
			if x == v {
				return
			}
		}
		if *dst == "" {
			*dst = v
		} else {
			*dst += "," + v
		}
	}
	add(&a.Host, b.Host)
	add(&a.Namespace, b.Namespace)
	add(&a.Pod, b.Pod)
	add(&a.Container, b.Container)
	return a
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// sampleValue reads a gauge, counter or untyped sample.
func sampleValue(m *dto.Metric) model.Opt {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	default:
		return model.None
	}
	if math.IsNaN(v) {
		return model.None
	}
	return dcgmValue(v)
}
