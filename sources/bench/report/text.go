package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/guptarohit/asciigraph"
	"github.com/llmtop/llmtop/model"
)

// Text renders a result the way `vllm bench serve` prints it, with null
// values as "--" and the server's own view beside the client's when known.
func Text(r Result) string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%-40s %s\n", k, v) }
	fmt.Fprintf(&b, "%s\n", center(" Serving Benchmark Result ", '='))
	line("Target:", r.BaseURL+r.Endpoint+" ("+r.ModelID+")")
	line("Successful requests:", fmt.Sprint(r.Completed))
	line("Failed requests:", fmt.Sprint(r.Failed))
	if r.Cancelled > 0 {
		line("Cancelled requests:", fmt.Sprint(r.Cancelled))
	}
	if r.MaxConcurrency > 0 { // 0: no cap, which vllm leaves out too
		line("Maximum request concurrency:", fmt.Sprint(r.MaxConcurrency))
	}
	if !r.RequestRate.IsInf() {
		line("Request rate configured (RPS):", fmt.Sprintf("%.2f", float64(r.RequestRate)))
	}
	line("Benchmark duration (s):", fmt.Sprintf("%.2f", r.Duration))
	line("Total input tokens:", fmt.Sprint(r.TotalInputTokens))
	line("Total generated tokens:", fmt.Sprint(r.TotalOutputTokens))
	line("Request throughput (req/s):", fmt.Sprintf("%.2f", r.RequestThroughput))
	if r.RequestGoodput.OK {
		line("Request goodput (req/s):", fmt.Sprintf("%.2f", r.RequestGoodput.V))
	}
	line("Output token throughput (tok/s):", fmt.Sprintf("%.2f", r.OutputThroughput))
	line("Peak output token throughput (tok/s):", fmt.Sprintf("%.2f", r.MaxOutputTokensPerS))
	line("Peak concurrent requests:", fmt.Sprint(r.MaxConcurrent))
	line("Total token throughput (tok/s):", fmt.Sprintf("%.2f", r.TotalTokenThroughput))
	var srv *model.MetricsJSON = r.Server
	section := func(title, name string, mean, median, p90, p99 model.Opt, server *model.DistJSON) {
		fmt.Fprintf(&b, "%s\n", center(title, '-'))
		line("Mean "+name+" (ms):", ms(mean))
		line("Median "+name+" (ms):", ms(median))
		line("P90 "+name+" (ms):", ms(p90))
		line("P99 "+name+" (ms):", ms(p99))
		if server != nil {
			est := ""
			if server.Estimate {
				est = "≈"
			}
			line("Server "+name+" p50/p99"+est+" (ms):", serverQ(*server, server.P50)+" / "+serverQ(*server, server.P99)+whyNot(*server, r.ServerEngine))
		}
	}
	pick := func(f func(*model.MetricsJSON) *model.DistJSON) *model.DistJSON {
		if srv == nil {
			return nil
		}
		return f(srv)
	}
	section("Time to First Token", "TTFT", r.MeanTTFT, r.MedianTTFT, r.P90TTFT, r.P99TTFT, pick(func(m *model.MetricsJSON) *model.DistJSON { return &m.TTFTms }))
	section("Time per Output Token (excl. 1st token)", "TPOT", r.MeanTPOT, r.MedianTPOT, r.P90TPOT, r.P99TPOT, pick(func(m *model.MetricsJSON) *model.DistJSON { return &m.TPOTms }))
	section("Inter-token Latency", "ITL", r.MeanITL, r.MedianITL, r.P90ITL, r.P99ITL, pick(func(m *model.MetricsJSON) *model.DistJSON { return &m.ITLms }))
	section("End-to-end Latency", "E2EL", r.MeanE2EL, r.MedianE2EL, r.P90E2EL, r.P99E2EL, pick(func(m *model.MetricsJSON) *model.DistJSON { return &m.E2Ems }))
	if srv != nil {
		line("Server queue time p50/p99 (ms):", serverQ(srv.Queuems, srv.Queuems.P50)+" / "+serverQ(srv.Queuems, srv.Queuems.P99)+whyNot(srv.Queuems, r.ServerEngine))
	}
	if len(r.ErrorsByKind) > 0 {
		fmt.Fprintf(&b, "%s\n", center("Errors", '-'))
		kinds := make([]string, 0, len(r.ErrorsByKind))
		for k := range r.ErrorsByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			line(k+":", fmt.Sprint(r.ErrorsByKind[k]))
		}
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(&b, "  %s\n", s)
		}
	}
	if len(r.FinishReasons) > 0 {
		reasons := ReasonsByCount(r.FinishReasons)
		parts := make([]string, len(reasons))
		for i, k := range reasons {
			parts[i] = fmt.Sprintf("%s %d", k, r.FinishReasons[k])
		}
		line("Finish reasons:", strings.Join(parts, ", "))
	}
	if r.BlankResponses+r.EchoedResponses+r.RepetitiveResponses > 0 {
		fmt.Fprintf(&b, "%s\n", center(" Answers (first 2 KB of text) ", '-'))
		line("Blank (white space only):", fmt.Sprint(r.BlankResponses))
		line("Echoing the prompt:", fmt.Sprint(r.EchoedResponses))
		rep := fmt.Sprint(r.RepetitiveResponses)
		if r.IgnoreEOS && r.RepetitiveResponses > 0 {
			rep += " (ignore_eos: text past the model's own end is forced)"
		}
		line("Repetitive (looping):", rep)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString(strings.Repeat("=", 50) + "\n")
	return b.String()
}

