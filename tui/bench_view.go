package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/bench/report"
)

// benchRun is one line of the session's history.
type benchRun struct {
	at                  time.Time
	label               string
	target              string // the base URL the load went to, redacted; "" when unknown
	completed, failed   int
	outTPS              float64
	ttftP50, ttftP99    model.Opt
	tpotP50             model.Opt
	saved, err, stopped string
}

func historyOf(o BenchOutcome) benchRun {
	h := benchRun{at: time.Now(), label: o.Spec.Preset}
	if start, _ := o.window(); !start.IsZero() {
		h.at = start
	}
	if h.label == "" {
		h.label = "saved"
	}
	if o.Err != nil {
		h.err = o.Err.Error()
	}
	h.target = model.RedactURL(o.Spec.URL)
	if o.Result != nil && o.Result.BaseURL != "" {
		h.target = o.Result.BaseURL // redacted where the load generator made it
	} else if o.Sweep != nil && len(o.Sweep.Steps) > 0 && o.Sweep.Steps[0].Result.BaseURL != "" {
		h.target = o.Sweep.Steps[0].Result.BaseURL
	}
	r := o.Result
	if o.Sweep != nil {
		h.stopped = o.Sweep.Stopped
		if o.Sweep.Knee >= 0 {
			r = &o.Sweep.Steps[o.Sweep.Knee].Result
			h.label = fmt.Sprintf("sweep knee %g", o.Sweep.Steps[o.Sweep.Knee].Load)
		}
	}
	if r != nil {
		if o.Sweep == nil {
			h.label = fmt.Sprintf("%s %d×%s", h.label, r.MaxConcurrency, fmtDur(time.Duration(r.Duration*float64(time.Second))))
		}
		h.completed, h.failed, h.outTPS = r.Completed, r.Failed, r.OutputThroughput
		h.ttftP50, h.ttftP99, h.tpotP50 = r.MedianTTFT, r.P99TTFT, r.MedianTPOT
	}
	return h
}

func (o *benchOverlay) View(d *Data, w, h int) string {
	s := d.Styles
	target := o.url
	if target == "" {
		target = missing + " (no endpoint)"
	}
	out := []string{s.Faint.Render("Target: ") + target}
	switch o.stage {
	case benchForm:
		out = append(out, o.formView(d, w)...)
	case benchConfirm:
		out = append(out, "",
			s.Warn.Render("This sends real load to "+o.url+", which is not this machine."),
			"Other users of that server will feel it. Press y to start, n to go back.")
	case benchRunning:
		out = append(out, o.progressView(d, w)...)
	case benchDone:
		body := o.resultView(d, w)
		o.top = min(o.top, max(0, len(body)-(h-1)))
		out = append(out, body[o.top:]...)
	}
	for i := range out {
		out[i] = clipStyled(out[i], w)
	}
	return lines(out, h)
}

func (o *benchOverlay) formView(d *Data, w int) []string {
	s := d.Styles
	row := func(i int, label, value, about string) string {
		cur := "  "
		if i == o.field {
			cur = s.Accent.Render("> ")
		}
		return fmt.Sprintf("%s%-14s ‹ %s ›  %s", cur, label, value, s.Faint.Render(about))
	}
	p := benchPresets[o.preset]
	out := []string{"", row(0, "preset", p.name, p.about)}
	if p.name == "custom" {
		for f, name := range benchFieldNames {
			out = append(out, row(f+1, name, fmt.Sprint(benchChoices[f][o.choice[f]]), ""))
		}
	}
	out = append(out, "")
	for _, l := range append(wordWrap("Prompts are random words (fixed seed); token counts come from the server's usage.", w),
		wordWrap("TPOT excludes the first token. Results are saved as JSON (vllm bench serve's names).", w)...) {
		out = append(out, s.Faint.Render(l))
	}
	if o.url != "" && !model.IsLoopback(o.url) {
		out = append(out, s.Warn.Render("Not this machine: you will be asked to confirm."))
	}
	if len(o.history) > 0 {
		out = append(out, "")
		out = append(out, o.historyView(d, w)...)
	}
	return out
}

