package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterOverlay(OverlaySpec{ID: "runs", Key: DefaultKeyMap().Runs, New: func() Overlay { return &runsOverlay{sel: -1} }})
}

// runsOverlay is the run ledger of the selected endpoint: one row per
// engine run (start, how it ended, what it did under load), and the
// selected run compared with the one before it: the configuration diff,
// each metric's change, and a one-line verdict.
type runsOverlay struct {
	sel int // index of the selected run; -1 follows the newest
	top int
}

func (*runsOverlay) Title() string { return "Runs" }
func (*runsOverlay) Keys() []key.Binding {
	k := DefaultKeyMap()
	return []key.Binding{relabel(k.Down, "next run"), relabel(k.Up, "previous run")}
}

func (o *runsOverlay) HandleKey(msg tea.KeyPressMsg, d *Data) (bool, tea.Cmd) {
	n := len(o.runs(d))
	if o.sel < 0 {
		o.sel = n - 1
	}
	switch {
	case key.Matches(msg, d.Keys.Down):
		o.sel = min(n-1, o.sel+1)
	case key.Matches(msg, d.Keys.Up):
		o.sel = max(0, o.sel-1)
	default:
		return false, nil
	}
	return true, nil
}

func (o *runsOverlay) runs(d *Data) []model.Run {
	if e := d.Endpoint(); e != nil {
		return e.Runs
	}
	return nil
}

func (o *runsOverlay) View(d *Data, w, h int) string {
	s := d.Styles
	e := d.Endpoint()
	runs := o.runs(d)
	if e == nil || len(runs) == 0 {
		return lines([]string{s.Faint.Render("no run seen yet: a run starts when the engine is first seen, restarts (counters reset, a new start banner in its log, a new version or model)")}, h)
	}
	sel := o.sel
	if sel < 0 || sel >= len(runs) {
		sel = len(runs) - 1
	}
	out := []string{s.Faint.Render(clip(fmt.Sprintf("%s · %d %s · now %s · %s/%s pick a run to compare with the one before", e.URL, len(runs), map[bool]string{true: "run", false: "runs"}[len(runs) == 1], lifeWord(e.Life), d.Keys.Down.Keys()[0], d.Keys.Up.Keys()[0]), w))}
	// Narrow screens keep the latency and load columns; the peaks go.
	wide := w >= 112
	hdr := fmt.Sprintf("%-3s %-8s %-7s %-8s %7s %9s %9s %9s %8s", "run", "started", "lasted", "ended", "req/s", "TTFT p99", "TPOT p99", "ITL p99", "tok/s")
	if wide {
		hdr += fmt.Sprintf(" %6s %7s %7s", "KV pk", "preempt", "wait pk")
	}
	out = append(out, s.Title.Render(clip("  "+hdr, w)))
	// On a short screen the table shows the runs around the selected one,
	// so that its comparison (below) stays on screen.
	from, to := 0, len(runs)
	if rows := max(3, h/4); len(runs) > rows {
		from = min(max(0, sel-rows/2), len(runs)-rows)
		to = from + rows
		out = append(out, s.Faint.Render(clip(fmt.Sprintf("  runs %d–%d of %d", runs[from].N, runs[to-1].N, len(runs)), w)))
	}
	for i, r := range runs[from:to] {
		i += from
		sm := r.Summary
		row := fmt.Sprintf("%-3d %-8s %-7s %-8s %7s %9s %9s %9s %8s", r.N, r.Started.Local().Format("15:04:05"),
			fmtDur(r.Elapsed(d.Clock())), string(r.End), fmtNum(sm.RequestsPS), msOpt(sm.TTFTp99ms), msOpt(sm.TPOTp99ms), msOpt(sm.ITLp99ms),
			fmtNum(sm.GenTPS))
		if wide {
			row += fmt.Sprintf(" %6s %7s %7s", fmtPct(sm.KVPeak), fmtNum(sm.Preemptions), fmtNum(sm.WaitingPeak))
		}
		row = clip(row, w-2)
		switch {
		case i == sel:
			row = s.Highlight.Render("▸ " + row)
		case r.End == model.RunCrash:
			row = "  " + s.Level(LevelCrit).Render(row)
		default:
			row = "  " + row
		}
		out = append(out, row)
	}
	r := runs[sel]
	if sel > 0 {
		prev := runs[sel-1]
		out = append(out, "", s.Title.Render(fmt.Sprintf("Run %d → run %d", prev.N, r.N)))
		ended := fmt.Sprintf("run %d ended %s", prev.N, prev.End)
		if prev.EndReason != "" {
			ended += " (" + prev.EndReason + ")"
		}
		out = append(out, s.Faint.Render(clip(ended, w)))
		out = append(out, compareLines(d, diagnosis.CompareRuns(runs[sel-1], r, d.Core.Config()), w)...)
	}
	out = append(out, "", s.Title.Render(fmt.Sprintf("Run %d", r.N)))
	detail := []string{"started " + r.Started.Local().Format("15:04:05") + " (" + nonEmptyStr(r.StartedBy, "seen") + ")"}
	if r.Applied != "" {
		detail = append(detail, s.Highlight.Render(r.Applied))
	}
	if r.Ended != nil {
		end := "ended " + r.Ended.Local().Format("15:04:05") + ": " + string(r.End)
		if r.EndReason != "" {
			end += " (" + r.EndReason + ")"
		}
		detail = append(detail, end)
		if r.EndLine != "" {
			detail = append(detail, "  "+r.EndLine)
		}
	}
	if r.Version != "" || len(r.Models) > 0 {
		detail = append(detail, strings.TrimSpace(string(r.Engine)+" "+r.Version+" · "+strings.Join(r.Models, ", ")))
	}
	if len(r.Benches) > 0 {
		for _, b := range r.Benches {
			load := ""
			if b.Load != nil {
				load = " at " + b.Load.String()
			}
			detail = append(detail, wrapIndent("", "  ", fmt.Sprintf("benchmark %s%s: %d completed, %d failed, TTFT p99 %s, TPOT p99 %s, output %s tok/s",
				b.Time.Local().Format("15:04:05"), load, b.Completed, b.Failed, msOpt(b.TTFTp99ms), msOpt(b.TPOTp99ms), fmtNum(b.OutputTPS)), w)...)
		}
	}
	if sm := r.Summary; sm.WindowS > 0 {
		// wrapped, not cut: what the numbers above mean is the whole line
		for _, l := range wrapIndent("", "", fmt.Sprintf("latencies: percentiles over the run's last %s (bucket estimates where the engine gives buckets); rates averaged over it", fmtDur(time.Duration(sm.WindowS*float64(time.Second)))), w) {
			detail = append(detail, s.Faint.Render(l))
		}
	}
	for _, l := range detail {
		out = append(out, clip(l, w))
	}
	o.top = min(o.top, max(0, len(out)-h))
	return lines(out[o.top:], h)
}

