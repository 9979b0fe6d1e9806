package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "latency", Slot: 1, New: func() Pane { return &latencyPane{} }})
}

// latencyPane: TTFT and TPOT/ITL (and E2E) with windowed percentiles, their
// per-refresh means as sparklines, and where TTFT and E2E time goes.
type latencyPane struct{}

func (latencyPane) Title() string       { return "Latency" }
func (latencyPane) Keys() []key.Binding { return noKeys() }
func (p latencyPane) Height(d *Data, w int) int {
	return len(p.rows(d)) + 3 + freshExtra(d)
}

// latRow is one latency line.
type latRow struct {
	label string
	l     model.Latency
	m     Metric
}

func (latencyPane) rows(d *Data) []latRow {
	st := d.State()
	rows := []latRow{{"TTFT", model.TTFT, MTTFT}}
	if st.Latency[model.TPOT].Exposed || !st.Latency[model.ITL].Exposed {
		rows = append(rows, latRow{"TPOT", model.TPOT, MITL})
	}
	if st.Latency[model.ITL].Exposed {
		rows = append(rows, latRow{"ITL", model.ITL, MITL})
	}
	return append(rows, latRow{"E2E", model.E2E, -1})
}

func (p latencyPane) View(d *Data, w, h int) string {
	if v, absent := absentView(d, w); absent {
		return v
	}
	s, st := d.Styles, d.State()
	// unread: the latencies are missing because /metrics is not read, not
	// because the engine lacks them.
	unread := ""
	if f := d.Fresh(); f.FromLog || f.Stale {
		unread = f.Why
	}
	var out []string
	var window model.Dist
	for _, r := range p.rows(d) {
		dist := st.Latency[r.l]
		if dist.Exposed && (!window.Exposed || dist.Window > window.Window) {
			window = dist
		}
		var val string
		switch {
		case !dist.Exposed && unread != "":
			val = s.Faint.Render(missing + " " + unread)
		case !dist.Exposed:
			val = s.Faint.Render(missing + " not exposed by " + engineName(d))
		case dist.Count == 0 && st.SinceStart[r.l].Count > 0:
			// Idle window: the engine's totals since it started, labelled
			// and unjudged (issue 14 item 5).
			since := st.SinceStart[r.l]
			val = s.Faint.Render("since start: " + distText(s, d.Thresholds, since, -1))
			val += logLabel(s, since, w-5-ansi.StringWidth(val))
		case dist.Count == 0:
			val = s.Faint.Render(missing + " no requests finished in the window")
		default:
			val = distText(s, d.Thresholds, dist, r.m)
			val += logLabel(s, dist, w-5-ansi.StringWidth(val))
		}
		out = append(out, metricRow(r.label, 4, d.Series(string(r.l)+model.SeriesLatencyMean), 0, val, w))
	}
	if !window.Exposed {
		if unread != "" {
			out = append(out, s.Faint.Render("no latency histograms: "+unread))
		} else {
			out = append(out, s.Faint.Render("no latency histograms from "+engineName(d)))
		}
		return lines(freshLines(d, out), h)
	}
	if note := windowNote(window, d); ansi.StringWidth(note) > w && h-len(out) >= 5 {
		// Room to spare: the whole note, wrapped ("means over 3s · approx:
		// aggregate: generation seconds ÷…" lost what the mean is).
		for _, l := range strings.Split(ansi.Wrap(note, w, " "), "\n") {
			out = append(out, s.Faint.Render(l))
		}
	} else {
		out = append(out, s.Faint.Render(windowNoteFit(window, d, w)))
	}
	out = append(out, splitLines(s, st, w)...)
	// A TTFT put together from the log's means (llama-server: Little's
	// law queue + prefill) has no per-refresh series: its chart read "no
	// data in the window yet" under a TTFT shown, and never filled.
	ttftSeries := d.Series(string(model.TTFT) + model.SeriesLatencyMean)
	if t := st.Latency[model.TTFT]; t.Source == model.FromLog && t.Approx != "" && len(ttftSeries) == 0 {
		return lines(freshLines(d, out), h)
	}
	if extra := h - len(out) - 1; extra >= 4 && st.Latency[model.TTFT].Exposed {
		out = append(out, s.Faint.Render("TTFT mean per refresh"))
		out = append(out, chart(d, "latency.ttft", ttftSeries, w, min(extra, 16),
			func(v float64) string { return fmtSec(model.Some(v)) })...)
	}
	return lines(freshLines(d, out), h)
}

