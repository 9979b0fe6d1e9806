package tui

import (
	"fmt"
	"strings"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// The behaviour probe's result as text: the overlay's view and `llmtop
// probe`'s report share it.

// ProbeLines is a probe result as plain text lines (the overlay's view and
// `llmtop probe`'s output), with the findings' titles and changes when fs
// is not nil. Everything in it from the server is cleaned.
func ProbeLines(b model.Behaviour, fs []diagnosis.Finding) []string {
	b = model.CleanBehaviour(b)
	f := b.Identity
	out := []string{fmt.Sprintf("%s · %s · model %s%s", b.Endpoint, engineLabel(b.Engine, f.EngineVersion), f.Model, orNone(" · revision ", f.Revision)),
		fmt.Sprintf("  max context %s · template %s · tokenizer %s · generation defaults %s · took %.1f s",
			intOr(f.MaxContext), orDash(f.TemplateHash), orDash(f.TokenizerHash), orDash(f.GenConfigHash), b.TookS)}
	if b.Partial != "" {
		out = append(out, "PARTIAL: "+b.Partial)
	}
	d := b.Determinism
	switch {
	case d.NotChecked != "":
		out = append(out, "determinism    "+d.NotChecked)
	case d.Identical:
		out = append(out, "determinism    ok: two identical requests at temperature 0 (seed 1234) answered the same: "+quoted(d.A))
	default:
		at := fmt.Sprintf("byte %d", d.DivergeChar)
		if d.DivergeToken.OK {
			at += fmt.Sprintf(", token %d", int(d.DivergeToken.V))
		}
		out = append(out, "determinism    DIFFERS at "+at+":", "                 1st "+quoted(d.A), "                 2nd "+quoted(d.B))
	}
	t := b.Template
	switch {
	case t.NotChecked != "":
		out = append(out, "chat template  "+t.NotChecked)
	default:
		verdict := "has its special tokens"
		if !t.Special {
			verdict = "NO SPECIAL TOKENS"
		}
		fam := "family unknown"
		if t.Family != "" {
			fam = t.Family + " (" + strings.Join(t.Expected, " ") + ")"
		}
		what := "renders"
		if t.IsSource {
			what = "template source"
		}
		out = append(out, fmt.Sprintf("chat template  %s, %s · via %s · %d token ids", verdict, fam, t.Route, len(t.TokenIDs)),
			"                 "+what+": "+quoted(t.Rendered))
	}
	if len(t.Lacks) > 0 {
		out = append(out, "                 "+engineLabel(b.Engine, "")+" lacks "+strings.Join(t.Lacks, ", "))
	}
	switch {
	case t.CompareNotChecked != "":
		out = append(out, "chat vs compl. "+t.CompareNotChecked)
	case t.SameAnswer:
		out = append(out, "chat vs compl. ok: the rendered prompt on /v1/completions answers as chat did")
	case t.Compared:
		out = append(out, "chat vs compl. DIFFER:", "                 chat "+quoted(t.ChatAnswer), "                 compl "+quoted(t.CompletionAnswer))
	}
	if b.Tokens.NotChecked != "" {
		out = append(out, "tokenization   "+b.Tokens.NotChecked)
	}
	for i, s := range b.Tokens.Samples {
		lead := "               "
		if i == 0 {
			lead = "tokenization   "
		}
		out = append(out, fmt.Sprintf("%s%-13s %3d tokens for %3d chars (estimate ≈%.0f, %.1f×)", lead, s.Name, s.Tokens, s.Runes, s.Expected, s.Ratio))
	}
	st := b.Stop
	if st.NotChecked != "" {
		out = append(out, "stop/length    "+st.NotChecked)
	} else {
		out = append(out, fmt.Sprintf("stop/length    one-word question, max_tokens %d: finish %s after %s tokens: %s", st.MaxTokens, orDash(st.Finish), optInt(st.Tokens), quoted(st.Answer)))
	}
	stops := "stop tokens: " + orDash(strings.Join(st.StopTokens, ", "))
	var defs []string
	for _, k := range sortedMapKeys(st.Defaults) {
		defs = append(defs, k+"="+st.Defaults[k])
	}
	out = append(out, "                 "+stops+" · defaults: "+orDash(strings.Join(defs, " "))+" ("+st.DefaultsFrom+")")
	r := b.Repetition
	if r.NotChecked != "" {
		out = append(out, "repetition     "+r.NotChecked)
	} else {
		line := fmt.Sprintf("repetition     unique %s %.0f %% of %d", r.Unit, r.UniqueRatio*100, r.Total)
		if r.NGram != "" {
			line += fmt.Sprintf(" · %q ×%d", r.NGram, r.NGramCount)
		}
		out = append(out, line)
	}
	if fs == nil {
		return out // the caller writes the findings its own way
	}
	out = append(out, "")
	if len(fs) == 0 {
		out = append(out, "findings: none from the checks that ran")
	}
	for _, x := range fs {
		out = append(out, fmt.Sprintf("[%s] %s", strings.ToUpper(x.Severity.String()), x.Title))
		for _, a := range x.Actions {
			out = append(out, "    → "+a.Change)
		}
	}
	return out
}

// ProbeRawLines lists the probe's requests and responses (keys redacted).
func ProbeRawLines(b model.Behaviour) []string {
	b = model.CleanBehaviour(b)
	if len(b.Raw) == 0 {
		return []string{"no raw exchanges kept"}
	}
	var out []string
	for _, x := range b.Raw {
		st := fmt.Sprint(x.Status)
		if x.Error != "" {
			st += " " + x.Error
		}
		out = append(out, fmt.Sprintf("[%s] %s %s → %s (%.0f ms)", x.Check, x.Method, x.Route, st, x.Ms))
		if x.Request != "" {
			out = append(out, "  > "+oneLineText(x.Request))
		}
		if x.Response != "" {
			out = append(out, "  < "+oneLineText(x.Response))
		}
	}
	return out
}

func engineLabel(e model.Engine, version string) string {
	s := string(e)
	if s == "" {
		s = "unknown engine"
	}
	if version != "" {
		s += " " + version
	}
	return s
}

func quoted(s string) string { return "“" + oneLineText(s) + "”" }

func oneLineText(s string) string {
	s = strings.NewReplacer("\n", "⏎", "\r", "", "\t", " ").Replace(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "--"
	}
	return s
}

func orNone(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func intOr(n int) string {
	if n <= 0 {
		return "--"
	}
	return fmt.Sprint(n)
}

func optInt(o model.Opt) string {
	if !o.OK {
		return "--"
	}
	return fmt.Sprint(int(o.V))
}

func sortedMapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}