// whyNot is " (why)" after a server line with neither percentile, "" otherwise.
func whyNot(j model.DistJSON, engine string) string {
	if w := ServerWhy(j, engine, func(o model.Opt) string { return ms(o) + " ms" }); w != "" {
		return " (" + w + ")"
	}
	return ""
}

// ServerWhy says why a server latency has no percentiles ("" when it has
// one): the engine does not report it (llama-server has no TTFT metric),
// reports a mean only (its TPOT: seconds per predicted token), or saw no
// request in the run's window. engine names it ("" for "the server");
// mean writes the mean in milliseconds.
func ServerWhy(j model.DistJSON, engine string, mean func(model.Opt) string) string {
	if j.P50.OK || j.P99.OK || j.AllBelowMS.OK || j.AboveMS.OK {
		return ""
	}
	if engine == "" {
		engine = "the server"
	}
	switch {
	case !j.Count.OK && !j.Mean.OK:
		return "not reported by " + engine
	case j.Mean.OK && strings.Contains(j.Approx, "Little's law"):
		// llama-server times no queue and no TTFT: this mean is llmtop's
		// (mean waiting ÷ mean running × time in a slot, from the log),
		// not a figure the engine reports.
		return "not reported by " + engine + "; llmtop's estimate from its log (Little's law), a mean only: " + mean(j.Mean)
	case j.Mean.OK:
		return engine + " reports a mean only: " + mean(j.Mean)
	}
	return "no request in the run's window"
}

// serverQ is a server percentile in ms, or the bound the buckets give
// ("<10.00" when all sat in the lowest bucket, as the screen's "<10ms").
func serverQ(j model.DistJSON, p model.Opt) string {
	mark, v := j.Shown(p)
	return mark + ms(v)
}

// SweepText renders a sweep: one line per step, the knee, and the
// throughput and latency curves drawn with asciigraph.
func SweepText(sw Sweep) string {
	var b strings.Builder
	unit := "streams"
	if sw.Mode == "rate" {
		unit = "req/s"
	}
	fmt.Fprintf(&b, "%s\n", center(" Sweep ", '='))
	fmt.Fprintf(&b, "%8s %10s %10s %12s %12s %12s %8s %s\n", unit, "req/s", "out tok/s", "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms", "failed", "SLO")
	var thr, ttft []float64
	for i, s := range sw.Steps {
		r := s.Result
		slo := ""
		if s.MeetsSLO != nil {
			slo = map[bool]string{true: "met", false: "missed"}[*s.MeetsSLO]
		}
		mark := " "
		if i == sw.Knee {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s%7g %10.2f %10.1f %12s %12s %12s %8d %s\n", mark, s.Load, r.RequestThroughput, r.OutputThroughput,
			ms(r.MedianTTFT), ms(r.P99TTFT), ms(r.MedianTPOT), r.Failed, slo)
		thr = append(thr, r.OutputThroughput)
		ttft = append(ttft, r.MedianTTFT.Or(0))
	}
	if sw.Knee >= 0 {
		fmt.Fprintf(&b, "knee (*): %g %s — %s\n", sw.Steps[sw.Knee].Load, unit, sw.KneeRule)
	} else {
		b.WriteString("knee: " + sw.KneeRule + "\n")
	}
	fmt.Fprintf(&b, "stopped: %s\n", sw.Stopped)
	if len(thr) >= 2 {
		loads := make([]string, len(sw.Steps))
		for i, s := range sw.Steps {
			loads[i] = fmt.Sprintf("%g", s.Load)
		}
		x := "x: " + unit + " " + strings.Join(loads, ", ")
		b.WriteString("\n" + asciigraph.Plot(thr, asciigraph.Height(8), asciigraph.Width(min(60, 8*len(thr))),
			asciigraph.LowerBound(0), asciigraph.Precision(0), asciigraph.Caption("output tok/s — "+x)) + "\n\n")
		b.WriteString(asciigraph.Plot(ttft, asciigraph.Height(8), asciigraph.Width(min(60, 8*len(ttft))),
			asciigraph.LowerBound(0), asciigraph.Precision(1), asciigraph.Caption("TTFT p50 ms — "+x)) + "\n")
	}
	return b.String()
}

func ms(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprintf("%.2f", o.V)
}

func center(s string, c byte) string {
	const w = 50
	if len(s) >= w {
		return s
	}
	left := (w - len(s)) / 2
	return strings.Repeat(string(c), left) + s + strings.Repeat(string(c), w-len(s)-left)
}
