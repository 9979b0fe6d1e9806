package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "scheduler", Slot: 3, New: func() Pane { return &schedulerPane{} }})
}

// schedulerPane: the running batch and the queue, preemptions, and the KV
// cache (gauge, prefix-cache hit rate, capacity).
//
// The KV gauge is drawn here rather than with bubbles/progress: that
// package needs github.com/charmbracelet/harmonica, which go.sum lacks.
type schedulerPane struct{}

func (*schedulerPane) Title() string             { return "Scheduler" }
func (*schedulerPane) Keys() []key.Binding       { return noKeys() }
func (*schedulerPane) Height(d *Data, w int) int { return 6 + freshExtra(d) }

func (p *schedulerPane) View(d *Data, w, h int) string {
	if why := absentReason(d); why != "" {
		return d.Styles.Faint.Render(why)
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
	cap := ""
	if st.KVCapacityTokens.OK {
		cap = " · KV capacity " + fmtTokens(st.KVCapacityTokens) + " tok"
	}
	out = append(out, "prefix-cache hit "+fmtPct(st.PrefixHit)+cap)
	if extra := h - len(out) - 1; extra >= 4 && st.Waiting.OK {
		out = append(out, s.Faint.Render("waiting (queue depth)"))
		out = append(out, chart(d.Series(string(model.Waiting)), w, min(extra, 16),
			func(v float64) string { return fmtNum(model.Some(v)) })...)
	}
	return lines(freshLines(d, out), h)
}

// kvLine is the KV gauge, coloured by the KV thresholds.
func (p *schedulerPane) kvLine(d *Data, st model.State, w int) string {
	s := d.Styles
	label := "KV "
	val := fmt.Sprintf(" %5s", fmtPct(st.KVUsage))
	gw := w - len(label) - len(val)
	if !st.KVUsage.OK || gw < 5 {
		return label + s.Faint.Render(missing+" not exposed by "+engineName(d))
	}
	lvl := d.Thresholds.Judge(MKV, st.KVUsage)
	return label + s.Level(lvl).Render(bar(st.KVUsage.V, gw)+val)
}
