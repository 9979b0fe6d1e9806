package main

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/exporter"
	"github.com/llmtop/llmtop/model"
)

// `llmtop rules [--engine E]`: Prometheus alerting rules equivalent to the
// diagnosis thresholds, on the engines' own metrics (docs/fleet.md).

var rulesFlags struct {
	forOverride time.Duration
}

func init() {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Print Prometheus alerting rules equivalent to llmtop's diagnosis thresholds",
		Long: `Print a Prometheus rule file (groups:) whose alerts restate the diagnosis
rules on each engine's own metrics, so a team without llmtop running gets
them: KV cache at or above the high-water mark, a queue backlog, TTFT p99
over the SLO, preemptions, the error share of finished requests. Thresholds
and for: durations are the diagnosis' own (the config file's [thresholds]
and --slo-ttft apply); rate() windows are --window.

A last group alerts on the series ` + "`llmtop export`" + ` serves
(llmtop_finding{severity="crit"}, endpoints llmtop cannot read, a stale
exporter). --engine keeps one engine's group (and the exporter's).

  llmtop rules > llmtop-rules.yml && promtool check rules llmtop-rules.yml`,
		Args: cobra.NoArgs,
		RunE: runRules,
	}
	cmd.Flags().DurationVar(&rulesFlags.forOverride, "for", 0, "replace every rule's for: duration (for tests; by default each is the diagnosis' hold)")
	root.AddCommand(cmd)
}

func runRules(cmd *cobra.Command, _ []string) error {
	fileCfg, err := loadConfig(monitorFlags.config)
	if err != nil {
		return err
	}
	var engines []model.Engine
	if engineFlags.engine != "" {
		e, err := parseEngine(engineFlags.engine)
		if err != nil {
			return err
		}
		if !slices.Contains(exporter.RuleEngines(), e) {
			return usageErr("--engine %s: %s exposes no metrics to alert on; alert on llmtop export's llmtop_finding series instead (llmtop rules without --engine prints them)", engineFlags.engine, e)
		}
		engines = append(engines, e)
	}
	if rulesFlags.forOverride < 0 {
		return usageErr("--for %v: want a positive duration, e.g. 10s", rulesFlags.forOverride)
	}
	window := pick(monitorFlags.window, fileCfg.Window, flagSet("window"))
	if err := config.CheckWindow(window); err != nil {
		return usageErr("--window %s: %v", durText(window), err)
	}
	opts := exporter.RulesOptions{
		Thresholds: diagnosis.AlertThresholdsOf(config.DiagnosisConfig(fileCfg.Thresholds)),
		Window:     window, For: rulesFlags.forOverride,
	}
	out, err := renderRules(exporter.Rules(opts, engines...))
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}

// renderRules writes the rule file as YAML, with a header saying where it
// came from.
func renderRules(f exporter.RuleFile) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Prometheus alerting rules from `llmtop rules` " + version + ": the diagnosis thresholds\n" +
		"# on the engines' own metrics, and alerts on llmtop export's series. docs/fleet.md\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	return b.Bytes(), nil
}