// distText is "p50≈45ms p90≈120ms p99≈190ms mean 60ms"; ≈ marks bucket
// estimates, the p99 (or the mean when there are no quantiles) is judged.
func distText(s *Styles, t Thresholds, dist model.Dist, m Metric) string {
	approx := " " // exact (the engine's log): "p50 4.6ms"
	if dist.Estimate {
		approx = "≈"
	}
	judge := func(v model.Opt, txt string) string {
		if m < 0 {
			return txt
		}
		return s.Judged(t, m, v).Render(txt)
	}
	if dist.AllBelow.OK {
		// Every observation sits in the lowest bucket: interpolated
		// quantiles there are artefacts (p50≈150ms for a 7 ms queue).
		txt := fmt.Sprintf("all <%s (lowest bucket) mean %s", fmtSec(dist.AllBelow), fmtSec(dist.Mean))
		if m >= 0 && judgeLevel(t, m, dist.AllBelow) == LevelOK {
			return s.OK.Render(txt)
		}
		return txt
	}
	if !dist.P50.OK && !dist.P99.OK {
		txt := "mean " + fmtSec(dist.Mean)
		if dist.Approx != "" {
			txt += " (approx.)"
		}
		return judge(dist.Mean, txt)
	}
	q := func(name string, q float64, v model.Opt) string {
		if dist.Past(q) {
			// past the highest finite bucket: only a floor is known
			return name + ">" + pad6(fmtSec(dist.Above))
		}
		return name + approx + pad6(fmtSec(v))
	}
	p99 := q("p99", 0.99, dist.P99)
	if dist.Past(0.99) && m >= 0 && judgeLevel(t, m, dist.Above) == LevelOK {
		p99 = s.Faint.Render(p99) // over a bound under the target: no verdict
	} else {
		p99 = judge(dist.P99, p99)
	}
	return fmt.Sprintf("%s %s %s mean %s", q("p50", 0.5, dist.P50), q("p90", 0.9, dist.P90), p99, pad6(fmtSec(dist.Mean)))
}

// pad6 pads a value to 6 cells: fmt's %-6s counts bytes, and "751µs" is
// 6 bytes in 5 cells (it printed "p50751µs").
func pad6(v string) string {
	if n := utf8.RuneCountInString(v); n < 6 {
		return v + strings.Repeat(" ", 6-n)
	}
	return v
}

// logLabel marks numbers taken from the engine's per-request log lines
// ("log n=92"), and a disagreement with its metrics, in room cells: "·log"
// where the count does not fit (the window note under the rows says how
// many). "from log · n=92" was cut to "from lo…" in the 58 cells the pane
// has at 120 columns.
func logLabel(s *Styles, dist model.Dist, room int) string {
	if dist.Source != model.FromLog && dist.LogCheck == "" {
		return ""
	}
	for _, short := range []bool{false, true} {
		out := ""
		if dist.Source == model.FromLog {
			if short {
				out = " ·log"
			} else {
				out = " log n=" + fmtNum(model.Some(dist.Count))
			}
		}
		if dist.LogCheck != "" {
			if short {
				out += " ≠log"
			} else {
				out += " (log disagrees)"
			}
		}
		if ansi.StringWidth(out) <= room || short {
			return s.Faint.Render(out)
		}
	}
	return ""
}

// windowNoteFit is windowNote in w cells: the request count goes first
// when it does not fit ("· 613 r…" at 120 columns after a restart), then
// the rest is cut after a word.
func windowNoteFit(dist model.Dist, d *Data, w int) string {
	n := windowNote(dist, d)
	if ansi.StringWidth(n) > w {
		n = strings.Replace(n, " · "+requestsWord(dist.Count), "", 1)
	}
	return clipWords(n, w)
}

// windowNote says what the percentiles cover.
func windowNote(dist model.Dist, d *Data) string {
	if dist.Source == model.FromLog && dist.Count > 0 {
		// percentiles there are exact; a mean marked (approx.) is an
		// estimate. One request spans no time: Ollama's first read "no
		// requests finished" under its E2E of n=1.
		over := ""
		if dist.Window > 0 {
			over = " over " + fmtDur(dist.Window) + windowEnd(d)
		}
		return fmt.Sprintf("from the engine's log%s · %s", over, requestsWord(dist.Count))
	}
	if dist.Window <= 0 {
		if !dist.Estimate {
			return fmt.Sprintf("no requests finished in the %s window yet", fmtDur(d.Window))
		}
		return fmt.Sprintf("≈ estimates from histogram buckets; no requests finished in the %s window yet", fmtDur(d.Window))
	}
	if !dist.Estimate {
		// No buckets: a mean over the window, and its count may not be
		// requests (llama.cpp's TPOT counts generated tokens).
		s := fmt.Sprintf("means over %s%s", fmtDur(dist.Window), windowEnd(d))
		if dist.Approx != "" {
			s += " · approx: " + dist.Approx
		}
		return s
	}
	s := fmt.Sprintf("≈ bucket estimates over %s%s · %s", fmtDur(dist.Window), windowEnd(d), requestsWord(dist.Count))
	if dist.Approx != "" {
		s += " · approx: " + dist.Approx
	}
	return s
}

