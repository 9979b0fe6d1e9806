package tui

import (
	"fmt"
	"image/color"
	"math"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/progress"
	"charm.land/lipgloss/v2"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "scheduler", Slot: 3, New: func() Pane { return &schedulerPane{} }})
}

// schedulerPane: the running batch and the queue, preemptions, and the KV
// cache (gauge, prefix-cache hit rate, capacity). The KV gauge is a
// bubbles/progress bar drawn at the value (no animation: a monitor shows
// the number it read), coloured by the KV thresholds.
type schedulerPane struct {
	kv    progress.Model
	kvSet bool
	bar   kvBar
}

// kvBar is the gauge's bar as last drawn and what it was drawn from: a
// solid bar is the same while its filled cells, its width and its colours
// (the styles and the level) are, so a KV usage that moves within a cell
// (2.8 % then 2.81 %) is not drawn again (bubbles' bar renders two styles
// every frame: 2.5 % of a steady second's draw).
type kvBar struct {
	styles    *Styles
	lvl       Level
	w, filled int
	bar       string
}

// dropCaches forgets the bar (Model.dropCaches: a frame from scratch).
func (p *schedulerPane) dropCaches() { p.bar = kvBar{} }

func (*schedulerPane) Title() string       { return "Scheduler" }
func (*schedulerPane) Keys() []key.Binding { return noKeys() }
func (*schedulerPane) Height(d *Data, w int) int {
	if len(d.State().Engines) > 1 {
		return 7 + freshExtra(d)
	}
	return 6 + freshExtra(d)
}

func (p *schedulerPane) View(d *Data, w, h int) string {
	if v, absent := absentView(d, w); absent {
		return v
	}
	s, st, t := d.Styles, d.State(), d.Thresholds
	running := fmt.Sprintf("%5s", fmtNum(st.Running))
	if st.MaxRunning.OK {
		running += " / max " + fmtNum(st.MaxRunning)
	}
	waiting := s.Judged(t, MWaiting, st.Waiting).Render(fmt.Sprintf("%5s", fmtNum(st.Waiting)))
	if st.Deferred.OK && st.Deferred.V > 0 {
		waiting += s.Faint.Render(" (" + fmtNum(st.Deferred) + " deferred)")
	}
	out := []string{
		metricRow("running", 7, d.Series(string(model.Running)), 0, running, w),
		metricRow("waiting", 7, d.Series(string(model.Waiting)), 1, waiting, w),
	}
	pre := "preempt " + s.Judged(t, MPreempt, st.PreemptionsPS).Render(fmtNum(st.PreemptionsPS)+"/s")
	if st.Preemptions.OK {
		pre += s.Faint.Render(fmt.Sprintf(" (%s in %s%s)", fmtNum(st.Preemptions), fmtDur(st.RateWindow), windowEnd(d)))
	}
	out = append(out, pre)
	out = append(out, p.kvLine(d, st, w))
	if len(st.Engines) > 1 {
		// KV above is the fullest engine's; each engine's own, so one
		// preempting engine is not hidden by an idle one.
		line := "engines"
		for _, e := range st.Engines {
			line += fmt.Sprintf(" · %s: KV %s run %s wait %s", e.ID, fmtPct(e.KVUsage), fmtNum(e.Running), fmtNum(e.Waiting))
		}
		out = append(out, s.Faint.Render(clip(line, w)))
	}
	cap := ""
	if st.KVCapacityTokens.OK {
		cap = " · KV capacity " + fmtTokens(st.KVCapacityTokens) + " tok"
	}
	out = append(out, "prefix-cache hit "+fmtPct(st.PrefixHit)+cap)
	if extra := h - len(out) - 1; extra >= 4 && st.Waiting.OK {
		out = append(out, s.Faint.Render("waiting (queue depth)"))
		out = append(out, countChart(d, "scheduler.waiting", d.Series(string(model.Waiting)), w, min(extra, 16))...)
	}
	return lines(freshLines(d, out), h)
}

// kvLine is the KV gauge, coloured by the KV thresholds.
func (p *schedulerPane) kvLine(d *Data, st model.State, w int) string {
	s := d.Styles
	label := "KV "
	val := fmt.Sprintf(" %5s", fmtPct(st.KVUsage))
	if st.KVUsageMax.OK {
		// Only a floor is known (llama.cpp, KV layout unknown): the range, coloured by its top.
		val = " " + fmtPct(st.KVUsage) + "–" + fmtPct(st.KVUsageMax) + "?"
	}
	gw := w - len(label) - lipgloss.Width(val)
	if !st.KVUsage.OK || gw < 5 {
		// The log standing in for an endpoint that does not answer has
		// no KV: that is why it is missing, not the engine (as the
		// latency pane says).
		if f := d.Fresh(); (f.FromLog || f.Stale) && f.Why != "" && !st.KVUsage.OK {
			return label + s.Faint.Render(clip(missing+" "+f.Why, max(1, w-len(label))))
		}
		return label + s.Faint.Render(missing+" not exposed by "+engineName(d))
	}
	lvl := judgeLevel(d.Thresholds, MKV, st.KVUsage)
	if st.KVUsageMax.OK {
		lvl = judgeLevel(d.Thresholds, MKV, st.KVUsageMax)
	}
	pct := max(0, min(1, st.KVUsage.V))
	// the bar's filled cells as bubbles/progress counts them (no
	// percentage text: the whole width is the bar's)
	k := kvBar{styles: s, lvl: lvl, w: gw, filled: max(0, min(gw, int(math.Round(float64(gw)*pct))))}
	if k.bar = p.bar.bar; p.bar != k {
		if !p.kvSet {
			p.kv = progress.New(progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))
			p.kvSet = true
		}
		p.kv.SetWidth(gw)
		p.kv.FullColor, p.kv.EmptyColor = levelColor(s, lvl), levelColor(s, lvl)
		if !s.NoColor {
			p.kv.EmptyColor = s.Palette.Faint
		}
		k.bar = p.kv.ViewAs(pct)
		p.bar = k
	}
	return label + k.bar + s.Level(lvl).Render(val)
}

// levelColor is a judgement's colour (none without colour or judgement).
func levelColor(s *Styles, l Level) color.Color {
	if s.NoColor {
		return lipgloss.NoColor{}
	}
	switch l {
	case LevelOK:
		return s.Palette.OK
	case LevelWarn:
		return s.Palette.Warn
	case LevelCrit:
		return s.Palette.Crit
	}
	return lipgloss.NoColor{}
}

// DrawKey: drawn from the store only (see Keyed).
func (*schedulerPane) DrawKey(d *Data) uint64 { return d.StoreVersion }
