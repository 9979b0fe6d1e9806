package diagnosis

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The model against the device it runs on: the weights' size against GPU
// memory, the number formats it was started with against the GPU's
// compute capability, and the links between GPUs and host (PCIe trained
// down or retransmitting, NVLink links down).

func init() {
	register(
		rule{id: "weights_vram", checks: "the weights leave GPU memory for the KV cache", hold: holdNone, local: true, eval: ruleWeightsVRAM},
		rule{id: "dtype_capability", checks: "the GPU computes in the number formats the engine uses", hold: holdNone, local: true, eval: ruleDtypeCapability},
		rule{id: "pcie_link", checks: "the GPUs' PCIe links run at full speed without retransmissions", needs: needGPU, hold: holdDefault, eval: rulePCIeLink},
		rule{id: "nvlink_down", checks: "every NVLink link is up", needs: needGPU, hold: holdDefault, eval: ruleNVLinkDown},
		rule{id: "tp_no_p2p", checks: "the engine's GPUs reach each other peer-to-peer, within one CPU socket", needs: needGPU, hold: holdNone, eval: ruleTPNoP2P},
	)
}

// Thresholds of the device rules.
const (
	// weightsShare is the share of a GPU's memory the weights may take
	// before the KV cache (and so the batch) is starved.
	weightsShare = 0.75
	// linkBusyUtil is the GPU utilisation (%) above which a PCIe link
	// below its maximum is not power saving: links train down when idle.
	linkBusyUtil = 50.0
	// replaysPerS is the PCIe retransmission rate that means a bad link.
	replaysPerS = 1.0
)

// weightsOnGPU is the most memory one GPU's share of the weights took, by
// the engine's own log (each tensor-parallel rank and each llama.cpp
// device prints its own), with the line that said so.
func weightsOnGPU(e *env, ep Endpoint) (bytes float64, line model.Event, ok bool) {
	for _, x := range e.eventsOf(ep.URL) {
		if e.ahead(x.Time) {
			continue
		}
		a := engines.LogReports(x.Kind)
		if a.What != engines.AmountWeights {
			continue
		}
		f, err := strconv.ParseFloat(x.Fields[a.Field], 64)
		if err != nil {
			continue
		}
		if v := f * a.Unit; v > bytes {
			bytes, line, ok = v, x, true
		}
	}
	return bytes, line, ok
}

// smallestGPU is the engine's GPU with the least memory (the one the
// weights fill first).
func smallestGPU(g *model.GPUSnapshot) (model.GPU, bool) {
	var best model.GPU
	found := false
	for _, d := range EngineGPUs(g) {
		if d.MemTotal.OK && d.MemTotal.V > 0 && (!found || d.MemTotal.V < best.MemTotal.V) {
			best, found = d, true
		}
	}
	return best, found
}

