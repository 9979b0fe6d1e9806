package exporter

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Prometheus alerting rules equivalent to the diagnosis' thresholds, in the
// engines' own metric names (`llmtop rules`), so a team without llmtop
// running gets the same alerts; and rules on the exporter's own series.

// RuleGroup is one group of a Prometheus rule file.
type RuleGroup struct {
	Name  string      `yaml:"name"`
	Rules []AlertRule `yaml:"rules"`
}

// AlertRule is one alerting rule.
type AlertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	// Threshold is the diagnosis value the expression compares with (in
	// the expression's unit); not written.
	Threshold float64 `yaml:"-"`
}

// RuleFile is a Prometheus rule file (rule_files:, or a PrometheusRule's
// spec).
type RuleFile struct {
	Groups []RuleGroup `yaml:"groups"`
}

// RulesOptions shape the rules.
type RulesOptions struct {
	Thresholds diagnosis.AlertThresholds
	// Window is the range of rate() and increase(): the diagnosis window.
	Window time.Duration
	// For, when positive, replaces every rule's for: (tests; the default
	// is the diagnosis' hold).
	For time.Duration
}

// engineMetrics are one engine's metric expressions, generated from the
// one table of engine metric names (engines.Metrics, which the
// adapters in sources/engine read). by groups per endpoint and model, as
// the adapter sums (or averages) an endpoint's series. A concept with
// older names is each name's aggregate joined by `or`: the aggregates
// carry the same labels, so the newest name an endpoint serves is read,
// and a fleet of mixed releases is alerted on under each one's names.
type engineMetrics struct {
	engine model.Engine
	by     string
	// kv is a 0–1 KV usage expression (already aggregated by `by`); kvNote
	// says when it is an approximation.
	kv, kvNote string
	waiting    []string // a gauge's selectors, newest first
	ttft       []string // histograms (names without _bucket)
	preempt    []string // counters
	finish     []string // counters with a finished_reason label
}

var engineTable = buildEngineTable(engines.All())

// buildEngineTable writes the expressions of each engine with Rules in
// engines/: grouped by its RuleBy labels, KV usage aggregated by its KVAgg
// (the fullest data-parallel engine for vLLM), as its adapter and the
// fleet source read it.
func buildEngineTable(ss []*engines.Spec) []engineMetrics {
	out := make([]engineMetrics, 0, len(ss))
	for _, s := range ss {
		if !s.Rules {
			continue
		}
		m := engineMetrics{engine: s.ID, by: strings.Join(s.RuleBy(), ", "), kvNote: s.KVNote,
			waiting: totals(s, selectors(s.ID, string(model.Waiting))), ttft: selectors(s.ID, string(model.TTFT)),
			preempt: selectors(s.ID, string(model.Preemptions)), finish: selectors(s.ID, model.FinishReasons)}
		m.kv = kvExpr(s, m.by)
		out = append(out, m)
	}
	return out
}

var (
	// selectorRe is a metric name with optional label matchers.
	selectorRe = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-z_]+="[a-z]+"\})?$`)
	// ratioRe is the table's "a/b" formula of two gauges.
	ratioRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)/([a-zA-Z_:][a-zA-Z0-9_:]*)$`)
)

// selectors are the metrics the table lists for the concept, newest
// first: its names, else the selectors among its derived sources
// (Triton's), up to the first formula.
func selectors(e model.Engine, concept string) []string {
	return engines.QueryNames(e, concept, selectorRe.MatchString)
}

// totals adds the engine's matcher for a gauge's total series where it
// writes a breakdown beside it (engines.Spec.TotalMatch: SGLang's
// priority=""), to each plain name.
func totals(s *engines.Spec, sels []string) []string {
	if s.TotalMatch == "" {
		return sels
	}
	out := make([]string, len(sels))
	for i, n := range sels {
		out[i] = n
		if !strings.Contains(n, "{") {
			out[i] = n + "{" + s.TotalMatch + "}"
		}
	}
	return out
}

// kvExpr is the engine's 0–1 KV usage by `by`: its gauge under each name,
// else the table's ratio of two gauges.
func kvExpr(s *engines.Spec, by string) string {
	if sels := selectors(s.ID, string(model.KVUsage)); len(sels) > 0 {
		return anyOf(sels, func(n string) string { return fmt.Sprintf("%s by (%s) (%s)", s.KVAgg, by, n) })
	}
	m, _ := engines.MetricSourceOf(s.ID, string(model.KVUsage))
	for _, d := range m.Derived {
		if p := ratioRe.FindStringSubmatch(d); p != nil {
			return fmt.Sprintf("sum by (%s) (%s) / sum by (%s) (%s)", by, p[1], by, p[2])
		}
	}
	return ""
}

