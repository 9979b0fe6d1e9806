package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// expfmtParse is the reference: what parseProm did before fastParse.
func expfmtParse(body []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

// sameFamilies says where two parses differ ("" when they do not).
func sameFamilies(a, b map[string]*dto.MetricFamily) string {
	if len(a) != len(b) {
		var an, bn []string
		for k := range a {
			an = append(an, k)
		}
		for k := range b {
			bn = append(bn, k)
		}
		sort.Strings(an)
		sort.Strings(bn)
		return "families " + strings.Join(an, ",") + " vs " + strings.Join(bn, ",")
	}
	for k, fa := range a {
		if !proto.Equal(fa, b[k]) {
			return "family " + k + ":\n" + fa.String() + "\nvs\n" + b[k].String()
		}
	}
	return ""
}

// checkFast holds fastParse to expfmt on one body: when it parses, expfmt
// parses too, into the same families.
func checkFast(t *testing.T, name string, body []byte) bool {
	t.Helper()
	fast, ok := fastParse(body)
	if !ok {
		return false
	}
	ref, err := expfmtParse(body)
	if err != nil {
		t.Fatalf("%s: fastParse accepted what expfmt refuses (%v):\n%q", name, err, body)
	}
	if d := sameFamilies(fast, ref); d != "" {
		t.Fatalf("%s: fastParse and expfmt differ: %s\nbody %q", name, d, body)
	}
	// A session's parse remembers its lines (lineMemo): the same body read
	// again, and read after another body (the vLLM capture, whose lines
	// may share a head with this one's under other types), reads the same.
	warm := func(what string, before ...[]byte) {
		in := newInterner()
		for _, b := range before {
			fastParseIn(b, nil, in)
		}
		again, ok := fastParseIn(body, nil, in)
		if !ok {
			t.Fatalf("%s: the parse %s fell back where a fresh one did not:\n%q", name, what, body)
		}
		if d := sameFamilies(again, ref); d != "" {
			t.Fatalf("%s: the parse %s differs from expfmt: %s\nbody %q", name, what, d, body)
		}
	}
	warm("after itself", body)
	warm("after itself twice", body, body)
	warm("after the vLLM capture", enginetest.Fixture("vllm.txt"))
	return true
}

// Every capture we keep from real engines, and the generated scrapes,
// take the fast path and come out as expfmt reads them: the fast path is
// the one the monitor runs, not a fallback that never fires.
func TestFastParseMatchesExpfmtOnCaptures(t *testing.T) {
	var paths []string
	for _, g := range append(promSeeds, "../gpu/testdata/*.prom", "../../tui/testdata/*metrics*.txt") {
		p, _ := filepath.Glob(g)
		paths = append(paths, p...)
	}
	if len(paths) < 8 {
		t.Fatalf("only %d captures found: %v", len(paths), paths)
	}
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// As the exporter serves it (Datadog keeps its captures without
		// the final newline); a family written in two blocks (Datadog's
		// Ray capture) is refused by both parsers alike, and parses fast
		// once parseProm has dropped the repeated HELP/TYPE lines.
		body = asServed(body)
		if _, err := expfmtParse(body); err != nil {
			if checkFast(t, p, body) {
				t.Errorf("%s: fastParse accepted what expfmt refuses", p)
			}
			body = dropRepeatedMeta(body)
		}
		if !checkFast(t, p, body) {
			t.Errorf("%s: a real capture fell back to expfmt", p)
		}
	}
	for _, n := range []int{1, 50} {
		if !checkFast(t, "genVLLM", genVLLM(n)) {
			t.Errorf("genVLLM(%d) fell back to expfmt", n)
		}
	}
	if !checkFast(t, "vllm fixture", enginetest.Fixture("vllm.txt")) {
		t.Error("vllm fixture fell back")
	}
}

