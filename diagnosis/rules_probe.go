package diagnosis

import (
	"fmt"
	"strings"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The behaviour probe's judgment: what `llmtop probe` (or `o`) saw, turned
// into behaviour findings with each engine's levers. The probe is a one-off
// measurement of the current run, so its findings hold at once and last
// until the run ends or a new probe says otherwise.

func init() {
	register(rule{id: "probe", checks: "the behaviour probe (o): deterministic at temperature 0, chat template with its special tokens, tokenizer, stop tokens, repetition",
		hold: holdNone, eval: ruleProbe})
}

// Thresholds of the probe's checks.
const (
	// tokenRatioFlag: a text costing this many times the estimate is
	// falling back to bytes or mis-encoded.
	tokenRatioFlag = 2.5
	// repetition: an answer of at least repMinUnits whose unique-token
	// ratio is under repUniqueFlag, or whose most repeated 3-gram comes
	// back repNGramFlag times, loops.
	repMinUnits   = 20
	repUniqueFlag = 0.3
	repNGramFlag  = 4
)

func ruleProbe(e *env) []Finding {
	var out []Finding
	probed := false
	for ep := range each(e.in.Endpoints) {
		if len(ep.Runs) == 0 {
			continue
		}
		b := ep.Runs[len(ep.Runs)-1].Behaviour
		if b == nil {
			continue
		}
		probed = true
		for _, why := range ProbeNotChecked(*b) {
			e.lack(ep, "behaviour probe: "+why)
		}
		for _, f := range ProbeFindings(*b) {
			f.Endpoint = ep.URL
			out = append(out, f)
		}
	}
	if !probed {
		// Nothing probed is nothing checked, not "answers fine".
		e.lacks = append(e.lacks, lack{what: "behaviour probe: not run in this run (press o, or llmtop probe URL)"})
	}
	return out
}

// ProbeNotChecked lists the probe's checks that could not run, each with
// its reason.
func ProbeNotChecked(b model.Behaviour) []string {
	var out []string
	add := func(what, why string) {
		if why != "" {
			out = append(out, what+" "+strings.TrimPrefix(why, "not checked: "))
		}
	}
	add("determinism:", b.Determinism.NotChecked)
	add("chat template:", b.Template.NotChecked)
	add("chat vs completions:", b.Template.CompareNotChecked)
	add("tokenization:", b.Tokens.NotChecked)
	add("stop/length:", b.Stop.NotChecked)
	add("repetition:", b.Repetition.NotChecked)
	return out
}

// ProbeFindings judges one probe result. Pure: the CLI calls it directly,
// the monitor through the rule on the current run's result.
func ProbeFindings(b model.Behaviour) []Finding {
	eng := b.Engine
	src := "behaviour probe"
	var out []Finding
	add := func(id string, sev model.Severity, title, cause string, ev []Evidence, acts []Action) {
		out = append(out, Finding{ID: id, Endpoint: b.Endpoint, Category: Behaviour, Severity: sev, Title: title,
			Evidence: ev, Cause: cause, Actions: acts, Opened: b.Time})
	}
	if d := b.Determinism; d.NotChecked == "" && !d.Identical {
		at := fmt.Sprintf("byte %d", d.DivergeChar)
		if d.DivergeToken.OK {
			at += fmt.Sprintf(", token %d", int(d.DivergeToken.V))
		}
		add("probe_nondeterministic", model.SevWarn, "same request at temperature 0 answered differently (from "+at+")",
			"temperature 0 should decode greedily: two identical requests that diverge mean the sampler ignores the request's temperature (a server-side override or a proxy rewriting the body), or numerics that change with the batch (another request was running)",
			[]Evidence{{Text: "two identical chat requests, temperature 0, seed 1234, diverge at " + at, Source: src + " /v1/chat/completions"},
				{Text: "first: " + quote(d.A), Source: src}, {Text: "second: " + quote(d.B), Source: src}},
			nondeterminismActions(eng))
	}
	t := b.Template
	if t.NotChecked == "" && !t.Special {
		what := "any chat marker"
		if t.Family != "" {
			what = t.Family + "'s " + strings.Join(t.Expected, " ")
		}
		shown := "the prompt it renders"
		if t.IsSource {
			shown = "its template"
		}
		add("probe_template", model.SevWarn, "chat template renders no special tokens (expected "+what+")",
			"the server wraps chat messages without the turn markers the model was trained on, so it sees plain text and answers it as plain text: rambling, echoing, never ending its turn",
			[]Evidence{{Text: shown + " (" + t.Route + "): " + quote(t.Rendered), Source: src + " " + t.Route}},
			templateActions(eng))
	}
	if t.Compared && !t.SameAnswer {
		add("probe_route_mismatch", model.SevWarn, "chat and completions answer the same rendered prompt differently",
			"the chat route does not send the model the prompt the template route shows (a different template, or special tokens added twice): what the tokenize route says is not what the model gets",
			[]Evidence{{Text: "chat: " + quote(t.ChatAnswer), Source: src + " /v1/chat/completions"},
				{Text: "completions with the rendered prompt: " + quote(t.CompletionAnswer), Source: src + " /v1/completions"}},
			templateActions(eng))
	}
	for _, s := range b.Tokens.Samples {
		if s.Ratio < tokenRatioFlag {
			continue
		}
		// Vocabularies without CJK or typography fall back to bytes by
		// design: news, not a fault; plain English never should.
		sev, id := model.SevInfo, "probe_tokenizer_"+strings.ToLower(strings.Fields(s.Name)[0])
		if s.Name == "plain English" {
			sev, id = model.SevWarn, "probe_tokenizer"
		}
		add(id, sev, fmt.Sprintf("tokenizer splits %s text into %.1f× the expected tokens", s.Name, s.Ratio),
			"the tokenizer lacks these characters and falls back to bytes (some vocabularies do, by design), or it is not the model's own tokenizer: every such text costs more context and the model reads it badly",
			[]Evidence{{Text: fmt.Sprintf("%d tokens for %d characters (estimate ≈%.0f: ~4 characters per ASCII token, 1 per other character): %s", s.Tokens, s.Runes, s.Expected, quote(s.Text)), Source: src + " " + b.Tokens.Route}},
			tokenizerActions(eng))
	}
	if s := b.Stop; s.NotChecked == "" && s.Finish == "length" {
		ev := []Evidence{{Text: fmt.Sprintf("a one-word question ran to max_tokens %d (finish_reason length): %s", s.MaxTokens, quote(s.Answer)), Source: src + " /v1/chat/completions"}}
		if len(s.StopTokens) > 0 {
			ev = append(ev, Evidence{Text: "stop tokens the server applies: " + strings.Join(s.StopTokens, ", "), Source: src + " " + s.DefaultsFrom})
		} else {
			ev = append(ev, Evidence{Text: "stop tokens the server applies: " + nonEmpty(s.DefaultsFrom, "not known"), Source: src})
		}
		add("probe_runs_to_length", model.SevWarn, fmt.Sprintf("a short answer ran to max_tokens (%d)", s.MaxTokens),
			"the model never emitted a token the server stops on (a missing or wrong EOS/stop token, or a template that never lets it end its turn): every answer runs to the cap, ballooning latency and KV cache",
			ev, stopActions(eng))
	}
	if r := b.Repetition; r.NotChecked == "" && r.Total >= repMinUnits && (r.UniqueRatio < repUniqueFlag || r.NGramCount >= repNGramFlag) {
		ev := []Evidence{{Text: fmt.Sprintf("unique %s %s of %d", r.Unit, pct(r.UniqueRatio), r.Total), Source: src}}
		if r.NGram != "" {
			ev = append(ev, Evidence{Text: fmt.Sprintf("%q repeated %d times", r.NGram, r.NGramCount), Source: src})
		}
		add("probe_repetition", model.SevWarn, "the answer repeats itself", "greedy decoding without a repetition penalty loops once the model is unsure; a wrong template or stop token makes it worse",
			ev, []Action{{Change: samplingChange(eng), Why: "penalises tokens already generated", TradeOff: "slightly different outputs"}})
	}
	if b.Partial != "" {
		add("probe_partial", model.SevInfo, "behaviour probe stopped early", "the endpoint answered too slowly for the probe's budget",
			[]Evidence{{Text: b.Partial, Source: src}},
			[]Action{{Change: "probe again when the endpoint is idle (llmtop probe URL)", Why: "checks that did not run say nothing either way", TradeOff: "none"}})
	}
	return out
}

func quote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return "“" + s + "”"
}