// anyOf is expr of each name joined by `or`, newest first, in parentheses
// when there are several (`or` binds looser than a comparison).
func anyOf(names []string, expr func(string) string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = expr(n)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, " or ") + ")"
}

// RuleEngines lists the engines with engine rules (Ollama exposes no
// metrics to alert on).
func RuleEngines() []model.Engine {
	out := make([]model.Engine, 0, len(engineTable))
	for _, m := range engineTable {
		out = append(out, m.engine)
	}
	return out
}

// Rules returns the rule groups for the engines asked for (all when none)
// and the group on llmtop's own exporter series.
func Rules(o RulesOptions, engines ...model.Engine) RuleFile {
	var f RuleFile
	for _, m := range engineTable {
		if len(engines) > 0 && !slices.Contains(engines, m.engine) {
			continue
		}
		f.Groups = append(f.Groups, RuleGroup{Name: "llmtop-" + string(m.engine), Rules: engineRules(m, o)})
	}
	f.Groups = append(f.Groups, RuleGroup{Name: "llmtop-exporter", Rules: exporterRules(o)})
	return f
}

const diagnoseHint = "llmtop diagnose http://{{ $labels.instance }} shows the evidence and the flags to change."

func engineRules(m engineMetrics, o RulesOptions) []AlertRule {
	t := o.Thresholds
	w := promDuration(o.Window)
	eng := string(m.engine)
	var rs []AlertRule
	add := func(r AlertRule, finding, severity string, hold time.Duration) {
		r.Labels = map[string]string{"severity": severity, "engine": eng, "llmtop_finding": finding}
		r.For = forOf(o, hold)
		r.Annotations["description"] += " " + diagnoseHint
		rs = append(rs, r)
	}
	if m.kv != "" {
		add(AlertRule{Alert: "LLMKVCacheFull", Expr: fmt.Sprintf("%s >= %s", m.kv, num(t.KVHigh)), Threshold: t.KVHigh,
			Annotations: map[string]string{
				"summary":     "KV cache {{ $value | humanizePercentage }} full on {{ $labels.instance }}" + m.kvNote,
				"description": "KV-cache usage has been at or above " + pctText(t.KVHigh) + " for " + durText(t.KVFor) + ": new requests wait for space and long generations get preempted.",
			}}, "kv_full", "warning", t.KVFor)
	}
	if len(m.waiting) > 0 {
		waiting := anyOf(m.waiting, func(n string) string { return fmt.Sprintf("sum by (%s) (%s)", m.by, n) })
		add(AlertRule{Alert: "LLMQueueBacklog", Expr: fmt.Sprintf("%s > %s", waiting, num(t.WaitingHigh)), Threshold: t.WaitingHigh,
			Annotations: map[string]string{
				"summary":     "{{ $value }} requests waiting on {{ $labels.instance }}",
				"description": "More than " + num(t.WaitingHigh) + " requests have been waiting for " + durText(t.WaitingFor) + ".",
			}}, "queue_backlog", "critical", t.WaitingFor)
	}
	if len(m.ttft) > 0 {
		buckets := anyOf(m.ttft, func(n string) string { return fmt.Sprintf("sum by (%s, le) (rate(%s_bucket[%s]))", m.by, n, w) })
		add(AlertRule{Alert: "LLMTTFTOverSLO",
			Expr:      fmt.Sprintf("histogram_quantile(0.99, %s) > %s", buckets, num(t.SLOTTFT.Seconds())),
			Threshold: t.SLOTTFT.Seconds(),
			Annotations: map[string]string{
				"summary":     "TTFT p99≈{{ $value | humanizeDuration }} on {{ $labels.instance }} (SLO " + durText(t.SLOTTFT) + ")",
				"description": "The time-to-first-token p99 over " + w + " (estimated from the histogram buckets) is above the " + durText(t.SLOTTFT) + " objective.",
			}}, "ttft_high", "warning", t.TTFTFor)
	}
	if len(m.preempt) > 0 {
		rate := anyOf(m.preempt, func(n string) string { return fmt.Sprintf("sum by (%s) (rate(%s[%s]))", m.by, n, w) })
		add(AlertRule{Alert: "LLMPreemptions",
			Expr:      fmt.Sprintf("%s > %s", rate, num(t.PreemptPS)),
			Threshold: t.PreemptPS,
			Annotations: map[string]string{
				"summary":     "{{ $value | humanize }} preemptions/s on {{ $labels.instance }}",
				"description": "The engine evicts running requests (preemption or retraction) more than " + num(t.PreemptPS) + "/s: the KV pool cannot hold the batch.",
			}}, "kv_preemption", "critical", t.PreemptFor)
	}
	if len(m.finish) > 0 {
		total := anyOf(m.finish, func(n string) string { return fmt.Sprintf("sum by (%s) (increase(%s[%s]))", m.by, n, w) })
		share := func(reasons string) string {
			return anyOf(m.finish, func(n string) string {
				return fmt.Sprintf(`sum by (%s) (increase(%s{finished_reason=~"%s"}[%s]))`, m.by, n, reasons, w)
			}) + " / " + total
		}
		enough := fmt.Sprintf("and %s >= %s", total, num(t.MinFinished))
		add(AlertRule{Alert: "LLMRequestErrors", Expr: fmt.Sprintf("%s >= %s %s", share("error"), num(t.ErrorShare), enough), Threshold: t.ErrorShare,
			Annotations: map[string]string{
				"summary":     "{{ $value | humanizePercentage }} of requests end in error on {{ $labels.instance }}",
				"description": "At least " + pctText(t.ErrorShare) + " of the requests finished in " + w + " (and at least " + num(t.MinFinished) + " of them) ended with finished_reason error: the engine log has the exceptions.",
			}}, "finish_errors", "critical", t.ErrorFor)
		add(AlertRule{Alert: "LLMRequestsAborted", Expr: fmt.Sprintf("%s >= %s %s", share("abort|error"), num(t.ErrorShare), enough), Threshold: t.ErrorShare,
			Annotations: map[string]string{
				"summary":     "{{ $value | humanizePercentage }} of requests aborted or failed on {{ $labels.instance }}",
				"description": "At least " + pctText(t.ErrorShare) + " of the requests finished in " + w + " were aborted (clients gave up) or failed.",
			}}, "finish_errors", "warning", t.ErrorFor)
	}
	return rs
}