func ruleWeightsVRAM(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		w, line, ok := weightsOnGPU(e, *ep)
		source := ""
		if ok {
			source = "log: " + model.Clean(line.Line)
		} else if h := ep.Host; h != nil && h.Weights.OK {
			// No load line: the checkpoint's size on disk, split over the
			// tensor-parallel ranks its command line asks for.
			tp := max(1, tensorParallel(h))
			w, ok = h.Weights.V/float64(tp), true
			source = fmt.Sprintf("model files: %s (%s on disk over tensor parallelism %d; an engine that quantises on load holds less)", h.WeightsFrom, gib(h.Weights.V), tp)
		}
		if !ok {
			// Neither a load line nor the model's files: nothing to weigh,
			// and so not checked.
			e.lack(ep, "the weights against GPU memory (their size is not known: no load line in the log, and the model's files were not found on this machine)")
			continue
		}
		d, ok := smallestGPU(e.in.GPU)
		if !ok {
			e.lack(ep, "the weights against GPU memory (no GPU memory reading; NVML is not readable here)")
			continue
		}
		share := w / d.MemTotal.V
		if share < weightsShare {
			continue
		}
		ev := []Evidence{
			{Text: fmt.Sprintf("weights %s of GPU %d's %s (%s): %s", gib(w), d.Index, gib(d.MemTotal.V), nonEmpty(d.Name, "GPU"), pct(share)), Source: source},
		}
		flag, frac, _ := memFraction(*ep)
		if flag != "" && frac > 0 {
			left := d.MemTotal.V*frac - w
			ev = append(ev, Evidence{Text: fmt.Sprintf("%s %.2f leaves %s for the KV cache and activations", flag, frac, gib(max(left, 0))), Source: "engine configuration"})
		}
		if kv, ok := newestEvent(e, *ep, func(k string) bool { return engines.LogReports(k).What == engines.AmountKV }); ok {
			a := engines.LogReports(kv.Kind)
			ev = append(ev, Evidence{Text: "the engine's KV cache got " + gibText(kv.Fields[a.Field], a.Unit), Source: "log: " + model.Clean(kv.Line)})
		}
		if ep.State.KVUsage.OK {
			ev = append(ev, Evidence{Text: "KV cache " + pct(ep.State.KVUsage.V) + " full", Source: metricSource(*ep, "kv")})
		}
		sev := model.SevWarn
		if share >= 0.9 {
			sev = model.SevCrit
		}
		eng := ep.Engine()
		var acts []Action
		if s := engines.Of(eng); s != nil && len(s.Levers.TensorParallel) > 0 {
			acts = append(acts, Action{Change: s.Levers.TensorParallel[0] + " 2 (or more)", Why: "each GPU holds half the weights, the rest is KV cache", TradeOff: "a second GPU; all-reduce over the link between them"})
		}
		acts = append(acts, Action{Change: "a quantised checkpoint (fp8, AWQ or GPTQ; for GGUF a smaller quant such as Q4_K_M)", Why: "half the weight bytes or less", TradeOff: "a small accuracy cost"})
		acts = append(acts, forEngine(eng, fp8KV)...)
		out = append(out, Finding{Endpoint: ep.URL, Category: Memory, Severity: sev,
			Title:    fmt.Sprintf("the weights fill %s of each GPU's memory (%s of %s)", pct(share), gib(w), gib(d.MemTotal.V)),
			Evidence: ev,
			Cause:    "what the weights take the KV cache cannot have: few tokens fit, so the batch stays small, requests queue and long contexts are refused",
			Actions:  acts})
	}
	return out
}

