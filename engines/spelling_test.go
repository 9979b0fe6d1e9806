package engines

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Issue 30: what llmtop knows about an engine lives in its file here. This
// lint reads every Go file of the project outside engines/ and testdata
// (tests excluded: a test may spell what it feeds an adapter) and fails
// when a string in it spells an engine's metric name or one of the flags
// its Levers name.

// impersonators are the files whose job is to be vLLM from the outside:
// the simulated engine behind `llmtop demo`, `llmtop sim` and the scenario
// tests writes vLLM's exposition, its log lines and its command line the
// way vLLM does. Like testdata, they must spell vLLM's names themselves:
// read from engines/, a misspelt name there would be misspelt in the
// stand-in too and every test against the stand-in would still pass.
var impersonators = []string{"sim/", "cmd/llmtop/sim.go"}

func impersonates(rel string) bool {
	for _, p := range impersonators {
		if rel == p || strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

var (
	nameTok = regexp.MustCompile(`[a-zA-Z_][a-zA-Z0-9_:]*`)
	// a long flag, an OLLAMA_ variable, or a short flag of two to four
	// letters (llama-server's -np, -kvu: one letter, -c, is too common
	// a word to tell)
	flagTok = regexp.MustCompile(`--[a-z][a-z0-9_-]*[a-z0-9]|\bOLLAMA_[A-Z_]+\b|(?:^|[\s(])-[a-z]{2,4}\b`)
)

// flagsIn are the flags a text names.
func flagsIn(s string, n int) []string {
	out := flagTok.FindAllString(s, n)
	for i, f := range out {
		out[i] = strings.TrimLeft(f, " \t\n(")
	}
	return out
}

// registered are the metric names and flags the engine files spell.
func registered(t *testing.T) (names, flags map[string]bool) {
	names, flags = map[string]bool{}, map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, s := range literals(t, fset, f) {
			for _, n := range nameTok.FindAllString(s, -1) {
				if ByMetricName(n) != nil && len(n) > len(ByMetricName(n).Prefix()) {
					names[n] = true
				}
			}
		}
	}
	// Log line kinds carry their engine's prefix too (tgi_warmup): they are
	// names of llmtop's catalogue, not metric names.
	for _, l := range LogLines() {
		delete(names, l.ID)
	}
	// The flags the advice names (not the hints, which name llmtop's own
	// --metrics-path beside the engines').
	for _, s := range All() {
		l := s.Levers
		for _, x := range []string{l.Cap, l.MaxLen, l.MemFraction, l.FP8KV.Change, l.Chunked.Change, l.DataParallel, l.Front.Change,
			VLLMDisableLogStats, VLLMNoChunkedPrefill, VLLMChunkedV0} {
			for _, fl := range flagsIn(x, -1) {
				flags[fl] = true
			}
		}
	}
	// The other levers and the log lines' own fixes: the advice's
	// vocabulary too.
	for _, s := range All() {
		l := s.Levers
		texts := []string{l.StepBudget, l.NoGraphs, l.GraphSizes, l.ActivationRoom.Change, l.ShrinkKV.Change, l.GrowContext.Change, l.Offload.Change}
		texts = append(texts, l.Quantize.Change, l.HostBuffers, l.CapPool.Change, l.EnableMetrics.Change,
			l.Speculate.Change, l.SpeculateLess.Change, l.Warmup.Change, l.Threads.Change,
			l.Sampling.Change, l.Template.Change, l.Tokenizer.Change, l.Stop.Change, l.RepeatPenalty)
		texts = append(append(texts, l.MoreGPUs...), l.TensorParallel...)
		for _, a := range s.FlagAliases {
			texts = append(texts, a...)
		}
		if l.Prefill != nil {
			texts = append(texts, l.Prefill(4096).Change)
		}
		for _, x := range texts {
			for _, fl := range flagsIn(x, -1) {
				flags[fl] = true
			}
		}
	}
	for _, line := range LogLines() {
		for _, c := range line.Fix {
			for _, fl := range flagsIn(c.Change, -1) {
				flags[fl] = true
			}
		}
	}
	// llmtop's own flags, which an engine shares (trtllm-serve's --config,
	// llama-server's --model) or its advice names (attach the log with
	// --log or --docker, move the route with --metrics-path).
	for _, own := range []string{"--config", "--model", "--log", "--docker", "--metrics-path"} {
		delete(flags, own)
	}
	// What is built rather than spelled (a re-exporter's prefixed names).
	for _, s := range All() {
		for _, m := range s.Metrics {
			for _, x := range append(append([]string{}, m.Names...), m.Derived...) {
				for _, n := range nameTok.FindAllString(x, -1) {
					if ByMetricName(n) != nil {
						names[n] = true
					}
				}
			}
		}
	}
	return names, flags
}

func literals(t *testing.T, fset *token.FileSet, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
			if s, err := strconv.Unquote(l.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// colonFamily is an engine family whose prefix ends in a colon: no other
// word starts so, so any such token is a metric name, listed or not.
func colonFamily(tok string) bool {
	s := ByMetricName(tok)
	return s != nil && strings.HasSuffix(s.Prefix(), ":") && len(tok) > len(s.Prefix())
}

func TestNoEngineMetricOrFlagIsSpelledOutsideItsFile(t *testing.T) {
	names, flags := registered(t)
	if len(names) < 120 || len(flags) < 15 {
		t.Fatalf("the engine files spell %d metric names and %d flags: the lint reads them wrong", len(names), len(flags))
	}
	fset := token.NewFileSet()
	got := map[string][]string{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", p)
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "engines", ".git", "node_modules", "vendor":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		for _, s := range literals(t, fset, p) {
			for _, n := range nameTok.FindAllString(s, -1) {
				if names[n] || colonFamily(n) {
					got[rel] = append(got[rel], n)
				}
			}
			for _, fl := range flagsIn(s, -1) {
				if flags[fl] {
					got[rel] = append(got[rel], fl)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(got))
	for f := range got {
		files = append(files, f)
	}
	sort.Strings(files)
	stand := 0
	for _, f := range files {
		if impersonates(f) {
			stand += len(got[f])
			continue
		}
		t.Errorf("%s spells %d engine metric names or flags: %s — read them from engines/ (the engine's file)",
			f, len(got[f]), strings.Join(got[f], ", "))
	}
	// The stand-in must still be one: a list of exceptions that excuses
	// nothing is a way around the lint.
	if stand < 20 {
		t.Errorf("the simulated vLLM spells only %d of vLLM's names and flags: drop it from impersonators", stand)
	}
}
