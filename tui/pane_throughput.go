package tui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/llmtop/llmtop/core"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

func init() {
	RegisterPane(PaneSpec{ID: "throughput", Slot: 2, New: func() Pane { return throughputPane{} }})
}

// throughputPane: prompt and generated tokens/s, requests/s, errors and
// the finish-reason mix over the window.
type throughputPane struct{}

func (throughputPane) Title() string             { return "Throughput" }
func (throughputPane) Keys() []key.Binding       { return noKeys() }
func (throughputPane) Height(d *Data, w int) int { return 6 + freshExtra(d) }

func (throughputPane) View(d *Data, w, h int) string {
	if v, absent := absentView(d, w); absent {
		return v
	}
	s, st := d.Styles, d.State()
	var eng model.Engine
	if e := d.Endpoint(); e != nil {
		eng = e.Identity.Engine
	}
	tp := core.ThroughputOf(st, eng)
	rate := func(v model.Opt, unit string) string {
		if !v.OK {
			return fmt.Sprintf("%8s %s", missing, unit)
		}
		return fmt.Sprintf("%8s %s", fmtNum(v), unit)
	}
	out := []string{
		metricRow("prompt", 6, d.Series(model.SeriesPromptTPS), 0, rate(tp.Prompt, "tok/s"), w),
		metricRow("gen", 6, d.Series(model.SeriesGenTPS), 0, rate(tp.Gen, "tok/s"), w),
		metricRow("req", 6, d.Series(model.SeriesRequestsPS), 0, rate(st.RequestsPS, reqUnit(st)), w),
	}
	errs := "errors " + fmtNum(st.ErrorsPS) + "/s"
	if st.ErrorsPS.OK {
		errs = s.Judged(d.Thresholds, MErrors, st.ErrorsPS).Render(errs)
	}
	spec := ""
	if st.SpecAccept.OK {
		spec = " · spec-decode accept " + fmtPct(st.SpecAccept)
	}
	over := fmt.Sprintf(" · rates over %s%s", fmtDur(st.RateWindow), windowEnd(d))
	switch {
	case st.RateWindow <= 0 && d.Fresh().FromLog:
		over = " · the engine's own averages (log)"
	case st.RateWindow <= 0:
		// no counter moved into a rate yet (Ollama exposes none): "rates
		// over 0s" read as a window of nothing
		over = " · no rates yet"
	}
	own := engineOwn(tp)
	row := errs + s.Faint.Render(over) + spec
	// The engine's own figures go on a line of their own when the row
	// cannot hold them and the pane has a spare line: clipped, "engine
	// says prompt 6842 tok/s, g…" lost the generation figure.
	if own != "" && h > len(out)+3 && ansi.StringWidth(row+own) > w {
		out = append(out, row, s.Faint.Render(strings.TrimPrefix(own, " · ")))
	} else {
		out = append(out, row+s.Faint.Render(own))
	}
	finish := finishMix(s, st, d.Core.Config())
	if e := d.Endpoint(); st.FinishShare == nil && e != nil && e.Origin != nil {
		// the engine may well expose them: this source does not read them
		finish = "finish " + s.Faint.Render(missing+" (not read through "+nonEmptyStr(e.Origin.Source, "this source")+")")
	}
	out = append(out, finish)
	if extra := h - len(out) - 1; extra >= 4 {
		out = append(out, s.Faint.Render("generated tok/s"))
		out = append(out, chart(d, "throughput.gen", d.Series(model.SeriesGenTPS), w, min(extra, 16),
			func(v float64) string { return fmtNum(model.Some(v)) })...)
	}
	return lines(freshLines(d, out), h)
}

// engineOwn is the engine's own throughput gauges, labelled as the
// engine's ("engine says gen 871 tok/s"), beside rates llmtop computed from
// counters; nothing when they add nothing (model.State.EngineOwnTPS). A
// gauge the engine states over its processing time, not the wall clock
// (llama.cpp's), says so: "engine over its busy time: prompt 6842, gen
// 331 tok/s".
func engineOwn(tp core.Throughput) string {
	var parts []string
	if tp.OwnPrompt.OK {
		parts = append(parts, "prompt "+fmtNum(tp.OwnPrompt)+" tok/s")
	}
	if tp.OwnGen.OK {
		parts = append(parts, "gen "+fmtNum(tp.OwnGen)+" tok/s")
	}
	if len(parts) == 0 {
		return ""
	}
	if tp.Busy {
		// tokens ÷ the seconds its slots worked: a slot's speed, which
		// reads thousands while the server mostly idles
		parts[0] = strings.TrimSuffix(parts[0], " tok/s")
		if len(parts) == 1 {
			parts[0] += " tok/s"
		}
		return " · engine over its busy time: " + strings.Join(parts, ", ")
	}
	return " · engine says " + strings.Join(parts, ", ")
}

// reqUnit is the requests row's unit, saying when the count is the log's.
func reqUnit(st model.State) string {
	if st.RequestsFromLog {
		return "req/s (log)"
	}
	return "req/s"
}

// finishMix is "finish stop 80% · length 15% · abort 5% (n=204)", reasons
// that did not occur left out; a large length share means max_tokens cut
// answers, abort that clients gave up.
func finishMix(s *Styles, st model.State, cfg diagnosis.Config) string {
	if st.FinishShare == nil {
		return "finish " + s.Faint.Render(missing+" (no finish reasons exposed)")
	}
	// finish_errors' word: its share over aborts and failures, counted as
	// the rule counts them (TGI's failure labels too).
	alarm, _ := diagnosis.FinishAlarm(st, cfg)
	var parts []string
	total := 0.0
	for _, r := range st.Reasons() {
		total += st.FinishCount[r]
		if st.FinishCount[r] == 0 {
			continue // "abort 0% · error 0% · repetition 0%" only pushes n= off the line
		}
		txt := r + " " + fmtPct(model.Some(st.FinishShare[r]))
		if alarm >= model.SevWarn && (r == "abort" || slices.Contains(diagnosis.ErrorReasons, r)) {
			txt = s.Level(levelOf(alarm)).Render(txt)
		}
		parts = append(parts, txt)
	}
	if total == 0 {
		return "finish " + s.Faint.Render("no requests finished in the window")
	}
	return "finish " + strings.Join(parts, " · ") + s.Faint.Render(fmt.Sprintf(" (n=%s)", fmtNum(model.Some(total))))
}

// DrawKey: drawn from the store only (see Keyed).
func (throughputPane) DrawKey(d *Data) uint64 { return d.StoreVersion }