// gibText is a size a log line stated in unit, in GiB: as the line wrote
// it where it wrote GiB.
func gibText(v string, unit float64) string {
	if unit == 1<<30 {
		return v + " GiB"
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	return gib(f * unit)
}

// newestEvent is the endpoint's newest event of a kind kind accepts.
func newestEvent(e *env, ep Endpoint, kind func(string) bool) (model.Event, bool) {
	var best model.Event
	found := false
	for _, x := range e.eventsOf(ep.URL) {
		if kind(x.Kind) && !e.ahead(x.Time) && (!found || !x.Time.Before(best.Time)) {
			best, found = x, true
		}
	}
	return best, found
}

// precisions lists the number formats the engine was started with, from its
// configuration (the args line of its log, its config-info metric) and
// else its command line: "dtype=bfloat16", "quantization=fp8"….
func precisions(ep Endpoint) []string {
	var out []string
	for _, k := range []string{"dtype", "quantization", "kv_cache_dtype", "cache_dtype"} {
		if v, ok := served(ep, k); ok && v != "auto" {
			out = append(out, k+"="+strings.Trim(v, "'\""))
		}
	}
	if len(out) > 0 || ep.Host == nil {
		return out
	}
	if s := engines.Of(ep.Engine()); s != nil {
		for _, flag := range s.Levers.Precision {
			if v, ok := cmdFlag(ep.Host, flag); ok && v != "auto" {
				out = append(out, flag+"="+v)
			}
		}
	}
	return out
}

// needsCC is the compute capability a number format needs to run at all,
// and the one it needs to run in hardware ("" none).
func needsCC(p string) (format, atAll, native string) {
	v := strings.ToLower(p[strings.IndexByte(p, '=')+1:])
	switch {
	case strings.Contains(v, "bfloat16") || v == "bf16":
		return "bfloat16", "8.0", "8.0"
	case strings.Contains(v, "fp8"):
		if strings.Contains(p, "kv") || strings.Contains(p, "cache") {
			return "fp8 KV cache", "", "8.9"
		}
		return "fp8", "8.0", "8.9"
	}
	return "", "", ""
}

// ccLess compares "8.6" with "8.9".
func ccLess(a, b string) bool {
	pa, pb := strings.SplitN(a, ".", 2), strings.SplitN(b, ".", 2)
	ma, _ := strconv.Atoi(pa[0])
	mb, _ := strconv.Atoi(pb[0])
	if ma != mb {
		return ma < mb
	}
	var na, nb int
	if len(pa) > 1 {
		na, _ = strconv.Atoi(pa[1])
	}
	if len(pb) > 1 {
		nb, _ = strconv.Atoi(pb[1])
	}
	return na < nb
}

func ruleDtypeCapability(e *env) []Finding {
	var out []Finding
	for ep := range each(e.in.Endpoints) {
		marlin, logged := newestEvent(e, *ep, func(k string) bool { return engines.LogEmulates(k) == "fp8" })
		ps := precisions(*ep)
		var d model.GPU
		haveCC := false
		for _, g := range EngineGPUs(e.in.GPU) {
			if g.ComputeCap != "" && (!haveCC || ccLess(g.ComputeCap, d.ComputeCap)) {
				d, haveCC = g, true
			}
		}
		var ev []Evidence
		sev := model.Severity(0)
		var acts []Action
		title := ""
		if haveCC {
			for _, p := range ps {
				format, atAll, native := needsCC(p)
				switch {
				case format == "":
				case atAll != "" && ccLess(d.ComputeCap, atAll):
					sev = max(sev, model.SevCrit)
					title = fmt.Sprintf("%s needs compute capability %s; GPU %d (%s) has %s", format, atAll, d.Index, nonEmpty(d.Name, "GPU"), d.ComputeCap)
					ev = append(ev, Evidence{Text: p + " on compute capability " + d.ComputeCap, Source: gpuSource(e.in.GPU) + "; engine configuration"})
					acts = append(acts, dtypeFallback(format))
				case ccLess(d.ComputeCap, native):
					if sev < model.SevWarn {
						title = fmt.Sprintf("%s without hardware support on GPU %d (%s, compute capability %s)", format, d.Index, nonEmpty(d.Name, "GPU"), d.ComputeCap)
					}
					sev = max(sev, model.SevWarn)
					ev = append(ev, Evidence{Text: fmt.Sprintf("%s: computed in %s only from compute capability %s", p, format, native), Source: gpuSource(e.in.GPU) + "; engine configuration"})
					acts = append(acts, dtypeFallback(format))
				}
			}
		}
		if logged {
			if sev < model.SevWarn {
				title = "fp8 weights on a GPU without fp8 compute (weight-only, Marlin)"
			}
			sev = max(sev, model.SevWarn)
			ev = append(ev, Evidence{Text: marlin.When(marlin.Time.Location()) + " " + marlin.Title, Source: "log: " + model.Clean(marlin.Line)})
			if len(acts) == 0 {
				acts = append(acts, dtypeFallback("fp8"))
			}
		}
		if sev == 0 {
			// Whichever input is missing is named: with neither, nothing
			// was checked.
			switch {
			case len(ps) == 0 && !haveCC:
				e.lack(ep, "the number formats against the GPU (neither the engine's dtype nor the GPU's compute capability is known)")
			case len(ps) == 0 && haveCC:
				e.lack(ep, "the number formats against the GPU (the engine's dtype is not known: attach its log or run llmtop on its machine)")
			case len(ps) > 0 && !haveCC:
				e.lack(ep, "the number formats against the GPU (no compute capability: NVML is not readable here)")
			}
			continue
		}
		out = append(out, Finding{Endpoint: ep.URL, Category: GPU, Severity: sev, Title: title, Evidence: ev,
			Cause:   "tensor cores compute bfloat16 from Ampere (8.0) and fp8 from Ada/Hopper (8.9): below that the engine refuses to start, or converts every matmul back to 16 bits and keeps only the memory saving",
			Actions: dedupeActions(acts)})
	}
	return out
}

// dtypeFallback is what to run instead of a format the GPU lacks.
func dtypeFallback(format string) Action {
	switch format {
	case "bfloat16":
		return Action{Change: "serve in float16 (dtype half / float16)", Why: "every CUDA GPU computes float16", TradeOff: "a rare overflow in models trained in bfloat16"}
	case "fp8 KV cache":
		return Action{Change: "keep the fp8 KV cache for its memory, or drop it (dtype auto) if attention got slower", Why: "the cache is stored in 8 bits but attention reads it back in 16", TradeOff: "twice the KV memory without it"}
	}
	return Action{Change: "an INT8/INT4 checkpoint (AWQ, GPTQ, W8A8-INT8) on this GPU, or an Ada/Hopper GPU for fp8", Why: "this GPU's tensor cores compute INT8 and 16-bit formats, not fp8", TradeOff: "another checkpoint (or another GPU)"}
}

func dedupeActions(as []Action) []Action {
	var out []Action
	seen := map[string]bool{}
	for _, a := range as {
		if !seen[a.Change] {
			seen[a.Change] = true
			out = append(out, a)
		}
	}
	return out
}

func rulePCIeLink(e *env) []Finding {
	g := e.in.GPU
	var ev []Evidence
	worst := model.SevInfo
	var which []string
	for _, d := range EngineGPUs(g) {
		slow := d.Util.OK && d.Util.V >= linkBusyUtil &&
			((d.PCIeGen.OK && d.PCIeGenMax.OK && d.PCIeGen.V < d.PCIeGenMax.V) || (d.PCIeWidth.OK && d.PCIeWidthMax.OK && d.PCIeWidth.V < d.PCIeWidthMax.V))
		if slow {
			ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d at %.0f %% runs its link at Gen%s x%s of Gen%s x%s", d.Index, d.Util.V,
				optNum(d.PCIeGen), optNum(d.PCIeWidth), optNum(d.PCIeGenMax), optNum(d.PCIeWidthMax)), Source: gpuSource(g)})
			worst = max(worst, model.SevWarn)
			which = append(which, strconv.Itoa(d.Index))
		}
		if r := d.PCIeReplaysPS; r.OK && r.V >= replaysPerS {
			ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d: %s PCIe replays/s (%s since the driver loaded)", d.Index, num(r.V), optNum(d.PCIeReplays)), Source: gpuSource(g)})
			worst = max(worst, model.SevWarn)
			which = append(which, strconv.Itoa(d.Index))
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []Finding{{Category: GPU, Severity: worst,
		Title:    "PCIe link of GPU " + strings.Join(dedupe(which), ", ") + " below its speed or retransmitting",
		Evidence: ev,
		Cause:    "a link trained down (a riser, a slot wired for fewer lanes, a BIOS setting) or retransmitting (a bad riser or cable) slows weight loading, CPU offload and tensor parallelism without NVLink",
		Actions:  []Action{{Change: "reseat the GPU or its riser, check the slot's lanes and the BIOS PCIe generation; nvidia-smi -q -d PCIE shows the link and its replays", Why: "a link below its maximum under load is hardware, not a setting of the engine", TradeOff: "a maintenance window"}}}}
}