func (o *benchOverlay) progressView(d *Data, w int) []string {
	s := d.Styles
	p := o.progress
	head := benchPresets[o.preset].name
	if p.Step != "" {
		head += " · step " + p.Step
	}
	if p.Warmup {
		return []string{"", head + ": warming up…", fmt.Sprintf("sent %d", p.Sent), "", s.Faint.Render(d.Keys.Bench.Help().Key + "/" + d.Keys.Back.Help().Key + " cancels")}
	}
	bw := max(10, min(50, w-20))
	ms := func(v model.Opt) string { return fmtSec(v.Scale(0.001)) }
	return []string{"",
		head,
		fmt.Sprintf("%s %3.0f%%  %s", bar(p.Fraction, bw), p.Fraction*100, fmtDur(p.Elapsed)),
		fmt.Sprintf("done %d   failed %d   in flight %d   sent %d", p.Completed, p.Failed, p.InFlight, p.Sent),
		fmt.Sprintf("TTFT p50 %s  p99 %s     TPOT p50 %s  p99 %s", ms(p.MedianTTFT), ms(p.P99TTFT), ms(p.MedianTPOT), ms(p.P99TPOT)),
		"", s.Faint.Render(d.Keys.Bench.Help().Key + "/" + d.Keys.Back.Help().Key + " cancels: requests in flight are aborted, what finished is kept"),
	}
}

func (o *benchOverlay) resultView(d *Data, w int) []string {
	s := d.Styles
	oc := o.outcome
	var out []string
	if oc.Err != nil {
		out = append(out, "", s.Crit.Render("The benchmark could not run: "+oc.Err.Error()))
	}
	if oc.Sweep != nil {
		out = append(out, "")
		out = append(out, strings.Split(strings.TrimRight(report.SweepText(*oc.Sweep), "\n"), "\n")...)
	}
	if r := oc.Result; r != nil {
		out = append(out, "", fmt.Sprintf("%s · %d streams · %.1fs · model %s", oc.Spec.Preset, r.MaxConcurrency, r.Duration, r.ModelID),
			fmt.Sprintf("completed %d   failed %d   cancelled %d   %.2f req/s   %.0f output tok/s   %.0f total tok/s",
				r.Completed, r.Failed, r.Cancelled, r.RequestThroughput, r.OutputThroughput, r.TotalTokenThroughput), "")
		out = append(out, sideBySide(d, r, o.server)...)
		if f := finishLine(r.FinishReasons, r.Completed); f != "" {
			out = append(out, f)
		}
		out = append(out, errorLines(r)...)
		for _, n := range r.Notes {
			out = append(out, s.Faint.Render("note: "+n))
		}
	}
	if o.saved != "" {
		out = append(out, "", s.Faint.Render("saved: "+o.saved))
	}
	out = append(out, "")
	out = append(out, o.historyView(d, w)...)
	return out
}

// finishLine is the answers' finish reasons as shares of the completed
// requests ("finish length 100%": every answer ran to max_tokens), empty
// when the server gave none.
func finishLine(reasons map[string]int, completed int) string {
	if len(reasons) == 0 || completed == 0 {
		return ""
	}
	keys := report.ReasonsByCount(reasons)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0f%%", k, 100*float64(reasons[k])/float64(completed))
	}
	return "finish " + strings.Join(parts, " · ")
}