func nondeterminismActions(eng model.Engine) []Action {
	one := Action{Change: "repeat the repro with nothing else running: if it is then stable, the drift comes from batching (numerics change with batch size), not from the sampler", Why: "tells a sampling bug from batch non-determinism", TradeOff: "none"}
	return append(changes(levers(eng).Sampling), one)
}

func templateActions(eng model.Engine) []Action {
	return forEngine(eng, byEngine(func(l engines.Levers) engines.Change { return l.Template }))
}

func tokenizerActions(eng model.Engine) []Action {
	return forEngine(eng, byEngine(func(l engines.Levers) engines.Change { return l.Tokenizer }))
}

func stopActions(eng model.Engine) []Action {
	acts := forEngine(eng, byEngine(func(l engines.Levers) engines.Change { return l.Stop }))
	return append(acts, Action{Change: "if answers are only cut mid-sentence, raise the clients' max_tokens", Why: "the cap is below the answer's length", TradeOff: "longer requests, more KV per request"})
}

func samplingChange(eng model.Engine) string {
	if p := levers(eng).RepeatPenalty; p != "" {
		return p
	}
	return "repetition_penalty 1.1 or presence_penalty 0.5 per request (or in the model's generation_config.json)"
}

// behaviourDiff names the fingerprints that changed between two runs'
// probes: a new template, tokenizer or set of generation defaults is a
// cause for what the restart changed. Unknown on either side is no change.
func behaviourDiff(a, b *model.Behaviour) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	for _, x := range []struct{ name, before, after string }{
		{"chat template", a.Identity.TemplateHash, b.Identity.TemplateHash},
		{"tokenizer", a.Identity.TokenizerHash, b.Identity.TokenizerHash},
		{"generation defaults", a.Identity.GenConfigHash, b.Identity.GenConfigHash},
		{"model revision", a.Identity.Revision, b.Identity.Revision},
	} {
		if x.before != "" && x.after != "" && x.before != x.after {
			out = append(out, x.name+" "+x.before+" → "+x.after+" (behaviour probe)")
		}
	}
	return append(out, goldenDiff(a.Golden, b.Golden)...)
}

// goldenDiff says which of the golden prompts a run answered otherwise
// than the run before it (greedy answers: the same build answers the
// same), with where the first changed answer parts.
func goldenDiff(a, b []model.Answer) []string {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	ds := model.DiffAnswers(model.AnswerSet{Answers: a}, model.AnswerSet{Answers: b})
	changed, compared := 0, 0
	var first *model.AnswerDiff
	for i := range ds {
		if ds[i].NotChecked != "" {
			continue
		}
		compared++
		if !ds[i].Same {
			changed++
			if first == nil {
				first = &ds[i]
			}
		}
	}
	if changed == 0 {
		return nil
	}
	where := fmt.Sprintf("from byte %d", first.Char)
	if first.Token.OK {
		where = fmt.Sprintf("from token %d", int(first.Token.V))
	}
	return []string{fmt.Sprintf("golden answers: %d of %d changed (behaviour probe); first %q %s: %q → %q",
		changed, compared, clipText(first.Prompt, 40), where, clipText(first.A, 30), clipText(first.B, 30))}
}

// clipText cuts s to n runes with an ellipsis.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
