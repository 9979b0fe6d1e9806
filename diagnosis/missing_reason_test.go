package diagnosis

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// staticText is what a string expression says with its variable parts
// as "X": a literal, literals joined with +, fmt.Sprintf's format, and
// notExposed's words. ok is false for an expression with no text of its
// own (a variable passed on).
func staticText(x ast.Expr) (string, bool) {
	switch v := x.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			return s, err == nil
		}
	case *ast.BinaryExpr:
		a, okA := staticText(v.X)
		b, okB := staticText(v.Y)
		if !okA {
			a = "X"
		}
		if !okB {
			b = "X"
		}
		return a + b, okA || okB
	case *ast.CallExpr:
		if sel, ok := v.Fun.(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Sprintf":
				return staticText(v.Args[0])
			case "notExposed":
				return "X (vLLM does not expose it)", true
			}
		}
	}
	return "", false
}

// lackTexts is every not-checked text written in the files matched by
// glob: the second argument of each e.lack(…) and each string appended
// to a NotChecked list.
func lackTexts(t *testing.T, glob string) []string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", glob, err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var arg ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if fn.Sel.Name == "lack" && len(call.Args) == 2 {
					arg = call.Args[1]
				}
			case *ast.Ident:
				if fn.Name == "append" && len(call.Args) == 2 {
					if sel, ok := call.Args[0].(*ast.SelectorExpr); ok && sel.Sel.Name == "NotChecked" {
						arg = call.Args[1]
					}
				}
			}
			if arg != nil {
				if s, ok := staticText(arg); ok {
					out = append(out, s)
				}
			}
			return true
		})
	}
	return out
}

// Every not-checked line the rules and the host look write has a code
// other than "other": a new one without a pattern fails here, before its
// checks read "other" in llmtop_check_missing{reason}.
func TestEveryLackHasAReason(t *testing.T) {
	texts := append(lackTexts(t, "*.go"), lackTexts(t, "../sources/host/*.go")...)
	t.Logf("%d not-checked texts", len(texts))
	if len(texts) < 40 {
		t.Fatalf("found %d not-checked texts: the scan misses the rules' e.lack calls", len(texts))
	}
	codes := map[string]bool{}
	for _, r := range MissingReasons {
		codes[r.Code] = true
	}
	for _, s := range texts {
		got := MissingReason("http://10.0.0.1:8000: " + s)
		if got == "other" || !codes[got] {
			t.Errorf("%q: reason %q", s, got)
		}
	}
	for _, nn := range needNames {
		if !codes[nn.code] || MissingReason(nn.name) != nn.code {
			t.Errorf("%q: reason %q, want %q", nn.name, MissingReason(nn.name), nn.code)
		}
	}
}

// What a reason says of a line, by what a person reading it would file it
// under; outside text in it (a path, an error, a grouped fleet's names)
// never becomes the code.
func TestMissingReason(t *testing.T) {
	for line, want := range map[string]string{
		"engine log (attach it with --log, --log-cmd, --docker, --journal or --kube)":                                      "no_log",
		"http://a:8000: KV-cache usage (vLLM does not expose it)":                                                          "not_exposed",
		"http://a:8000: TTFT (the newest scrape failed: refused)":                                                          "scrape_failed",
		"all 2000 endpoints (http://10.0.0.1:8000, http://10.0.0.2:8000 and 1998 more): health (no health route answered)": "no_health",
		"http://a:8000: TTFT (no request got its first token in the window)":                                               "too_little_data",
		"http://a:8000: host CPU: not checked, because /proc/stat is not readable: permission denied":                      "no_host",
		"http://a:8000: behaviour probe: determinism: the server answered 500 <script>":                                    "probe",
		"http://a:8000: the weights against GPU memory (no GPU memory reading; NVML is not readable here)":                 "no_gpu",
		"http://a:8000: the number formats against the GPU (the engine's dtype is not known: attach its log)":              "unknown_config",
		"something no rule writes": "other",
	} {
		if got := MissingReason(line); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
	var codes []string
	for _, r := range MissingReasons {
		codes = append(codes, r.Code)
	}
	if !slices.Contains(codes, "other") || len(codes) > 20 {
		t.Errorf("codes %v: a small set ending in other", codes)
	}
}
