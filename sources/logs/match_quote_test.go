package logs

import "testing"

// Logfmt quoted values (Ollama's slog lines: total_vram="0 B") are read whole
// and unquoted, however little of them the pattern's group covered.
func TestMatchLogfmtQuotedValues(t *testing.T) {
	m, err := NewMatcher([]Pattern{{ID: "kv", Regex: `msg=.*? v=(?P<v>\S+)(?:.*? n=(?P<n>\d+))?`}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, v, n string }{
		{`msg="x" v="0 B" n=4096`, "0 B", "4096"},
		{`msg="x" v="24.0 GiB"`, "24.0 GiB", ""},
		{`msg="x" v="say \"hi\" now" n=1`, `say "hi" now`, "1"},
		{`msg="x" v="tab\there"`, "tab\there", ""},
		{`msg="x" v=""`, "", ""},                           // empty quoted value: no field
		{`msg="x" v=plain n=2`, "plain", "2"},              // unquoted: as matched
		{`msg="x" v="cut off by the line end`, `"cut`, ""}, // no closing quote: as matched
		{`msg="x" v="bad \q escape"`, `bad \q escape`, ""}, // not Go-quotable: the raw inside
	} {
		got, ok := m.Match(c.line)
		if !ok {
			t.Fatalf("%q: no match", c.line)
		}
		if got.Fields["v"] != c.v || got.Fields["n"] != c.n {
			t.Errorf("%q: v=%q n=%q, want v=%q n=%q", c.line, got.Fields["v"], got.Fields["n"], c.v, c.n)
		}
	}
	// A quote not right after '=' is ordinary text.
	m2, _ := NewMatcher([]Pattern{{ID: "q", Regex: `said (?P<w>\S+)`}})
	if got, _ := m2.Match(`he said "hello world"`); got.Fields["w"] != `"hello` {
		t.Errorf("non-logfmt quote: %q", got.Fields["w"])
	}
}