// The corners of the format: each either parses as expfmt does or falls
// back (fast=false), and the ones marked fast must not fall back.
func TestFastParseCorners(t *testing.T) {
	cases := []struct {
		name, body string
		fast       bool
	}{
		{"plain", "# HELP a_total A thing.\n# TYPE a_total counter\na_total 3\n", true},
		{"labels and spaces", "g { x = \"1\" , y=\"2\", } 4.5\n", true},
		{"escapes", "# HELP g Say \\\"hi\\\"\\nnext \\\\ line\n# TYPE g gauge\ng{p=\"C:\\\\x \\\"q\\\" \\n\"} 1\n", true},
		{"timestamp", "# TYPE g gauge\ng 1 1700000000000\n", true},
		{"tabs", "\t# TYPE g gauge\ng\t{a=\"b\"}\t2\n", true},
		{"special values", "# TYPE g gauge\ng{a=\"1\"} NaN\ng{a=\"2\"} +Inf\ng{a=\"3\"} -Inf\ng{a=\"4\"} 1e-3\n", true},
		{"histogram", "# TYPE h histogram\nh_bucket{m=\"a\",le=\"0.1\"} 1\nh_bucket{le=\"+Inf\",m=\"a\"} 2\nh_sum{m=\"a\"} 0.3\nh_count{m=\"a\"} 2\nh_bucket{m=\"b\",le=\"+Inf\"} 5\n", true},
		{"histogram interleaved", "# TYPE h histogram\nh_bucket{m=\"a\",le=\"1\"} 1\nh_bucket{m=\"b\",le=\"1\"} 2\nh_count{m=\"a\"} 1\nh_count{m=\"b\"} 2\n", true},
		{"histogram float counts", "# TYPE h histogram\nh_bucket{le=\"1\"} 1.5\nh_bucket{le=\"+Inf\"} 2\nh_count 2\nh_sum 3\n", true},
		{"summary", "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns{quantile=\"0.99\"} 2\ns_sum 3\ns_count 4\n", true},
		{"untyped buckets", "x_bucket{le=\"1\"} 1\nx_sum 1\nx_count 1\n", true},
		{"le on a gauge is a label", "# TYPE g gauge\ng{le=\"1\"} 1\n", true},
		{"help only", "# HELP nothing No samples.\n", true},
		{"plain comment", "# a comment\n#\n\n# TYPE g gauge\ng 1\n", true},
		{"gaugehistogram", "# TYPE h gaugehistogram\nh_bucket{le=\"1\"} 1\n", true},
		{"unicode label value", "g{model=\"模型 — “q”\"} 1\n", true},

		{"second HELP", "# HELP g a\n# HELP g b\ng 1\n", false},
		{"TYPE after samples", "g 1\n# TYPE g gauge\n", false},
		{"quoted name", "{\"my.metric\", a=\"b\"} 1\n", false},
		{"quoted label name", "g{\"a.b\"=\"c\"} 1\n", false},
		{"NaN bucket bound", "# TYPE h histogram\nh_bucket{le=\"NaN\"} 1\n", false},
		{"negative bucket", "# TYPE h histogram\nh_bucket{le=\"1\"} -1\n", false},
		{"bad escape", "g{a=\"\\q\"} 1\n", false},
		{"duplicate label", "g{a=\"1\",a=\"2\"} 1\n", false},
		{"trailing blank", "g 1 \n", false},
		{"spurious after timestamp", "g 1 2 3\n", false},
		{"hex float", "g 0x1p3\n", false},
		{"underscore float", "g 1_000\n", false},
		{"name then value without blank", "g+1 2\n", false},
		{"histogram base sample", "# TYPE h histogram\nh 1\n", false},
		{"CRLF", "# TYPE g gauge\r\ng 1\r\n", false},
		{"no newline", "g 1", false},
		{"reserved label", "g{__name__=\"x\"} 1\n", false},
		{"bad utf8 value", "g{a=\"\xff\"} 1\n", false},
		{"unknown type", "# TYPE g thing\ng 1\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkFast(t, c.name, []byte(c.body))
			if got != c.fast {
				t.Errorf("fast path %v, want %v", got, c.fast)
			}
			// Whatever path it takes, parseProm's answer is expfmt's.
			_, err := parseProm([]byte(c.body))
			_, refErr := expfmtParse([]byte(c.body))
			// (parseProm refuses more: a body cut mid-line, one that looks like
			// JSON; and it retries a repeated HELP without it.)
			wrapper := notPromText([]byte(c.body)) != nil || c.name == "no newline" || c.name == "second HELP"
			if !wrapper && (err == nil) != (refErr == nil) {
				t.Errorf("parseProm err %v, expfmt err %v", err, refErr)
			}
		})
	}
}

// FuzzFastParse: on any body the fast path accepts, expfmt agrees.
func FuzzFastParse(f *testing.F) {
	addFiles(f, promSeeds...)
	f.Add([]byte("# TYPE h histogram\nh_bucket{m=\"a\",le=\"0.1\"} 1\nh_sum{m=\"a\"} 0.3\nh_count{m=\"a\"} 2\n"))
	f.Add([]byte("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 3\ns_count 4\ng{a=\"\\n\"} 1 17\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFast(t, "fuzz", body)
	})
}

// The two parsers on one real vLLM capture: the ratio is the monitor's
// saving per scrape.
func BenchmarkParseText(b *testing.B) {
	body := enginetest.Fixture("vllm.txt")
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fastParse(body); !ok {
				b.Fatal("fell back")
			}
		}
	})
	b.Run("expfmt", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := expfmtParse(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