// exporterRules alert on llmtop's judgment as `llmtop export` serves it.
func exporterRules(o RulesOptions) []AlertRule {
	title := `{{ with printf "llmtop_finding_info{endpoint='%s',id='%s'}" $labels.endpoint $labels.id | query }}{{ . | first | label "title" }}: {{ . | first | label "action" }}{{ end }}`
	rule := func(name, sev, promSev string) AlertRule {
		return AlertRule{Alert: name, Expr: fmt.Sprintf(`llmtop_finding{severity=%q} == 1`, sev), For: forOf(o, 0),
			Labels: map[string]string{"severity": promSev},
			Annotations: map[string]string{
				"summary":     "llmtop: {{ $labels.id }} on {{ $labels.endpoint }}",
				"description": title,
			}}
	}
	return []AlertRule{
		rule("LLMTopFindingCritical", "crit", "critical"),
		rule("LLMTopFindingWarning", "warn", "warning"),
		{Alert: "LLMTopEndpointDown", Expr: "llmtop_endpoint_up == 0", For: forOf(o, time.Minute),
			Labels: map[string]string{"severity": "critical"},
			Annotations: map[string]string{
				"summary":     "llmtop cannot read {{ $labels.endpoint }}",
				"description": `{{ with printf "llmtop_endpoint_scrape_error{endpoint='%s'}" $labels.endpoint | query }}scrape error: {{ . | first | label "kind" }}{{ end }}`,
			}},
		{Alert: "LLMTopStale", Expr: "time() - llmtop_last_refresh_timestamp_seconds > 120", For: forOf(o, time.Minute),
			Labels: map[string]string{"severity": "warning"},
			Annotations: map[string]string{
				"summary":     "llmtop export on {{ $labels.instance }} has not refreshed for {{ $value | humanizeDuration }}",
				"description": "Its other series are stale: the llmtop process is stuck or its clock is wrong.",
			}},
	}
}

// forOf is a rule's for: the diagnosis hold, or the override.
func forOf(o RulesOptions, hold time.Duration) string {
	if o.For > 0 {
		hold = o.For
	}
	if hold <= 0 {
		return ""
	}
	return promDuration(hold)
}

// promDuration writes d in Prometheus's duration syntax (5m, 90s, 1h30m).
func promDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	var s string
	if h := d / time.Hour; h > 0 {
		s += strconv.FormatInt(int64(h), 10) + "h"
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		s += strconv.FormatInt(int64(m), 10) + "m"
		d -= m * time.Minute
	}
	if d > 0 {
		s += strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func pctText(v float64) string { return num(v*100) + " %" }

func durText(d time.Duration) string { return promDuration(d) }
