package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/tui"
)

// printSnapshot writes the snapshot for people: per endpoint and model the
// identity, the gauges and rates, then the latency table. "--" is a value
// the engine does not expose (or no data in the window); "≈" marks a
// percentile estimated from histogram buckets.
func printSnapshot(w io.Writer, snap model.SnapshotJSON) {
	for i, e := range snap.Endpoints {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printEntry(w, e)
	}
	if snap.GPU != nil {
		fmt.Fprintln(w)
		printGPUs(w, *snap.GPU)
	}
}

// printGPUs writes one line per GPU, or the reason none can be read.
func printGPUs(w io.Writer, g model.GPUSnapshot) {
	if g.Err != "" {
		fmt.Fprintf(w, "GPU    %s\n", g.Err)
		return
	}
	for _, d := range g.GPUs {
		if d.Lost {
			fmt.Fprintf(w, "GPU %d  %s  lost: %s\n", d.Index, d.Name, d.Err)
			continue
		}
		// n/a: the device said it has no such reading; --: it was not read.
		field := func(o model.Opt, name, format string) string {
			if !o.OK && d.IsUnsupported(name) {
				return "n/a"
			}
			return optUnit(o, format)
		}
		mem := field(model.None, model.GPUFieldMemUsed, "")
		if d.MemUsed.OK && d.MemTotal.OK {
			mem = fmt.Sprintf("%.1f/%.1f GiB", d.MemUsed.V/(1<<30), d.MemTotal.V/(1<<30))
		}
		fmt.Fprintf(w, "GPU %d  %s  util %s  mem %s  power %s  temp %s%s\n", d.Index, d.Name,
			field(d.Util, model.GPUFieldUtil, "%.0f%%"), mem, field(d.Power, model.GPUFieldPower, "%.0f W"),
			field(d.Temp, model.GPUFieldTemp, "%.0f°C"), throttleSuffix(d.Throttle))
	}
	if g.Note != "" {
		fmt.Fprintf(w, "       %s\n", g.Note)
	}
}

func optUnit(o model.Opt, format string) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprintf(format, o.V)
}

func throttleSuffix(reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	return "  throttled: " + strings.Join(reasons, ", ")
}

func printEntry(w io.Writer, e model.EndpointJSON) {
	eng := string(e.Engine)
	if eng == "" {
		eng = "unknown engine"
	}
	sim := ""
	if e.Simulated {
		sim = "SIMULATED"
	}
	fmt.Fprintf(w, "%s  %s\n", e.URL, joinNonEmpty("  ", eng, e.Version, statusWord(e.Status, e.Health), sim))
	if e.Model != "" {
		ctx := ""
		if e.MaxContext.OK {
			ctx = fmt.Sprintf("(context %s tokens)", fmtNum(e.MaxContext.V))
		}
		fmt.Fprintf(w, "  model  %s\n", joinNonEmpty(" ", loadedMark(e, e.Model), ctx))
	}
	if len(e.Models) > 1 {
		names := make([]string, len(e.Models))
		for i, m := range e.Models {
			names[i] = loadedMark(e, m)
		}
		fmt.Fprintf(w, "  serves %s\n", strings.Join(names, ", "))
	}
	if e.State != "" && e.State != model.LifeUnknown {
		state := string(e.State)
		if n := len(e.Runs); n > 0 {
			state += fmt.Sprintf(" · run %d (%s)", e.Runs[n-1].N, e.Runs[n-1].StartedBy)
		}
		fmt.Fprintf(w, "  state  %s\n", joinNonEmpty(": ", state, e.StateDetail))
	}
	if e.Error != "" {
		fmt.Fprintf(w, "  error  %s\n", e.Error)
		if e.Hint != "" {
			fmt.Fprintf(w, "  hint   %s\n", e.Hint)
		}
	}
	if m := e.Metrics; m != nil {
		printMetrics(w, m)
	}
	printInfo(w, e.Info)
	if e.Host != nil {
		// The screen's Host pane, line for line (100 cells: a terminal's
		// width is not known here).
		for i, l := range tui.HostLines(e.Host, 100) {
			head := "       "
			if i == 0 {
				head = "  host "
			}
			fmt.Fprintf(w, "%s%s\n", head, l)
		}
	}
	for _, n := range e.Notes {
		fmt.Fprintf(w, "  note   %s\n", n)
	}
}

// loadedMark is a model's name, marked "(not loaded)" where the engine
// lists it without having it loaded, as the screen's header does (Ollama
// after its keep-alive: the next request pays the load).
func loadedMark(e model.EndpointJSON, name string) string {
	if slices.Contains(e.NotLoaded, name) {
		return name + " (not loaded)"
	}
	return name
}