func ruleNVLinkDown(e *env) []Finding {
	g := e.in.GPU
	var ev []Evidence
	var which []string
	for _, d := range EngineGPUs(g) {
		if d.NVLinks.OK && d.NVLinksMax.OK && d.NVLinks.V < d.NVLinksMax.V {
			ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d: %s of %s NVLink links up", d.Index, num(d.NVLinks.V), num(d.NVLinksMax.V)), Source: gpuSource(g)})
			which = append(which, strconv.Itoa(d.Index))
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []Finding{{Category: GPU, Severity: model.SevWarn,
		Title:    "NVLink down on GPU " + strings.Join(which, ", "),
		Evidence: ev,
		Cause:    "tensor parallelism all-reduces every layer over NVLink: with links down the traffic shares fewer links or falls back to PCIe, and every step slows",
		Actions:  []Action{{Change: "nvidia-smi nvlink -s to see which links are down; an NVSwitch fabric needs nvidia-fabricmanager running; otherwise reset the GPU or service the board", Why: "a link does not come back by itself", TradeOff: "the GPU leaves service while it is reset"}}}}
}

// ruleTPNoP2P judges the links between the GPUs one engine spans (those
// holding its processes): without NVLink, tensor parallelism's all-reduce
// runs every layer over PCIe, and without peer-to-peer through host
// memory; across CPU sockets it crosses the socket interconnect too.
func ruleTPNoP2P(e *env) []Finding {
	g := e.in.GPU
	// pointers into the snapshot: a GPU is a large struct, and the rule
	// runs every second
	var gs []*model.GPU
	for i := range g.GPUs {
		if servesEngine(&g.GPUs[i]) {
			gs = append(gs, &g.GPUs[i])
		}
	}
	if len(gs) < 2 {
		return nil // one GPU, or which ones the engine spans is unknown
	}
	in := make(map[int]*model.GPU, len(gs))
	for _, d := range gs {
		in[d.Index] = d
	}
	var ev []Evidence
	sev := model.SevInfo
	seen := map[[2]int]bool{}
	for _, a := range gs {
		for _, p := range a.Peers {
			b, ok := in[p.Index]
			if !ok {
				continue
			}
			k := [2]int{min(a.Index, b.Index), max(a.Index, b.Index)}
			if seen[k] {
				continue
			}
			seen[k] = true
			nvlink := a.NVLinks.OK && a.NVLinks.V > 0 && b.NVLinks.OK && b.NVLinks.V > 0
			switch {
			case nvlink:
			case p.P2P != "" && p.P2P != "ok":
				ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d ↔ GPU %d: no NVLink, peer-to-peer %s (%s)", k[0], k[1], p.P2P, nonEmpty(p.Path, "path unknown")), Source: gpuSource(g)})
				sev = max(sev, model.SevWarn)
			case p.Path == "across CPU sockets":
				ev = append(ev, Evidence{Text: fmt.Sprintf("GPU %d ↔ GPU %d: no NVLink, across CPU sockets", k[0], k[1]), Source: gpuSource(g)})
				sev = max(sev, model.SevWarn)
			}
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []Finding{{Category: GPU, Severity: sev,
		Title:    "the engine's GPUs talk through host memory or across CPU sockets",
		Evidence: ev,
		Cause:    "tensor parallelism all-reduces every layer between its GPUs: without NVLink or peer-to-peer each transfer is copied through host memory (consumer cards have P2P disabled; some chipsets and IOMMU settings block it), and across sockets it also crosses the CPU interconnect",
		Actions: []Action{
			{Change: "place the engine on GPUs that share a PCIe switch or NVLink (CUDA_VISIBLE_DEVICES; nvidia-smi topo -m shows the matrix)", Why: "the all-reduce stays on the switch", TradeOff: "fewer ways to place engines"},
			{Change: "pipeline parallelism instead of tensor parallelism across the slow link", Why: "it sends one activation per layer boundary, not an all-reduce per layer", TradeOff: "a higher latency per token at small batches"},
		}}}
}
