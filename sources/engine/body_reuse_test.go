package engine

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"sort"
	"testing"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/engine/enginetest"
)

// famsText is families as text, in name order.
func famsText(f families) string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintln(&b, f[n].String())
	}
	return b.String()
}

// A scrape's body is read into the last one's array (session.body), so
// nothing parsed may keep a byte of it: every real capture's families are
// the same after their body is overwritten, and a steady scrape reads into
// the array the last one left.
func TestParsedKeepsNothingOfTheBody(t *testing.T) {
	for _, f := range []string{"vllm.txt", "sglang.txt", "tgi.txt", "llamacpp.txt", "trtllm.txt", "triton.txt"} {
		raw, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, skip := range []func(string) bool{nil, func(string) bool { return false }} {
			body := bytes.Clone(raw)
			fams, err := parsePromSkip(body, skip)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			want := famsText(fams)
			for i := range body {
				body[i] = 'x'
			}
			if got := famsText(fams); got != want {
				t.Errorf("%s: families changed with their body's bytes", f)
			}
		}
	}
	srv := httptest.NewServer(enginetest.New(model.VLLM))
	defer srv.Close()
	s := newSession(Config{URL: srv.URL})
	for range 3 {
		if sc := s.scrape(context.Background()); sc.Err != "" {
			t.Fatal(sc.Err)
		}
	}
	if cap(s.body) == 0 {
		t.Fatal("no body kept for the next scrape")
	}
	before := &s.body[:1][0]
	if sc := s.scrape(context.Background()); sc.Err != "" {
		t.Fatal(sc.Err)
	}
	if &s.body[:1][0] != before {
		t.Error("a steady scrape read its body into a new array")
	}
}

// A session's parses share their strings: the second parse of a capture
// points at the first's names and values (not allocated again) and reads
// the same families as a fresh parse; a string the last parse did not see
// is forgotten.
func TestSteadyParseReusesTheLastStrings(t *testing.T) {
	raw, err := os.ReadFile("testdata/vllm.txt")
	if err != nil {
		t.Fatal(err)
	}
	in := newInterner()
	first, err := parsePromIn(raw, nil, in)
	if err != nil {
		t.Fatal(err)
	}
	second, err := parsePromIn(bytes.Clone(raw), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := parsePromSkip(raw, nil)
	if famsText(second) != famsText(fresh) || famsText(first) != famsText(fresh) {
		t.Fatal("an interned parse reads other families than a fresh one")
	}
	n := 0
	for name, f := range second {
		if f.Name != first[name].Name || (f.Help != nil && f.Help != first[name].Help) {
			t.Errorf("%s: the second parse allocated its name or help again", name)
		}
		for i, m := range f.Metric {
			for j, l := range m.Label {
				if l.Value != first[name].Metric[i].Label[j].Value {
					t.Errorf("%s: label %s allocated again", name, l.GetName())
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no labels compared")
	}
	if _, err := parsePromIn([]byte("other_metric 1\n"), nil, in); err != nil {
		t.Fatal(err)
	}
	if _, err := parsePromIn([]byte("other_metric 2\n"), nil, in); err != nil {
		t.Fatal(err)
	}
	if len(in.cur)+len(in.prev) != 2 {
		t.Errorf("the interner kept %d strings, want the last two parses' 1 each", len(in.cur)+len(in.prev))
	}
}

// A warm parse allocates fewer than two objects a sample line (a series'
// dto.Metric and its value's holder): a line's family is looked up by its
// bytes (no string per line), whole counts go in a slab, and names and
// values are the last parse's. The vLLM capture: 1329 before, 697 after.
func TestSteadyParseAllocatesLessThanTwoALine(t *testing.T) {
	raw, err := os.ReadFile("testdata/vllm.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, l := range bytes.Split(raw, []byte("\n")) {
		if len(l) > 0 && l[0] != '#' {
			lines++
		}
	}
	in := newInterner()
	if _, ok := fastParseIn(raw, nil, in); !ok {
		t.Fatal("the fast parser fell back on the vLLM capture")
	}
	a := testing.AllocsPerRun(5, func() { fastParseIn(raw, nil, in) })
	t.Logf("%d sample lines, %.0f allocations a warm parse", lines, a)
	if a >= 2*float64(lines) {
		t.Errorf("a warm parse of %d sample lines allocates %.0f objects", lines, a)
	}
}
