package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/behaviour"
	"github.com/llmtop/llmtop/sources/probe"
	"github.com/llmtop/llmtop/tui"
)

// `llmtop probe URL`: the behaviour probe (sources/behaviour) judged by
// diagnosis.ProbeFindings; `o` in the monitor runs the same probe through
// probeRunner. Exit status as diagnose's: 0 no warnings, 1 warnings, 2
// critical findings, 3 nothing could be probed.

var probeFlags struct {
	model     string
	json      bool
	reference string
	golden    string
}

func init() {
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "Describe how the model answers: determinism, chat template, tokenizer, stop tokens, repetition (exit 0/1/2/3)",
		Long: `Send a handful of small requests, one at a time, and describe how the
model behind URL answers (under 30 s; never load):

  determinism    the same chat request twice at temperature 0 (with a seed)
  chat template  the prompt the server renders for a chat, and its token ids,
                 through the engine's own route; flagged without the model
                 family's special tokens, or when /v1/completions answers the
                 rendered prompt differently from the chat route
  tokenization   token counts for plain English, typographic characters and
                 CJK against a chars-per-token estimate
  stop/length    a one-word question under max_tokens 256: stop or length,
                 and the stop tokens and generation defaults the server applies
  repetition     unique-token ratio and the most repeated n-gram
  identity       model, revision, context, engine version, and fingerprints of
                 the template, tokenizer and generation defaults

Each request may take --timeout (default 8 s here); the whole probe stops at
25 s and says which checks did not run.

--json prints the result with every request and response (API keys and URL
credentials redacted): the repro for a bug report. The checks and their
sources per engine are in docs/diagnosis.md ("Behaviour checks").

Exit status: 0 no warnings, 1 warnings, 2 critical findings, 3 nothing could
be probed (no answer, no engine recognised, no model).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runProbe(ctx, cmd, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&probeFlags.model, "model", "", "model to probe (default: the first the endpoint lists)")
	fs.BoolVar(&probeFlags.json, "json", false, "print the result, findings and raw requests/responses as JSON")
	fs.StringVar(&probeFlags.reference, "reference", "", "also ask a reference endpoint (`URL2`) the same greedy prompts and show where the answers and token ids first differ")
	fs.StringVar(&probeFlags.golden, "golden", "", "keep the greedy answers of each run in `FILE` (JSON) and show which changed since the last run kept there")
	engineFlagSet(fs)
	root.AddCommand(cmd)

	tui.RegisterOverlay(tui.OverlaySpec{ID: "probe", Key: tui.DefaultKeyMap().Probe,
		New: func() tui.Overlay { return tui.NewProbeOverlay(newMonitorRuntime().probe) }})
}

// probeConfig is one probe of url from the engine flags; named: the person
// named the endpoint (it may get $OPENAI_API_KEY).
func probeConfig(url, modelID string, named bool) (behaviour.Config, error) {
	eng, err := parseEngine(engineFlags.engine)
	if err != nil {
		return behaviour.Config{}, err
	}
	key, err := apiKeyFor(url, named)
	if err != nil {
		return behaviour.Config{}, err
	}
	return behaviour.Config{URL: normalizeURL(url), Model: modelID, APIKey: key, Engine: eng}, nil
}

// probe is the monitor's `o`: the screen's endpoint ID mapped back to the
// URL to probe (the session's target knows the credentials it hides).
func (rt *monitorRuntime) probe(ctx context.Context, id string, progress func(string)) (model.Behaviour, error) {
	url, named := rt.target(id)
	cfg, err := probeConfig(url, "", named)
	if err != nil {
		return model.Behaviour{}, err
	}
	cfg.Progress = progress
	b, err := behaviour.Run(ctx, cfg)
	b.Endpoint = id
	if err == nil && b.Partial == "" {
		// The golden prompts too: the runs view compares their answers
		// with the run before (a release that changed what it answers).
		progress("golden answers")
		if set, aerr := behaviour.Answers(ctx, cfg, behaviour.GoldenPrompts); aerr == nil {
			b.Golden = model.CleanBehaviour(model.Behaviour{Golden: set.Answers}).Golden
		}
	}
	return b, err
}

// probeResult is `llmtop probe --json`.
type probeResult struct {
	Status     string              `json:"status"` // ok, warn, crit; unreachable, unrecognised, no_model (exit 3)
	ExitCode   int                 `json:"exit_code"`
	Error      string              `json:"error,omitempty"`
	NotChecked []string            `json:"not_checked,omitempty"`
	Findings   []diagnosis.Finding `json:"findings"`
	Behaviour  *model.Behaviour    `json:"behaviour,omitempty"`
	// Compare is --reference's or --golden's comparison.
	Compare *answerCompare `json:"compare,omitempty"`
}

func runProbe(ctx context.Context, cmd *cobra.Command, url string) error {
	cfg, err := probeConfig(url, probeFlags.model, true)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("timeout") {
		cfg.Timeout = engineFlags.timeout // else the probe's own 8 s: answers take longer than scrapes
	}
	if !probeFlags.json {
		fmt.Fprintf(cmd.ErrOrStderr(), "probing %s (a few small requests, under 30 s)…\n", model.RedactURL(cfg.URL))
	}
	b, err := behaviour.Run(ctx, cfg)
	res := judgeProbe(b, err)
	if err == nil && (probeFlags.reference != "" || probeFlags.golden != "") {
		if cerr := compareAnswers(ctx, cfg, b, &res); cerr != nil {
			return cerr
		}
	}
	return reportProbe(safeOut(cmd.OutOrStdout()), res)
}

// judgeProbe turns a probe's outcome into the result and its exit code.
func judgeProbe(b model.Behaviour, err error) probeResult {
	if err != nil {
		// Exit 3 either way (nothing could be probed); the status says
		// whether anything answered.
		status := "unreachable"
		switch {
		case errors.Is(err, behaviour.ErrNoModel):
			status = "no_model"
		case errors.Is(err, probe.ErrUnrecognised):
			status = "unrecognised"
		}
		return probeResult{Status: status, ExitCode: 3, Error: model.RedactText(err.Error()), Findings: []diagnosis.Finding{}}
	}
	res := probeResult{Status: "ok", Findings: diagnosis.ProbeFindings(b), NotChecked: diagnosis.ProbeNotChecked(b), Behaviour: &b}
	if res.Findings == nil {
		res.Findings = []diagnosis.Finding{}
	}
	for _, f := range res.Findings {
		switch {
		case f.Severity >= model.SevCrit:
			res.Status, res.ExitCode = "crit", 2
		case f.Severity >= model.SevWarn && res.ExitCode < 1:
			res.Status, res.ExitCode = "warn", 1
		}
	}
	return res
}

func reportProbe(out io.Writer, res probeResult) error {
	if probeFlags.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if res.Behaviour == nil {
		fmt.Fprintln(out, "probe failed: "+res.Error)
	} else {
		fmt.Fprintln(out, strings.Join(tui.ProbeLines(*res.Behaviour, nil), "\n"))
		if len(res.Findings) == 0 {
			fmt.Fprintln(out, "\nno findings from the checks that ran")
		}
		for _, f := range res.Findings {
			fmt.Fprintf(out, "\n[%s] %s\n", strings.ToUpper(f.Severity.String()), f.Title)
			for _, e := range f.Evidence {
				fmt.Fprintf(out, "  evidence: %s (%s)\n", e.Text, e.Source)
			}
			fmt.Fprintf(out, "  cause: %s\n", f.Cause)
			for _, a := range f.Actions {
				fmt.Fprintf(out, "  try: %s — %s (trade-off: %s)\n", a.Change, a.Why, a.TradeOff)
			}
		}
		if c := res.Compare; c != nil {
			printCompare(out, c)
		}
		fmt.Fprintln(out, "\nraw requests and responses: llmtop probe --json")
	}
	if res.ExitCode != 0 {
		return &exitError{code: res.ExitCode, err: errors.New("")}
	}
	return nil
}
