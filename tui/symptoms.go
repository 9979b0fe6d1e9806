package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// symptom is one row of the runbooks' symptom split: a number, its
// target, and whether it meets it. The diagnosis side panel shows the rows
// under its findings, so that the bad number stands out even before a
// finding opens.
type symptom struct {
	name, value, target string
	lvl                 Level
	// verdict, when set, replaces ok/watch ("edge": a bucket estimate
	// just under a target that is a bucket edge cannot say ok).
	verdict string
}

// symptoms computes the table from the state and the GPUs.
func symptoms(d *Data) []symptom {
	st, t := d.State(), d.Thresholds
	ttft := st.Latency[model.TTFT]
	out := []symptom{p99Symptom("TTFT p99", ttft, t.TTFTp99, t, MTTFT)}
	q, pf := st.Latency[model.Queue].Mean, st.Latency[model.Prefill].Mean
	qs, ps := model.None, model.None
	if q.OK && pf.OK && q.V+pf.V > 0 {
		qs, ps = model.Some(q.V/(q.V+pf.V)), model.Some(pf.V/(q.V+pf.V))
	}
	qName := " queue share"
	if st.Latency[model.Queue].Approx == model.LittleApprox {
		qName += "≈" // estimated from the gauges, not timed by the engine
	}
	out = append(out, symptom{name: qName, value: fmtPct(qs)}, symptom{name: " prefill share", value: fmtPct(ps)})
	tp := st.Latency[model.ITL]
	name := "ITL p99"
	if !tp.P99.OK {
		tp, name = st.Latency[model.TPOT], "TPOT p99"
	}
	out = append(out, p99Symptom(name, tp, t.ITLp99, t, MITL))
	out = append(out, kvSymptom(t, st))
	out = append(out, waitingSymptom(st.Waiting, d.Core.Config()))
	out = append(out, utilSymptom(diagnosis.EngineGPUUtil(d.GPU()), st.Waiting, t))
	return out
}

// waitingSymptom judges the queue as the backlog rule does (more than
// WaitingHigh waiting, held for WaitingFor): a few waiting requests are
// normal on a busy server, not a finding.
func waitingSymptom(w model.Opt, cfg diagnosis.Config) symptom {
	row := symptom{name: "waiting", value: fmtNum(w), target: fmt.Sprintf("≤%g", cfg.WaitingHigh)}
	switch {
	case !w.OK:
	case w.V > cfg.WaitingHigh:
		row.lvl = LevelWarn
	default:
		row.lvl = LevelOK
	}
	return row
}

// utilSymptom: a busy GPU is no verdict on the load (100 % can be a light
// load on a small model); only an idle GPU while requests wait is a
// warning. The row says which it is. The target applies only while
// requests wait ("≥30%"); with none waiting any utilisation is fine ("any").
func utilSymptom(util, waiting model.Opt, t Thresholds) symptom {
	row := symptom{name: "GPU util", value: fmtPct(util.Scale(0.01)), target: fmt.Sprintf("≥%g%%", t.GPUIdle)}
	if waiting.OK && waiting.V == 0 {
		row.target = "any"
	}
	switch {
	case !util.OK:
	case util.V >= t.GPUIdle:
		row.lvl, row.verdict = LevelNone, "busy"
	case waiting.OK && waiting.V > 0:
		row.lvl, row.verdict = LevelWarn, "idle+queue"
	default:
		row.lvl, row.verdict = LevelNone, "idle"
	}
	return row
}

// p99Symptom is a p99 row; when every observation sat in the lowest bucket
// the p99 is only known to be under that bucket's edge ("<300ms"), judged
// OK when the edge meets the target and not judged otherwise.
//
// A bucket estimate just under a target that is itself a bucket edge
// (diagnosis.SLOEdge) is only known to be at most the target: "edge".
func p99Symptom(name string, dist model.Dist, slo time.Duration, t Thresholds, m Metric) symptom {
	target := "≤" + fmtSec(model.Some(slo.Seconds()))
	if dist.Source == model.FromLog {
		name += " (log)" // from the engine's per-request log lines
	}
	if dist.AllBelow.OK {
		lvl := LevelNone
		if judgeLevel(t, m, dist.AllBelow) == LevelOK {
			lvl = LevelOK
		}
		return symptom{name: name, value: "<" + fmtSec(dist.AllBelow), target: target, lvl: lvl}
	}
	if !dist.P99.OK && dist.Mean.OK {
		// Mean-only engines (llama.cpp's TPOT, TGI's approximated TTFT):
		// the table shows the mean. Over the target it is judged (the p99
		// is over too); under it, it is no verdict on the p99 target, as
		// the rules say ("not checked"), not "ok".
		row := symptom{name: strings.Replace(name, "p99", "mean", 1), value: fmtSec(dist.Mean), target: target, lvl: judgeLevel(t, m, dist.Mean)}
		if row.lvl == LevelOK {
			row.lvl, row.verdict = LevelNone, "no p99"
		}
		return row
	}
	if dist.Past(0.99) {
		// past the highest finite bucket: over the bound, judged only
		// where the bound itself is over the target
		lvl := judgeLevel(t, m, dist.Above)
		if lvl == LevelOK {
			lvl = LevelNone
		}
		return symptom{name: name, value: ">" + fmtSec(dist.Above), target: target, lvl: lvl}
	}
	if _, edge := diagnosis.SLOEdge(dist.P99, dist, slo); edge {
		return symptom{name: name, value: fmtSec(dist.P99), target: target, verdict: "edge"}
	}
	return symptom{name: name, value: fmtSec(dist.P99), target: target, lvl: judgeLevel(t, m, dist.P99)}
}

// kvSLO: the KV line of the symptom table is bad only at the critical
// share (the gauge turns yellow earlier).
// kvSymptom is the KV row; where only a floor is known (llama.cpp with an
// unknown KV layout: model.SlotKV) it shows the range and judges the top:
// a top over the mark with a floor under it is no verdict, not "fine".
func kvSymptom(t Thresholds, st model.State) symptom {
	row := symptom{name: "KV cache", value: fmtPct(st.KVUsage), target: "<" + fmtPct(model.Some(t.KVCrit)), lvl: kvSLO(t, st.KVUsage)}
	if top := st.KVUsageMax; top.OK && st.KVUsage.OK {
		row.value = fmtPct(st.KVUsage) + "–" + fmtPct(top) + "?"
		if row.lvl = kvSLO(t, top); row.lvl == LevelCrit && kvSLO(t, st.KVUsage) != LevelCrit {
			row.lvl = LevelNone
		}
	}
	return row
}

func kvSLO(t Thresholds, v model.Opt) Level {
	if l := judgeLevel(t, MKV, v); l == LevelCrit {
		return l
	} else if l == LevelNone {
		return l
	}
	return LevelOK
}