func printMetrics(w io.Writer, m *model.MetricsJSON) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  running\t%s\twaiting\t%s\tKV cache\t%s\tprefix hit\t%s\n",
		fmtOpt(m.Running, ""), fmtOpt(m.Waiting, ""), fmtPct(m.KVCacheUsageRatio), fmtPct(m.PrefixCacheHitRatio))
	fmt.Fprintf(tw, "  prompt tok/s\t%s\tgen tok/s\t%s\treq/s\t%s\tpreempt/s\t%s\n",
		fmtOpt(m.PromptTokensPerS, ""), fmtOpt(m.GenerationTokensPerS, ""), fmtOpt(m.RequestsPerS, ""), fmtOpt(m.PreemptionsPerS, ""))
	if m.KVCapacityTokens.OK || m.SpecDecodeAcceptance.OK {
		fmt.Fprintf(tw, "  KV capacity\t%s\tspec accept\t%s\t\t\t\t\n", fmtOpt(m.KVCapacityTokens, " tok"), fmtPct(m.SpecDecodeAcceptance))
	}
	_ = tw.Flush()
	printEngineOwn(w, m)
	fmt.Fprintf(w, "  latency over %s (ms)\n", fmtWindow(m.WindowS))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\t\tp50\tp90\tp99\tmean\tcount\t")
	rows := []struct {
		name string
		d    model.DistJSON
	}{
		{"TTFT", m.TTFTms}, {"TPOT", m.TPOTms}, {"ITL", m.ITLms}, {"E2E", m.E2Ems},
		{"queue", m.Queuems}, {"prefill", m.Prefillms}, {"decode", m.Decodems},
	}
	var approx []string
	for _, r := range rows {
		q := func(o model.Opt) string {
			if mark, v := r.d.Shown(o); mark != "" {
				// the lowest or past the highest bucket: only a bound is known
				return mark + fmtOpt(v, "")
			}
			s := fmtOpt(o, "")
			if o.OK && r.d.Estimate {
				s = "≈" + s
			}
			return s
		}
		fmt.Fprintf(tw, "  \t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.name, q(r.d.P50), q(r.d.P90), q(r.d.P99), fmtOpt(r.d.Mean, ""), countText(r.d))
		if r.d.Approx != "" {
			approx = append(approx, r.name+": "+r.d.Approx)
		}
	}
	_ = tw.Flush()
	for _, a := range approx {
		fmt.Fprintf(w, "  approx %s\n", a)
	}
	if len(m.FinishReasons) > 0 {
		var parts []string
		for _, k := range sortedFloatKeys(m.FinishReasons) {
			if m.FinishReasons[k] > 0 {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*m.FinishReasons[k]))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "  finish %s\n", strings.Join(parts, ", "))
		}
	}
	if m.Restarts > 0 {
		fmt.Fprintf(w, "  restarts seen: %d (counters went backwards)\n", m.Restarts)
	}
}

// printEngineOwn writes the engine's own throughput gauges, apart from the
// rates llmtop measured, saying which seconds they divide by where that is
// not the wall clock (llama.cpp's: its slots' processing time).
func printEngineOwn(w io.Writer, m *model.MetricsJSON) {
	var parts []string
	if m.EnginePromptTokensPerS.OK {
		parts = append(parts, "prompt "+fmtOpt(m.EnginePromptTokensPerS, " tok/s"))
	}
	if m.EngineGenerationTokensPerS.OK {
		parts = append(parts, "gen "+fmtOpt(m.EngineGenerationTokensPerS, " tok/s"))
	}
	if len(parts) == 0 {
		return
	}
	over := ""
	if m.EngineRatesOver == "busy_time" {
		over = ", counting only its slots' processing time (busy time), not the wall clock"
	}
	fmt.Fprintf(w, "  engine says %s%s\n", strings.Join(parts, ", "), over)
}

// countText is a distribution's count, with what it counts where that is
// not requests ("120 tok": llama.cpp's TPOT is a mean over tokens).
func countText(d model.DistJSON) string {
	if d.CountOf == "tokens" && d.Count.OK {
		return fmtOpt(d.Count, " tok")
	}
	if d.CountOf != "" && d.Count.OK {
		return fmtOpt(d.Count, " "+d.CountOf)
	}
	return fmtOpt(d.Count, "")
}

// printInfo writes the static facts as k=v pairs, wrapped, leaving out
// unset ones ("None").
func printInfo(w io.Writer, info map[string]string) {
	line := "  info  "
	for _, k := range sortedKeys(info) {
		v := info[k]
		if v == "" || v == "None" {
			continue
		}
		kv := " " + k + "=" + v
		if len(line)+len(kv) > 100 && line != "  info  " {
			fmt.Fprintln(w, line)
			line = "        "
		}
		line += kv
	}
	if strings.TrimSpace(line) != "info" {
		fmt.Fprintln(w, line)
	}
}

func fmtOpt(o model.Opt, unit string) string {
	if !o.OK {
		return "--"
	}
	return fmtNum(o.V) + unit
}

func fmtPct(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return strconv.FormatFloat(100*o.V, 'f', 1, 64) + "%"
}

// fmtNum prints integers as integers and other values with 3 significant
// decimals at most.
func fmtNum(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	switch a := abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func fmtWindow(s float64) string {
	if s <= 0 {
		return "no window yet"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + "s"
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sortedFloatKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	return ks
}