// compareLines draws a run comparison: the verdict, the configuration
// diff, then each metric before → after with its change.
func compareLines(d *Data, c diagnosis.RunComparison, w int) []string {
	s := d.Styles
	out := []string{s.Level(LevelOK).Render(clip(c.Verdict, w))}
	if len(c.Config) == 0 {
		out = append(out, s.Faint.Render("configuration: no change seen (version, model, args, engine config)"))
	}
	for _, x := range c.Config {
		out = append(out, clip("  changed: "+x, w))
	}
	for _, x := range c.Deltas {
		change := missing
		lvl := LevelNone
		if x.Change.OK {
			change = fmt.Sprintf("%+.0f %%", x.Change.V*100)
			better := x.Change.V < 0 == x.LowerIsBetter
			switch {
			case x.Change.V == 0:
			case better:
				lvl = LevelOK
			default:
				lvl = LevelWarn
			}
		}
		before, after := fmtNum(x.Before), fmtNum(x.After)
		if x.LowerIsBetter {
			before, after = msOpt(x.Before), msOpt(x.After)
		}
		line := fmt.Sprintf("  %-12s %10s → %-10s ", x.Name, before, after)
		out = append(out, clip(line+s.Level(lvl).Render(change), w))
	}
	switch {
	case c.SameLoad != nil:
		out = append(out, s.Faint.Render(clip("the two runs' benchmarks at the same offered load ("+c.SameLoad.String()+"), as the client measured them", w)))
	case c.NotComparable != "":
		out = append(out, s.Faint.Render(clip("not comparable: "+c.NotComparable, w)))
	case !c.Similar:
		out = append(out, s.Faint.Render(clip("load differs between the runs (or is unknown): the changes above are not at comparable load", w)))
	}
	return out
}

// msOpt writes a latency in milliseconds the way the panes write seconds.
func msOpt(o model.Opt) string {
	if !o.OK {
		return missing
	}
	return fmtSec(model.Some(o.V / 1000))
}

func lifeWord(l model.Lifecycle) string {
	if l == "" {
		return string(model.LifeUnknown)
	}
	return string(l)
}
