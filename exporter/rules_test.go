package exporter

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// A configuration unlike the defaults in every threshold the rules state,
// so a rule that ignored the config (a constant copied from the defaults)
// is caught.
func oddConfig() diagnosis.Config {
	c := diagnosis.DefaultConfig()
	c.KVHigh, c.KVFor = 0.87, 7*time.Minute
	c.WaitingHigh, c.WaitingFor = 23, 2*time.Minute
	c.SLOTTFT, c.Hold = 350*time.Millisecond, 45*time.Second
	c.PreemptPS = 2.5
	c.FinishErrorShare, c.MinFinished = 0.08, 13
	return c
}

// Each rule compares with the diagnosis' own threshold, for its own hold,
// read from the config the diagnosis runs with (not from the rules'
// package): the alerts cannot drift from the findings.
func TestRuleThresholdsAreTheDiagnosis(t *testing.T) {
	cfg := oddConfig()
	f := Rules(RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(cfg), Window: 2 * time.Minute})
	want := map[string]struct {
		threshold float64
		op        string
		hold      time.Duration
		finding   string
	}{
		"LLMKVCacheFull":     {cfg.KVHigh, ">=", cfg.KVFor, "kv_full"},
		"LLMQueueBacklog":    {cfg.WaitingHigh, ">", cfg.WaitingFor, "queue_backlog"},
		"LLMTTFTOverSLO":     {cfg.SLOTTFT.Seconds(), ">", cfg.Hold, "ttft_high"},
		"LLMPreemptions":     {cfg.PreemptPS, ">", min(cfg.Hold, 10*time.Second), "kv_preemption"},
		"LLMRequestErrors":   {cfg.FinishErrorShare, ">=", cfg.Hold, "finish_errors"},
		"LLMRequestsAborted": {cfg.FinishErrorShare, ">=", cfg.Hold, "finish_errors"},
	}
	seen := map[string]int{}
	for _, g := range f.Groups {
		if g.Name == "llmtop-exporter" {
			continue
		}
		for _, r := range g.Rules {
			w, ok := want[r.Alert]
			if !ok {
				t.Errorf("%s/%s: no diagnosis threshold to check it against", g.Name, r.Alert)
				continue
			}
			seen[r.Alert]++
			if r.Threshold != w.threshold || !strings.Contains(r.Expr, w.op+" "+num(w.threshold)) {
				t.Errorf("%s/%s: %q (threshold %v), want %s %v", g.Name, r.Alert, r.Expr, r.Threshold, w.op, w.threshold)
			}
			if r.For != promDuration(w.hold) {
				t.Errorf("%s/%s: for %s, the diagnosis holds %v", g.Name, r.Alert, r.For, w.hold)
			}
			if r.Labels["llmtop_finding"] != w.finding || diagnosis.RuleHold(w.finding, cfg) != w.hold {
				t.Errorf("%s/%s: finding %q, want %q held %v", g.Name, r.Alert, r.Labels["llmtop_finding"], w.finding, w.hold)
			}
			if strings.Contains(r.Expr, "[") && !strings.Contains(r.Expr, "[2m]") {
				t.Errorf("%s/%s: %q: the range is not the window (2m)", g.Name, r.Alert, r.Expr)
			}
			if strings.Contains(r.Expr, "finished_reason") && !strings.Contains(r.Expr, ">= "+num(cfg.MinFinished)) {
				t.Errorf("%s/%s: %q: no minimum of %v finished requests", g.Name, r.Alert, r.Expr, cfg.MinFinished)
			}
		}
	}
	for name := range want {
		if seen[name] == 0 {
			t.Errorf("no engine has %s", name)
		}
	}
	if seen["LLMKVCacheFull"] != len(engineTable) || seen["LLMQueueBacklog"] != len(engineTable) {
		t.Errorf("KV and backlog rules on %d and %d engines, want all %d", seen["LLMKVCacheFull"], seen["LLMQueueBacklog"], len(engineTable))
	}
}

func TestForOverrideAndEngineFilter(t *testing.T) {
	f := Rules(RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(diagnosis.DefaultConfig()), Window: time.Minute, For: 5 * time.Second}, model.SGLang)
	if len(f.Groups) != 2 || f.Groups[0].Name != "llmtop-sglang" || f.Groups[1].Name != "llmtop-exporter" {
		t.Fatalf("groups %v, want sglang's and the exporter's", f.Groups)
	}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.For != "5s" {
				t.Errorf("%s: for %q with --for 5s", r.Alert, r.For)
			}
		}
	}
}

func TestPromDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "5m", 90 * time.Second: "1m30s", time.Hour + 30*time.Minute: "1h30m",
		10 * time.Second: "10s", 1500 * time.Millisecond: "1500ms",
	} {
		if got := promDuration(d); got != want {
			t.Errorf("promDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// SGLang writes its queue gauges' totals under priority="" beside a
// breakdown by priority (with priority scheduling): the backlog rule sums
// the totals only, as the adapter and the fleet source read them.
func TestSGLangBacklogRuleReadsTheTotal(t *testing.T) {
	f := Rules(RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(diagnosis.DefaultConfig()), Window: time.Minute}, model.SGLang)
	for _, r := range f.Groups[0].Rules {
		if r.Alert == "LLMQueueBacklog" {
			if !strings.Contains(r.Expr, `sglang:num_queue_reqs{priority=""}`) {
				t.Errorf("expr %q", r.Expr)
			}
			return
		}
	}
	t.Fatal("no backlog rule for SGLang")
}
