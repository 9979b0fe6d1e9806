package diagnosis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// engineSpelledAllowed are the places in the rules that still spell an
// engine, each with why it has not moved into engines/ yet. The list only
// shrinks: a new rule reads the engine's facts (engines.Spec) and names
// the engine by engines.Name, so the same rule speaks for every engine
// that has the fact. Comments are not checked: they cite where a fact was
// read (vLLM's source, SGLang's issue tracker).
var engineSpelledAllowed = map[string]string{
	"input.go:compares with model.Triton": "Triton folds into TensorRT-LLM here: the one place the rules map an identity, not a fact a rule judges",
}

// TestRulesSpellNoEngine: what llmtop knows about an engine lives in its
// file under engines/, which every layer reads. A diagnosis rule reads the
// engine's facts, not its identity: no string in diagnosis/*.go (tests
// aside) names an engine, and no code compares an endpoint's engine with
// one engine's constant (ep.Engine() == model.VLLM, case model.LlamaCpp).
func TestRulesSpellNoEngine(t *testing.T) {
	var words []string
	for _, s := range engines.All() {
		words = append(words, regexp.QuoteMeta(s.Name))
		for _, a := range s.Aliases {
			words = append(words, regexp.QuoteMeta(a))
		}
	}
	words = append(words, "TRT-LLM")
	names := regexp.MustCompile(`(` + strings.Join(words, "|") + `)`)
	consts := map[string]bool{}
	for _, id := range []string{"VLLM", "SGLang", "TGI", "LlamaCpp", "TRTLLM", "Triton", "Ollama", "RayServe", "KServe", "NIM", "SGLangGateway"} {
		consts[id] = true
	}
	kinds := map[string]bool{}
	for _, l := range engines.LogLines() {
		kinds[l.ID] = true
	}
	isConst := func(x ast.Expr) string {
		if sel, ok := x.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "model" && consts[sel.Sel.Name] {
				return "model." + sel.Sel.Name
			}
		}
		return ""
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		report := func(n ast.Node, what string) {
			found = append(found, f+":"+what)
			if _, ok := engineSpelledAllowed[f+":"+what]; !ok {
				t.Errorf("%s: %s", fset.Position(n.Pos()), what)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					s = n.Value
				}
				if m := names.FindString(s); m != "" {
					report(n, "names "+strconv.Quote(m)+" in "+short(s))
				}
				if kinds[s] && engines.LogEngine(s) != model.Unknown {
					report(n, "spells the log line "+strconv.Quote(s)+" of one engine")
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, x := range []ast.Expr{n.X, n.Y} {
					if c := isConst(x); c != "" {
						report(n, "compares with "+c)
					}
				}
			case *ast.KeyValueExpr:
				if c := isConst(n.Key); c != "" {
					report(n, "keys a value by "+c)
				}
			case *ast.CaseClause:
				for _, x := range n.List {
					if c := isConst(x); c != "" {
						report(x, "case "+c)
					}
				}
			}
			return true
		})
	}
	seen := map[string]bool{}
	for _, k := range found {
		seen[k] = true
	}
	var stale []string
	for k := range engineSpelledAllowed {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("engineSpelledAllowed lists %q, which no rule spells any more: take it off", k)
	}
}

// short is the start of a string, for a test's message.
func short(s string) string {
	if len(s) > 60 {
		return strconv.Quote(s[:60] + "…")
	}
	return strconv.Quote(s)
}