// requestsWord is "1 request", "92 requests".
func requestsWord(n float64) string {
	if n == 1 {
		return "1 request"
	}
	return requestCount(n) + " requests"
}

// requestCount is a window's count of requests: whole, or "≈85" where it
// is an estimate (Prometheus' increase() extrapolates to the window's edges
// and read 84.8 requests).
func requestCount(n float64) string {
	if n == math.Trunc(n) {
		return fmtNum(model.Some(n))
	}
	return "≈" + fmtNum(model.Some(math.Round(n)))
}

// splitLines shows where TTFT (queue vs prefill) and E2E (+ decode) time
// goes, from the phase means, when the engine exposes the phases.
func splitLines(s *Styles, st model.State, w int) []string {
	q, pf, dc := st.Latency[model.Queue].Mean, st.Latency[model.Prefill].Mean, st.Latency[model.Decode].Mean
	var out []string
	if q.OK && pf.OK && q.V+pf.V > 0 {
		share := q.V / (q.V + pf.V)
		note := ""
		if st.Latency[model.Queue].Approx == model.LittleApprox {
			// the engine logs no queue time: the queue is estimated
			// from its gauges (explain: e), the prefill is the log's
			note = " (queue est.)"
		}
		bw := max(4, min(30, w-40-len(note)))
		qs, ps := splitShares(share)
		out = append(out, fmt.Sprintf("TTFT queue %s %s prefill %s", qs, splitBar(bw, share), ps)+s.Faint.Render(note))
	} else if pd := st.Latency[model.Prefill]; !st.Latency[model.Queue].Exposed && pd.Source == model.FromLog && pf.OK {
		// the log times prefill; the queue is estimated only from a
		// window in which requests ran (Little's law needs a rate)
		out = append(out, s.Faint.Render(fmt.Sprintf("TTFT split: prefill mean %s (log) · queue %s (estimated while requests run)", fmtSec(pf), missing)))
	} else if !st.Latency[model.Queue].Exposed {
		out = append(out, s.Faint.Render("TTFT split: queue/prefill "+missing+" (phases not exposed)"))
	}
	if q.OK && pf.OK && dc.OK {
		tot := q.V + pf.V + dc.V
		if tot > 0 {
			text := fmt.Sprintf("E2E  queue %s prefill %s decode %s", fmtSec(q), fmtSec(pf), fmtSec(dc))
			// With the bar, each phase is led by its shade, the bar's
			// legend (three shades read as nothing without one). The bar
			// takes what the words leave (it was clipped to "…" at 120
			// columns); under 4 cells it says nothing and is left out.
			keyed := fmt.Sprintf("E2E  ▓queue %s ▒prefill %s ░decode %s", fmtSec(q), fmtSec(pf), fmtSec(dc))
			if bw := min(30, w-len([]rune(keyed))-1); bw >= 4 {
				nq, np := int(q.V/tot*float64(bw)+0.5), int(pf.V/tot*float64(bw)+0.5)
				nq, np = min(nq, bw), min(np, bw-min(nq, bw))
				text = keyed + " " + strings.Repeat("▓", nq) + strings.Repeat("▒", np) + strings.Repeat("░", bw-nq-np)
			}
			out = append(out, text)
		}
	}
	return out
}

// splitShares writes a share and its complement so that they add up to
// 100 % as written (12.5 % and 87.5 % read "13%" and "88%"): the smaller
// is rounded as fmtPct would (one decimal under 10 %), the larger is what
// is left, written with the same precision.
func splitShares(share float64) (a, b string) {
	small := math.Min(share, 1-share) * 100
	digits := 0
	if small > 0 && small < 10 {
		digits = 1
	}
	scale := math.Pow(10, float64(digits))
	s := math.Round(small*scale) / scale
	ss, ls := trimZero(strconv.FormatFloat(s, 'f', digits, 64))+"%", trimZero(strconv.FormatFloat(100-s, 'f', digits, 64))+"%"
	if share <= 0.5 {
		return ss, ls
	}
	return ls, ss
}

func splitBar(w int, share float64) string {
	n := int(share*float64(w) + 0.5)
	n = max(0, min(w, n))
	return strings.Repeat("▓", n) + strings.Repeat("░", w-n)
}

// DrawKey: drawn from the store only (see Keyed).
func (latencyPane) DrawKey(d *Data) uint64 { return d.StoreVersion }
