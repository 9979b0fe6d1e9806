package diagnosis

import (
	"fmt"
	"strings"

	"github.com/llmtop/llmtop/model"
)

// Answer comparisons (`llmtop probe --reference URL2`, `--golden FILE`):
// the same greedy prompts asked of two endpoints, or of one endpoint now
// and at an earlier run. Greedy answers to these prompts have one right
// continuation: where they part is where the model, template, tokenizer
// or kernels differ.

// Comparison kinds.
const (
	CompareReference = "reference"
	CompareGolden    = "golden"
)

// AnswerFindings judges a comparison of now against was (the reference
// endpoint, or the golden run): one finding naming every prompt whose
// answer differs, where it first differs, and what else differs in the
// identity of what answered. None when every compared answer is the same.
func AnswerFindings(kind string, now, was model.AnswerSet, diffs []model.AnswerDiff) []Finding {
	var ev []Evidence
	n := 0
	for _, d := range diffs {
		if d.Same || d.NotChecked != "" {
			continue
		}
		n++
		where := fmt.Sprintf("char %d", d.Char)
		if d.Token.OK {
			where = fmt.Sprintf("token %d (id %s vs %s), %s", int(d.Token.V), tokenID(d.TokenA), tokenID(d.TokenB), where)
		}
		ev = append(ev, Evidence{Text: fmt.Sprintf("%q: first differs at %s: %q vs %q", d.Prompt, where, d.A, d.B), Source: "probe answers"})
	}
	if n == 0 {
		return nil
	}
	if id := identityDiff(now.Identity, was.Identity); id != "" {
		ev = append(ev, Evidence{Text: id, Source: "probe identity"})
	}
	f := Finding{Endpoint: now.Endpoint, Category: Behaviour, Severity: model.SevWarn, Evidence: ev}
	switch kind {
	case CompareGolden:
		f.ID = "probe_golden_changed"
		f.Title = fmt.Sprintf("%d of %d golden answers changed since %s", n, len(diffs), was.Time.Format("2006-01-02 15:04"))
		f.Cause = "the same greedy prompts answer differently than on the kept run: a new model revision, chat template, tokenizer, engine version or kernels (the identity lines say which changed)"
		f.Actions = []Action{{Change: "compare the identity fingerprints (template, tokenizer, version) of the two runs and read the answers: a changed template or tokenizer is a regression; a kernel change may be benign",
			Why: "a release that changes greedy answers changes what users get", TradeOff: "none"},
			{Change: "when the change is intended, keep the new answers as the golden ones (move the file aside and run again)", Why: "the next release is then compared with this one", TradeOff: "none"}}
	default:
		f.ID = "probe_reference_differs"
		f.Title = fmt.Sprintf("%d of %d greedy answers differ from the reference %s", n, len(diffs), was.Endpoint)
		f.Cause = "the same greedy prompts answer differently on the two endpoints: a different model revision, chat template, tokenizer, dtype or kernels"
		f.Actions = []Action{{Change: "compare the chat templates and tokenizers of the two (llmtop probe on each shows their fingerprints), then the dtype and quantization",
			Why: "the first differing token shows where their computations part", TradeOff: "none"}}
	}
	return []Finding{f}
}

func tokenID(id int) string {
	if id < 0 {
		return "(ended)"
	}
	return fmt.Sprint(id)
}

// identityDiff says which fingerprints differ ("" when none known does).
func identityDiff(a, b model.Fingerprint) string {
	var out []string
	for _, x := range []struct{ what, a, b string }{
		{"model", a.Model, b.Model}, {"revision", a.Revision, b.Revision}, {"engine version", a.EngineVersion, b.EngineVersion},
		{"chat template", a.TemplateHash, b.TemplateHash}, {"tokenizer", a.TokenizerHash, b.TokenizerHash}, {"generation defaults", a.GenConfigHash, b.GenConfigHash},
	} {
		if x.a != "" && x.b != "" && x.a != x.b {
			out = append(out, fmt.Sprintf("%s %s vs %s", x.what, x.a, x.b))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "differs: " + strings.Join(out, "; ")
}
