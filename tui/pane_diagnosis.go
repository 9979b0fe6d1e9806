package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/model"
)

// symptomPane is the diagnosis side panel until the diagnosis feature
// replaces it: the runbooks' symptom split as a table, each number judged
// against its SLO, so the bad one stands out.
type symptomPane struct{}

func (symptomPane) Title() string             { return "Diagnosis" }
func (symptomPane) Keys() []key.Binding       { return noKeys() }
func (symptomPane) Height(d *Data, w int) int { return 9 }

type symptom struct {
	name, value, target string
	lvl                 Level
}

func (symptomPane) View(d *Data, w, h int) string {
	if why := absentReason(d); why != "" {
		return d.Styles.Faint.Render(why)
	}
	s, rows := d.Styles, symptoms(d)
	out := []string{s.Faint.Render(fmt.Sprintf("%-15s %8s  %-8s", "signal", "now", "target"))}
	for _, r := range rows {
		verdict := ""
		switch r.lvl {
		case LevelWarn, LevelCrit:
			verdict = "BAD"
		case LevelOK:
			verdict = "ok"
		}
		out = append(out, fmt.Sprintf("%-15s %8s  %-8s ", clip(r.name, 15), r.value, r.target)+s.Level(r.lvl).Render(verdict))
	}
	out = append(out, verdictLine(s, rows))
	return lines(out, h)
}

// symptoms computes the table from the state and the GPUs.
func symptoms(d *Data) []symptom {
	st, t := d.State(), d.Thresholds
	ttft := st.Latency[model.TTFT]
	out := []symptom{{"TTFT p99", fmtSec(ttft.P99), "≤" + fmtSec(model.Some(t.TTFTp99.Seconds())), t.Judge(MTTFT, ttft.P99)}}
	q, pf := st.Latency[model.Queue].Mean, st.Latency[model.Prefill].Mean
	qs, ps := model.None, model.None
	if q.OK && pf.OK && q.V+pf.V > 0 {
		qs, ps = model.Some(q.V/(q.V+pf.V)), model.Some(pf.V/(q.V+pf.V))
	}
	out = append(out, symptom{" queue share", fmtPct(qs), "", LevelNone}, symptom{" prefill share", fmtPct(ps), "", LevelNone})
	tp := st.Latency[model.ITL]
	name := "ITL p99"
	if !tp.P99.OK {
		tp, name = st.Latency[model.TPOT], "TPOT p99"
	}
	out = append(out, symptom{name, fmtSec(tp.P99), "≤" + fmtSec(model.Some(t.ITLp99.Seconds())), t.Judge(MITL, tp.P99)})
	out = append(out, symptom{"KV cache", fmtPct(st.KVUsage), "<" + fmtPct(model.Some(t.KVCrit)), kvSLO(t, st.KVUsage)})
	out = append(out, symptom{"waiting", fmtNum(st.Waiting), fmt.Sprintf("≤%g", t.WaitingMax), t.Judge(MWaiting, st.Waiting)})
	util := meanGPUUtil(d.GPU)
	out = append(out, symptom{"GPU util", fmtPct(util.Scale(0.01)), "busy", t.Judge(MGPUUtil, util, st.Waiting.Or(0))})
	return out
}

// kvSLO: the KV line of the symptom table is bad only at the critical
// share (the gauge turns yellow earlier).
func kvSLO(t Thresholds, v model.Opt) Level {
	if l := t.Judge(MKV, v); l == LevelCrit {
		return l
	} else if l == LevelNone {
		return l
	}
	return LevelOK
}

func meanGPUUtil(g *model.GPUSnapshot) model.Opt {
	if g == nil || g.Err != "" {
		return model.None
	}
	sum, n := 0.0, 0
	for _, x := range g.GPUs {
		if x.Util.OK {
			sum += x.Util.V
			n++
		}
	}
	if n == 0 {
		return model.None
	}
	return model.Some(sum / float64(n))
}

// verdictLine names the symptom split's reading in one line.
func verdictLine(s *Styles, rows []symptom) string {
	bad := map[string]bool{}
	for _, r := range rows {
		if r.lvl >= LevelWarn {
			bad[strings.TrimSpace(r.name)] = true
		}
	}
	qShare := rows[1].value
	switch {
	case len(bad) == 0:
		return s.OK.Render("all signals within their targets")
	case bad["waiting"] && bad["KV cache"]:
		return s.Crit.Render("queue grows with the KV cache full: memory-bound")
	case bad["TTFT p99"] && bad["waiting"]:
		return s.Warn.Render("TTFT is queueing (queue share " + qShare + ")")
	case bad["TTFT p99"]:
		return s.Warn.Render("TTFT over SLO: see queue vs prefill share")
	case bad["ITL p99"] || bad["TPOT p99"]:
		return s.Warn.Render("decode is slow: batch too large or GPU contended")
	case bad["GPU util"]:
		return s.Warn.Render("GPU idle while requests wait: scheduler-bound")
	default:
		return s.Warn.Render("requests are waiting")
	}
}
