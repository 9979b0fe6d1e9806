package exporter

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// ruleMetricRe is any registered engine's metric (engines.Spec.Prefixes).
var ruleMetricRe = func() *regexp.Regexp {
	var ps []string
	for _, s := range engines.All() {
		for _, p := range s.Prefixes {
			ps = append(ps, regexp.QuoteMeta(p))
		}
	}
	return regexp.MustCompile(`\b(?:` + strings.Join(ps, "|") + `)[a-z_:]+`)
}()

// tableMentions reports whether engines.Metrics names the metric for
// the engine: as a name, or inside a derived source (a selector or a
// formula).
func tableMentions(e model.Engine, name string) bool {
	for _, row := range engines.Metrics(e) {
		if slices.Contains(row.Names, name) {
			return true
		}
		for _, d := range row.Derived {
			if slices.Contains(ruleMetricRe.FindAllString(d, -1), name) {
				return true
			}
		}
	}
	return false
}

// Every engine metric a rule names comes from engines.Metrics, and
// every name the table lists for a concept a rule reads is in that rule:
// an older name added to the table is alerted on with no edit here.
func TestRuleMetricNamesComeFromTheTable(t *testing.T) {
	o := RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(diagnosis.DefaultConfig()), Window: time.Minute}
	concepts := map[string]string{"LLMKVCacheFull": string(model.KVUsage), "LLMQueueBacklog": string(model.Waiting),
		"LLMTTFTOverSLO": string(model.TTFT), "LLMPreemptions": string(model.Preemptions), "LLMRequestErrors": model.FinishReasons}
	for _, m := range engineTable {
		rules := engineRules(m, o)
		if len(rules) == 0 {
			t.Errorf("%s: no rules", m.engine)
		}
		for _, r := range rules {
			names := ruleMetricRe.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%s %s: no engine metric in %q", m.engine, r.Alert, r.Expr)
			}
			for _, n := range names {
				if !tableMentions(m.engine, strings.TrimSuffix(n, "_bucket")) {
					t.Errorf("%s %s: %s is not in engines.Metrics", m.engine, r.Alert, n)
				}
			}
			for _, n := range engines.MetricNames(m.engine, concepts[r.Alert]) {
				if !strings.Contains(r.Expr, n) {
					t.Errorf("%s %s: the table lists %s, the rule does not read it: %q", m.engine, r.Alert, n, r.Expr)
				}
			}
		}
	}
	var kv string
	for _, r := range engineRules(engineTable[0], o) {
		if r.Alert == "LLMKVCacheFull" {
			kv = r.Expr
		}
	}
	if engineTable[0].engine != model.VLLM || !strings.Contains(kv, "vllm:kv_cache_usage_perc") || !strings.Contains(kv, " or ") ||
		!strings.Contains(kv, "vllm:gpu_cache_usage_perc") {
		t.Errorf("vLLM's KV rule does not read the name before v0.11: %q", kv)
	}
}

// Prometheus's own rule engine (promtool test rules) evaluates the vLLM
// KV rule on a mixed fleet: a replica before v0.11 (gpu_cache_usage_perc),
// one after (kv_cache_usage_perc), one that publishes both with different
// values (read under the newest), and one below the threshold.
func TestKVRuleAlertsOnAMixedVLLMFleet(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (make deps installs Debian's prometheus)")
	}
	f := Rules(RulesOptions{Thresholds: diagnosis.AlertThresholdsOf(diagnosis.DefaultConfig()), Window: time.Minute, For: time.Minute}, model.VLLM)
	var kv AlertRule
	for _, r := range f.Groups[0].Rules {
		if r.Alert == "LLMKVCacheFull" {
			kv = r
		}
	}
	kv.Annotations = nil // compared as written; the test is the expression
	dir := t.TempDir()
	write := func(name string, v any) {
		b, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("rules.yml", RuleFile{Groups: []RuleGroup{{Name: "kv", Rules: []AlertRule{kv}}}})
	series := func(name, inst, values string) map[string]string {
		return map[string]string{"series": name + `{job="vllm",instance="` + inst + `",model_name="m"}`, "values": values}
	}
	alert := func(inst string) map[string]any {
		return map[string]any{"exp_labels": map[string]string{"severity": "warning", "engine": "vllm", "llmtop_finding": "kv_full",
			"job": "vllm", "instance": inst, "model_name": "m"}}
	}
	write("test.yml", map[string]any{
		"rule_files": []string{"rules.yml"}, "evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval": "1m",
			"input_series": []any{
				series("vllm:gpu_cache_usage_perc", "old:8000", "0.97x10"),
				series("vllm:kv_cache_usage_perc", "new:8000", "0.98x10"),
				series("vllm:kv_cache_usage_perc", "both:8000", "0.99x10"),
				series("vllm:gpu_cache_usage_perc", "both:8000", "0.5x10"),
				series("vllm:kv_cache_usage_perc", "fine:8000", "0.2x10"),
				series("vllm:gpu_cache_usage_perc", "fine-both:8000", "0.99x10"),
				series("vllm:kv_cache_usage_perc", "fine-both:8000", "0.3x10"),
			},
			"alert_rule_test": []any{map[string]any{"eval_time": "5m", "alertname": "LLMKVCacheFull",
				"exp_alerts": []any{alert("old:8000"), alert("new:8000"), alert("both:8000")}}},
		}},
	})
	res, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "test.yml")).CombinedOutput()
	if err != nil || !strings.Contains(string(res), "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s\nexpr: %s", err, res, kv.Expr)
	}
}