// sideBySide puts the client's latencies next to the server's own view of
// the same window.
func sideBySide(d *Data, r *report.Result, srv *model.MetricsJSON) []string {
	s := d.Styles
	ms := func(v model.Opt) string { return fmtSec(v.Scale(0.001)) }
	est := func(j model.DistJSON) string {
		if j.Estimate {
			return "≈"
		}
		return ""
	}
	header := fmt.Sprintf("%-6s %10s %10s %10s │ %10s %10s  %s", "", "mean", "p50", "p99", "server p50", "server p99", "from")
	out := []string{s.Title.Render(header)}
	row := func(name string, mean, p50, p99 model.Opt, j *model.DistJSON) string {
		sp50, sp99, from := missing, missing, ""
		if j != nil {
			q := func(p model.Opt) string {
				// a bound where the buckets give only one: "<10ms", ">30s"
				if mark, v := j.Shown(p); mark != "" {
					return mark + ms(v)
				}
				return est(*j) + ms(p)
			}
			sp50, sp99 = q(j.P50), q(j.P99)
			if sp50 != missing || sp99 != missing {
				from = distFrom(srv, *j)
			}
		}
		return strings.TrimRight(fmt.Sprintf("%-6s %10s %10s %10s │ %10s %10s  %s", name, ms(mean), ms(p50), ms(p99), sp50, sp99, from), " ")
	}
	var ttft, tpot, itl, e2e, queue *model.DistJSON
	if srv != nil {
		ttft, tpot, itl, e2e, queue = &srv.TTFTms, &srv.TPOTms, &srv.ITLms, &srv.E2Ems, &srv.Queuems
	}
	out = append(out,
		row("TTFT", r.MeanTTFT, r.MedianTTFT, r.P99TTFT, ttft),
		row("TPOT", r.MeanTPOT, r.MedianTPOT, r.P99TPOT, tpot),
		row("ITL", r.MeanITL, r.MedianITL, r.P99ITL, itl),
		row("E2EL", r.MeanE2EL, r.MedianE2EL, r.P99E2EL, e2e),
		row("queue", model.None, model.None, model.None, queue))
	if srv == nil {
		out = append(out, s.Faint.Render("server: "+missing+" (the monitor has no metrics of this endpoint for the run's window)"))
	} else {
		// a bare "--" in a server column says why, rows with the same
		// reason on one line
		var whys []string
		rows := map[string][]string{}
		for _, n := range []struct {
			name string
			j    *model.DistJSON
		}{{"TTFT", ttft}, {"TPOT", tpot}, {"ITL", itl}, {"E2EL", e2e}, {"queue", queue}} {
			if why := report.ServerWhy(*n.j, r.ServerEngine, ms); why != "" {
				if rows[why] == nil {
					whys = append(whys, why)
				}
				rows[why] = append(rows[why], n.name)
			}
		}
		for _, why := range whys {
			out = append(out, s.Faint.Render("server "+strings.Join(rows[why], ", ")+": "+why))
		}
		out = append(out, s.Faint.Render(fmt.Sprintf("server: %s (%s, all its traffic): running %s  waiting %s  gen %s tok/s",
			serverSpan(srv, r.Duration), fmtDur(time.Duration(srv.WindowS*float64(time.Second)))+" window", fmtNum(srv.Running), fmtNum(srv.Waiting), fmtNum(srv.GenerationTokensPerS))))
	}
	return out
}

// distFrom is where one server latency's numbers come from: the engine's
// per-request log lines where the log gave them (llama.cpp's TPOT
// percentiles beside its /metrics' gauges), else the server's picture's
// source.
func distFrom(srv *model.MetricsJSON, j model.DistJSON) string {
	if j.Source == model.FromLog || srv.Source == model.FromLog {
		return "log"
	}
	return "/metrics"
}

// serverSpan says where the server's gauges come from and what they span:
// Ollama's is its log, not a /metrics it does not have, and a counter
// that moved too seldom gives rates reaching back before the run (a
// 5m49s window beside a 33 s run).
func serverSpan(srv *model.MetricsJSON, runS float64) string {
	from := "its /metrics"
	if srv.Source == model.FromLog {
		from = "its log"
	}
	if runS > 0 && srv.WindowS > 1.5*runS+5 {
		return from + " from before the run: its counters moved too seldom to cover the run alone"
	}
	return from + " over the run"
}

