package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Issue 30: the screen's verdict colours and the rules agree on every
// signal row: a row (or GPU cell, or finish-mix part) drawn as a warning or
// worse exactly when the rule that judges the same number opens its
// finding, at the edges too. Before, the screen judged GPU utilisation over
// every GPU where the rule uses the engine's, marked the finish mix at a
// literal 5 % (and only abort/error) where the rule counts TGI's failures
// and opens at 5 %, and turned temperature red at 83 °C where the rule uses
// the GPU's own slowdown temperature less 3 °C.
func TestScreenVerdictsAgreeWithTheRules(t *testing.T) {
	cfg := diagnosis.DefaultConfig()
	th := DefaultThresholds
	at := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	url := "http://127.0.0.1:8000"
	// ruled reports whether the rules open a finding with the prefix for
	// this state and GPUs.
	ruled := func(st model.State, g *model.GPUSnapshot, prefix string) bool {
		st.Samples = 10
		ep := diagnosis.Endpoint{URL: url, Identity: model.Identity{Engine: model.VLLM}, State: st, LastOK: at,
			Scrape: model.Scrape{Endpoint: url, Time: at}}
		rep := diagnosis.Evaluate(diagnosis.Input{Time: at, Endpoints: []diagnosis.Endpoint{ep}, GPU: g}, cfg)
		for _, f := range rep.Findings {
			if strings.HasPrefix(f.ID, prefix) {
				return true
			}
		}
		return false
	}
	bad := func(l Level) bool { return l == LevelWarn || l == LevelCrit }
	opened := 0
	check := func(row, prefix string, screen Level, st model.State, g *model.GPUSnapshot) {
		t.Helper()
		r := ruled(st, g, prefix)
		if r {
			opened++
		}
		if r != bad(screen) {
			t.Errorf("%s: the screen says %v, the rule %s opens %v", row, screen, prefix, r)
		}
	}
	dist := func(p99 float64) model.Dist {
		return model.Dist{Exposed: true, Estimate: true, P50: model.Some(p99 / 2), P99: model.Some(p99), Mean: model.Some(p99 / 2), Count: 500, Window: time.Minute}
	}

	// TTFT and ITL p99 against their SLOs.
	for _, v := range []float64{0.5, 0.95, 1.05, 2.5} {
		ttft := dist(v * cfg.SLOTTFT.Seconds())
		st := model.State{Latency: map[model.Latency]model.Dist{model.TTFT: ttft}}
		check("TTFT p99 ×"+fmtNum(model.Some(v)), "ttft_", p99Symptom("TTFT p99", ttft, th.TTFTp99, th, MTTFT).lvl, st, nil)
		itl := dist(v * cfg.SLOITL.Seconds())
		st = model.State{Latency: map[model.Latency]model.Dist{model.ITL: itl}}
		check("ITL p99 ×"+fmtNum(model.Some(v)), "itl_", p99Symptom("ITL p99", itl, th.ITLp99, th, MITL).lvl, st, nil)
	}
	// KV usage against the high-water mark.
	for _, kv := range []float64{0.5, cfg.KVHigh - 0.001, cfg.KVHigh, 0.99} {
		st := model.State{KVUsage: model.Some(kv)}
		check("KV "+fmtPct(model.Some(kv)), "kv_full", kvSymptom(th, st).lvl, st, nil)
	}
	// Waiting against the backlog threshold.
	for _, w := range []float64{0, cfg.WaitingHigh, cfg.WaitingHigh + 1} {
		st := model.State{Waiting: model.Some(w)}
		check("waiting "+fmtNum(model.Some(w)), "queue_backlog", waitingSymptom(st.Waiting, cfg).lvl, st, nil)
	}
	// GPU utilisation while requests wait: the engine's GPUs only (GPU 1
	// holds no engine process and idles; GPU 0 serves the engine).
	for _, u := range []float64{10, cfg.GPUIdleUtil - 1, cfg.GPUIdleUtil, 90} {
		g := &model.GPUSnapshot{Time: at, GPUs: []model.GPU{
			{Index: 0, Util: model.Some(u), Processes: []model.GPUProcess{{PID: 1, Name: "vllm", Engine: "vllm"}}},
			{Index: 1, Util: model.Some(0)},
		}}
		st := model.State{Waiting: model.Some(5), Running: model.Some(8)}
		row := utilSymptom(diagnosis.EngineGPUUtil(g), st.Waiting, th)
		check("GPU util row "+fmtNum(model.Some(u)), "gpu_idle_waiting", row.lvl, st, g)
		c := layoutGPU(th, g.GPUs, 120, false)
		c.engine, c.idle = engineIdle(g, st.Waiting, cfg)
		s := NewStyles(true, false)
		cell := LevelOK
		if c.style(s, g.GPUs[0], colUtil, st.Waiting).Render("x") == s.Level(LevelWarn).Render("x") {
			cell = LevelWarn
		}
		check("GPU 0 util cell "+fmtNum(model.Some(u)), "gpu_idle_waiting", cell, st, g)
		if c.style(s, g.GPUs[1], colUtil, st.Waiting).Render("x") == s.Level(LevelWarn).Render("x") {
			t.Errorf("util %g: the GPU without the engine is drawn as a warning", u)
		}
	}
	// Temperature against the GPU's own slowdown temperature.
	for _, temp := range []float64{70, 83, 84, 87, 95} {
		gp := model.GPU{Index: 0, Temp: model.Some(temp), TempSlowdown: model.Some(87)}
		g := &model.GPUSnapshot{Time: at, GPUs: []model.GPU{gp}}
		c := layoutGPU(th, g.GPUs, 120, false)
		s := NewStyles(true, false)
		cell := LevelOK
		for _, l := range []Level{LevelWarn, LevelCrit} {
			if c.style(s, gp, colTemp, model.None).Render("x") == s.Level(l).Render("x") {
				cell = l
			}
		}
		check("GPU temp "+fmtNum(model.Some(temp)), "gpu_throttle", cell, model.State{}, g)
	}
	// The finish mix: aborts and failures together, TGI's included.
	for _, c := range []struct {
		name  string
		count map[string]float64
	}{
		{"4 % aborted", map[string]float64{"stop": 192, "abort": 8}},
		{"5 % aborted", map[string]float64{"stop": 190, "abort": 10}},
		{"TGI 6 % validation failures", map[string]float64{"success": 188, "validation": 12}},
		{"10 errors of too few", map[string]float64{"stop": 5, "error": 10}},
	} {
		st := model.State{FinishCount: c.count, FinishShare: map[string]float64{}}
		n := 0.0
		for _, x := range c.count {
			n += x
		}
		for r, x := range c.count {
			st.FinishShare[r] = x / n
		}
		s := NewStyles(true, false)
		mix := finishMix(s, st, cfg)
		screen := LevelOK
		for r, x := range st.FinishShare {
			txt := r + " " + fmtPct(model.Some(x))
			if strings.Contains(mix, s.Level(LevelWarn).Render(txt)) || strings.Contains(mix, s.Level(LevelCrit).Render(txt)) {
				screen = LevelWarn
			}
		}
		check(c.name, "finish_errors", screen, st, nil)
	}
	if opened < 12 {
		t.Errorf("only %d cases opened a finding: the table no longer reaches the rules", opened)
	}
}
