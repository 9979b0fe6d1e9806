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
