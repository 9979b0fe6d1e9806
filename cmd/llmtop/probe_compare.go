package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/behaviour"
)

// `llmtop probe --reference URL2` and `--golden FILE`: the same greedy
// prompts (behaviour.GoldenPrompts) asked of the probed endpoint and of a
// reference endpoint, or kept per run in a file and compared with the last
// run kept there.

// answerCompare is the comparison in `probe --json`.
type answerCompare struct {
	Kind  string             `json:"kind"` // reference, golden
	Now   model.AnswerSet    `json:"now"`
	Was   *model.AnswerSet   `json:"was,omitempty"` // nil: the first golden run, nothing to compare
	Diffs []model.AnswerDiff `json:"diffs"`
	// File is --golden's file; Kept says this run's answers were added.
	File string `json:"file,omitempty"`
	Kept bool   `json:"kept,omitempty"`
}

// goldenFile is what --golden keeps: each run's answers, oldest first.
type goldenFile struct {
	Llmtop int               `json:"llmtop_golden"`
	Runs   []model.AnswerSet `json:"runs"`
}

// goldenRuns bounds the file: the newest runs are kept.
const goldenRuns = 100

// compareAnswers runs --reference or --golden and adds its findings to res.
func compareAnswers(ctx context.Context, cfg behaviour.Config, b model.Behaviour, res *probeResult) error {
	now, err := behaviour.Answers(ctx, cfg, behaviour.GoldenPrompts)
	if err != nil {
		return fmt.Errorf("answers from %s: %w", model.RedactURL(cfg.URL), err)
	}
	now.Identity = b.Identity // the full probe's fingerprints (template, tokenizer, defaults)
	c := &answerCompare{Now: now}
	if probeFlags.reference != "" {
		rcfg, err := probeConfig(probeFlags.reference, "", true)
		if err != nil {
			return err
		}
		rcfg.Timeout = cfg.Timeout
		was, err := behaviour.Answers(ctx, rcfg, behaviour.GoldenPrompts)
		if err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		// The reference's fingerprints too, so the finding can say which
		// differ (its template, tokenizer, version).
		if rb, err := behaviour.Run(ctx, rcfg); err == nil {
			was.Identity = rb.Identity
		}
		c.Kind, c.Was = diagnosis.CompareReference, &was
	} else {
		c.Kind, c.File = diagnosis.CompareGolden, probeFlags.golden
		g, err := readGolden(probeFlags.golden)
		if err != nil {
			return err
		}
		if n := len(g.Runs); n > 0 {
			was := g.Runs[n-1]
			c.Was = &was
		}
		g.Runs = append(g.Runs, now)
		if len(g.Runs) > goldenRuns {
			g.Runs = g.Runs[len(g.Runs)-goldenRuns:]
		}
		if err := writeGolden(probeFlags.golden, g); err != nil {
			return err
		}
		c.Kept = true
	}
	if c.Was != nil {
		c.Diffs = model.DiffAnswers(now, *c.Was)
		fs := diagnosis.AnswerFindings(c.Kind, now, *c.Was, c.Diffs)
		res.Findings = append(res.Findings, fs...)
		for _, f := range fs {
			if f.Severity >= model.SevWarn && res.ExitCode < 1 {
				res.Status, res.ExitCode = "warn", 1
			}
		}
	}
	res.Compare = c
	return nil
}

// readGolden reads FILE (an empty set when it does not exist yet).
func readGolden(path string) (goldenFile, error) {
	g := goldenFile{Llmtop: 1}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return g, fmt.Errorf("--golden: %w", err)
	}
	if err := json.Unmarshal(b, &g); err != nil || g.Llmtop != 1 {
		return g, fmt.Errorf("--golden %s: not a golden-answers file from llmtop probe (%v); move it aside or name another file", path, err)
	}
	for i := range g.Runs {
		g.Runs[i] = model.CleanAnswers(g.Runs[i])
	}
	return g, nil
}

// writeGolden replaces FILE atomically (a temporary file renamed over it).
func writeGolden(path string, g goldenFile) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".golden-*")
	if err != nil {
		return fmt.Errorf("--golden: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("--golden: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--golden: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--golden: %w", err)
	}
	return nil
}

// printCompare is the comparison as text.
func printCompare(out io.Writer, c *answerCompare) {
	switch {
	case c.Was == nil:
		fmt.Fprintf(out, "\ngolden answers: the first run kept in %s (%d prompts); the next run is compared with it\n", c.File, len(c.Now.Answers))
		return
	case c.Kind == diagnosis.CompareGolden:
		fmt.Fprintf(out, "\ngolden answers: this run against the one kept at %s (%s)\n", c.Was.Time.Format("2006-01-02 15:04:05"), c.File)
	default:
		fmt.Fprintf(out, "\nreference %s: the same greedy prompts\n", c.Was.Endpoint)
	}
	this, other := "now", "was"
	if c.Kind == diagnosis.CompareReference {
		this, other = "this", "reference"
	}
	for _, d := range c.Diffs {
		switch {
		case d.NotChecked != "":
			fmt.Fprintf(out, "  %q: %s\n", d.Prompt, d.NotChecked)
		case d.Same:
			fmt.Fprintf(out, "  %q: same answer\n", d.Prompt)
		default:
			where := fmt.Sprintf("char %d", d.Char)
			if d.Token.OK {
				where = fmt.Sprintf("token %d (id %d vs %d)", int(d.Token.V), d.TokenA, d.TokenB)
			}
			fmt.Fprintf(out, "  %q: first differs at %s\n    %s: %q\n    %s: %q\n", d.Prompt, where, this, d.A, other, d.B)
		}
	}
}