func errorLines(r *report.Result) []string {
	if len(r.ErrorsByKind) == 0 {
		return nil
	}
	kinds := make([]string, 0, len(r.ErrorsByKind))
	for k := range r.ErrorsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, r.ErrorsByKind[k])
	}
	out := []string{"errors: " + strings.Join(parts, ", ")}
	for _, e := range r.ErrorSamples {
		out = append(out, "  "+e)
	}
	return out
}

// historyView lists the recent runs against this endpoint, newest first,
// then the runs against other targets (other endpoints, earlier sessions)
// with their URL, so no other server's numbers pass for this one's.
func (o *benchOverlay) historyView(d *Data, w int) []string {
	if len(o.history) == 0 {
		return nil
	}
	s := d.Styles
	var mine, other []string
	for i := len(o.history) - 1; i >= 0; i-- {
		h := o.history[i]
		if o.url != "" && sameBenchTarget(h.target, o.url) {
			mine = append(mine, historyLine(h, "", w)...)
			continue
		}
		target := h.target
		if target == "" {
			target = "(target unknown)"
		}
		other = append(other, historyLine(h, target, w)...)
	}
	if o.url == "" {
		return append([]string{s.Title.Render("Recent runs")}, other...)
	}
	out := []string{s.Title.Render("Recent runs on " + o.url)}
	if len(mine) == 0 {
		out = append(out, s.Faint.Render("none yet"))
	}
	out = append(out, mine...)
	if len(other) > 0 {
		out = append(out, s.Title.Render("Other targets"))
		out = append(out, other...)
	}
	return out
}

// historyLine is one run: when, where (target, unless ""), what, and its
// numbers (or its error), in lines of at most w cells: a group of numbers
// that does not fit goes on the next line whole (cut at the width, "p99
// 23…" lost the number).
func historyLine(h benchRun, target string, w int) []string {
	head := h.at.Local().Format("01-02 15:04") + "  "
	if target != "" {
		head += target + "  "
	}
	if h.err != "" {
		return wrapIndent(head, "             ", h.label+"  "+h.err, w)
	}
	// each group with the separator before it; a group that does not fit
	// starts the next line, under the label
	parts := [][2]string{{"", head + fmt.Sprintf("%-22s", h.label)},
		{" ", fmt.Sprintf("ok %-5d failed %-4d", h.completed, h.failed)},
		{" ", fmt.Sprintf("%7.0f tok/s", h.outTPS)},
		{"  ", fmt.Sprintf("TTFT p50 %s p99 %s", fmtSec(h.ttftP50.Scale(0.001)), fmtSec(h.ttftP99.Scale(0.001)))},
		{"  ", "TPOT p50 " + fmtSec(h.tpotP50.Scale(0.001))}}
	const indent = "             " // under the run's label, after its date
	out := []string{parts[0][1]}   // the label's padding aligns the columns
	for _, p := range parts[1:] {
		if last := &out[len(out)-1]; ansi.StringWidth(*last)+len(p[0])+ansi.StringWidth(p[1]) <= w {
			*last += p[0] + p[1]
		} else {
			out = append(out, indent+strings.TrimLeft(p[1], " "))
		}
	}
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	return out
}

// sameBenchTarget reports whether a run's base URL is the endpoint's: the
// load generator's base URL drops the query, a trailing slash and /v1.
func sameBenchTarget(a, b string) bool {
	key := func(u string) string {
		if i := strings.IndexAny(u, "?#"); i >= 0 {
			u = u[:i]
		}
		u = strings.TrimSuffix(strings.TrimRight(u, "/"), "/v1")
		return strings.TrimRight(u, "/")
	}
	return a != "" && key(a) == key(b)
}

// clipStyled cuts a line that carries no styling; styled lines are short
// by construction and left alone.
func clipStyled(l string, w int) string {
	if strings.Contains(l, "\x1b") {
		return l
	}
	return clip(l, w)
}
